"""Small scenes of the elastic model (Becker 2009) for its validation tests: a body from boxes, the
elastic forces of any positions straight from the kernels, particles held by the test (a clamp or a
grip), and the rigid part of a body's motion."""

from __future__ import annotations

import numpy as np

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.conftest import scene_dict

TERM = "elasticity_becker2009"


def elastic_sim(boxes, spacing: float, params: dict, *, gravity=(0.0, 0.0, -9.81), colliders=(), fps: int = 30,
                substeps: int = 0, frames: int = 1000, **simulation) -> Simulation:
    """One elastic body made of the boxes ``[(min, max), ...]`` (one source each: separate bodies), in a
    domain large enough never to remove a particle. ``substeps`` 0 lets the policy choose."""
    sim = {"gravity": list(gravity), "substeps": substeps, **simulation}
    return Simulation(parse_scene(scene_dict(
        particle_spacing=spacing, fps=fps, frame_end=frames + 1, simulation=sim,
        materials=[{"name": "solid", "model": "elastic", "params": params}],
        sources=[{"type": "box", "material": "solid", "min": list(lo), "max": list(hi)} for lo, hi in boxes],
        colliders=list(colliders), domain={"min": [-5.0, -5.0, -5.0], "max": [5.0, 5.0, 5.0]})))


def by_id(sim: Simulation, values: np.ndarray) -> np.ndarray:
    """Rows of a per-particle array in stable-id order (the neighbour search permutes the particles)."""
    out = np.empty_like(values)
    out[sim.state.ids] = values
    return out


def bonded(sim: Simulation) -> None:
    """Give every particle its rest state (positions as built, at rest): one substep of 1 ns with
    velocities and gravity off. Set the velocities after it."""
    g = sim.gravity.copy()
    sim.gravity[:] = 0.0
    sim.state.v[:] = 0.0
    sim.step(1e-9)
    sim.gravity[:] = g


def elastic_forces(sim: Simulation, x: np.ndarray) -> np.ndarray:
    """The elastic forces (N) at positions ``x`` (the state's order), rotations found afresh from the
    identity, as ``ElasticityBecker2009.apply`` computes them."""
    from sph_addon.core.terms import elasticity_becker2009_kernels as k
    from sph_addon.core.terms.elasticity_becker2009 import rest_pairs

    term = sim.models[0].term(TERM)
    st = sim.state
    a = st.arrays
    n = st.n
    index = np.full(st.next_id, -1, np.int64)
    index[st.ids] = np.arange(n)
    rot = np.tile(np.eye(3).ravel(), (n, 1))
    f, m = np.zeros((n, 9)), np.zeros((n, 9))
    out = np.zeros((n, 3))
    rest = a["rest_position"]
    nb, g, grev, kap, krev, kmom, null = rest_pairs(rest, a["rest_partner"], index, st.material, term.solid,
                                                    term.hourglass, sim.h)
    k.deformation(x, rest, nb, g, kap, kmom, null, st.material, term.solid, term.mu, term.lam, term.green, term.vol,
                  False, rot, f, f, m)
    k.forces(x, rest, nb, g, grev, kap, krev, st.material, term.solid, np.ones(n), f, m, term.mass, False,
             out)
    return out


def hold(sim: Simulation, ids: np.ndarray, place) -> None:
    """Wrap ``sim.step`` so that after every substep the particles ``ids`` sit at ``place(t)`` ((len(ids), 3)
    positions at the substep's end time t, s) with the velocity of that motion: a clamp or a grip
    imposed between substeps (the solve itself sees them free)."""
    step = sim.step
    ids = np.asarray(ids)

    def held_step(dt: float) -> None:
        step(dt)
        st = sim.state
        index = np.full(st.next_id, -1, np.int64)
        index[st.ids] = np.arange(st.n)
        rows = index[ids]
        now = place(st.time)
        st.v[rows] = (now - place(st.time - dt)) / dt
        st.x[rows] = now

    sim.step = held_step


def pin(sim: Simulation, ids, velocity=None) -> None:
    """Move the particles ``ids`` with ``velocity(t)`` ((3,) m/s at the substep's start t; None: hold them
    still) inside the elastic solve: their three velocity components are prescribed in its filtered
    conjugate gradients, beside the collider contacts it holds (``ElasticityBecker2009._held``). A clamp
    or grip that the solve sees: resetting the particles after every substep instead (``hold``) let a
    clamped beam swing down like a pendulum, as the implicit step moves them with the rest of a stiff
    body and only then are they put back."""
    term = sim.models[0].term(TERM)
    own = term._held
    ids = np.asarray(ids)

    def held(ctx, idx):
        idx = np.repeat(ctx.index_of_id()[ids], 3)
        normal = np.tile(np.eye(3), (len(ids), 1))
        target = np.tile(velocity(ctx.time) if velocity is not None else np.zeros(3), len(ids))
        both_ways = np.zeros(len(idx), bool)  # a grip pulls as well as pushes
        others = own(ctx, idx)
        if others is not None:
            return tuple(np.concatenate(p) for p in zip((idx, normal, target, both_ways), others))
        return idx, normal, target, both_ways

    term._held = held


def rigid_fit(rest: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The rotation that best maps the centred rest positions onto the centred current ones (Kabsch)."""
    a = (x - x.mean(axis=0)).T @ (rest - rest.mean(axis=0))
    u, _, vt = np.linalg.svd(a)
    d = np.sign(np.linalg.det(u @ vt))
    return u @ np.diag([1.0, 1.0, d]) @ vt


def rotation(axis, angle: float) -> np.ndarray:
    """The rotation matrix of ``angle`` rad about ``axis`` (Rodrigues)."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * kx + (1.0 - np.cos(angle)) * kx @ kx
