"""Whitewater physics (Ihmsen, Akinci, Gissler & Teschner 2012; docs/whitewater.md): the potentials, spray
in free flight, foam riding the surface, bubbles rising into foam, and the domain and colliders.

The liquid is synthetic (lattices written in code), so each test states the flow it asserts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from whitewater_frames import S, lattice, scene, write_cache

from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.whitewater.boundaries import Boundaries
from sph_addon.core.whitewater.potentials import clamp_normalise, potentials
from sph_addon.core.whitewater.scene_settings import whitewater_settings
from sph_addon.core.whitewater.state import WhitewaterState
from sph_addon.core.whitewater.step import Liquid, advance_frame

G = np.array([0.0, 0.0, -9.81])
RANGES = {"trapped_air": (5.0, 20.0), "wave_crest": (2.0, 8.0), "kinetic_energy": (5.0, 50.0)}


def _state(x, v, kind=0, life=10.0) -> WhitewaterState:
    x, v = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(v, float))
    m = len(x)
    return WhitewaterState(x.copy(), v.copy(), np.full(m, kind, np.uint8), np.zeros(m), np.full(m, life),
                           np.arange(m, dtype=np.uint32), m)


def _run(state, liquid_at, frames, data, boundaries=None):
    """Advance ``state`` from frame 1 over ``frames`` frames; ``liquid_at(f)`` = (x, v) of frame f."""
    settings = whitewater_settings(data)
    boundaries = boundaries or Boundaries(data, settings.spacing)
    for f in range(1, frames + 1):
        a, b = Liquid(f, *liquid_at(f)), Liquid(f + 1, *liquid_at(f + 1))
        state = advance_frame(state, a, b, settings, RANGES, boundaries)
    return state, settings


def test_trapped_air_of_an_approaching_pair():
    """Eq. 2 for two particles h/2 apart: approaching at ±1 m/s, |v_ij| = 2, v̂_ij·x̂_ij = -1, W̃ = 1/2, so
    I_ta = 2 (1 + 1) / 2 = 2 m/s each; receding, v̂_ij·x̂_ij = +1 gives 0. Exact but for round-off (1e-12)."""
    h = 0.1
    x = np.array([[0.0, 0, 0], [0.05, 0, 0]])
    approach = potentials(x, np.array([[1.0, 0, 0], [-1.0, 0, 0]]), h)
    recede = potentials(x, np.array([[-1.0, 0, 0], [1.0, 0, 0]]), h)
    assert approach[:, 0] == pytest.approx([2.0, 2.0], abs=1e-12)
    assert recede[:, 0] == pytest.approx([0.0, 0.0], abs=1e-12)
    assert approach[:, 2] == pytest.approx([0.5, 0.5])  # ½|v|², J/kg
    assert list(approach[:, 3]) == [1, 1]


def test_flat_surface_is_no_wave_crest_and_clamp():
    """A flat lattice slab moving up along its normal: every top particle's neighbours have its normal
    (1 - n̂_i·n̂_j = 0 for the top layer's own), so the crest potential stays far below the paper's τ_min of
    2 (measured max 1.3: the second layer's normals tilt at the slab's edges); Φ clamps to [0, 1]."""
    x = lattice((0, 0, 0), (0.5, 0.5, 0.2))
    v = np.tile([0.0, 0.0, 2.0], (len(x), 1))
    pot = potentials(x, v, 2 * S)
    centre = (np.abs(x[:, 0] - 0.25) < 0.1) & (np.abs(x[:, 1] - 0.25) < 0.1)
    assert pot[centre, 1].max() < 1e-9
    assert pot[:, 1].max() < 2.0
    assert pot[:, 0].max() == 0.0  # no relative motion, no trapped air
    assert list(clamp_normalise(np.array([0.0, 5.0, 12.5, 20.0, 99.0]), 5.0, 20.0)) == [0, 0, 0.5, 1, 1]


@pytest.mark.parametrize("drag", [0.0, 1.5])
def test_spray_in_free_flight(drag):
    """Spray away from any liquid follows x0 + v0 t + g t²/2 (drag 0) or the exact solution of
    dv/dt = g - k v (drag k = 1.5/s): the step is the closed form, so 10 frames in 1 to 64 substeps stay
    within 1e-6 m of it (measured 1e-15) whatever the substep count."""
    x0, v0 = np.array([0.0, 0.0, 10.0]), np.array([1.0, -2.0, 3.0])
    data = scene({"spray_drag": drag})
    empty = (np.zeros((0, 3)), np.zeros((0, 3)))
    state, settings = _run(_state(x0, v0), lambda f: empty, 10, data)
    t = 10 * settings.frame_time
    if drag == 0:
        want = x0 + v0 * t + 0.5 * G * t * t
    else:
        vt = G / drag
        want = x0 + vt * t + (v0 - vt) * (1 - math.exp(-drag * t)) / drag
    assert state.kind[0] == 0
    assert np.abs(state.x[0] - want).max() < 1e-6


def test_foam_rides_the_moving_surface():
    """A slab translating at u = (0.5, 0, 0.2) m/s carries foam laid on its top: the W̃-weighted liquid
    velocity is u exactly, so after 10 frames the foam has moved u t (to 1e-9 m), is still foam (6-20 liquid
    neighbours), sits within one spacing of the surface, and has aged t (only foam ages)."""
    base = lattice((0, 0, 0), (1.0, 1.0, 0.3))
    u = np.array([0.5, 0.0, 0.2])
    data = scene()
    dt = 1.0 / 30

    def liquid(f):
        return base + u * (f - 1) * dt, np.tile(u, (len(base), 1))

    top = base[:, 2].max()
    foam0 = np.array([[0.3, 0.4, top + 0.25 * S], [0.5, 0.5, top + 0.25 * S], [0.6, 0.3, top + 0.25 * S]])
    state, settings = _run(_state(foam0, np.zeros((3, 3)), kind=1), liquid, 10, data)
    t = 10 * settings.frame_time
    assert list(state.kind) == [1, 1, 1]
    assert np.abs(state.x - (foam0 + u * t)).max() < 1e-9
    surface = top + u[2] * t
    assert np.abs(state.x[:, 2] - surface).max() < S
    assert state.age == pytest.approx([t] * 3)


def test_bubbles_rise_and_turn_into_foam_at_the_surface():
    """Bubbles released 0.3 m deep in a pool at rest follow dv/dt = -k_b g - k_d v exactly (k_b = 2,
    k_d = 50/s): after 3 frames v_z = (k_b g / k_d)(1 - e^(-k_d t)) and the rise is
    (k_b g / k_d)(t - (1 - e^(-k_d t)) / k_d), to 1e-9 (measured 1e-16; the step is the closed form). They
    become foam where their liquid neighbours fall to 20 or fewer: after 1 s every one is foam, at rest,
    within one spacing of the top layer."""
    pool = lattice((0, 0, 0), (1.0, 1.0, 0.6))
    still = (pool, np.zeros_like(pool))
    top = pool[:, 2].max()
    start = np.array([[0.3, 0.5, top - 0.3], [0.62, 0.41, top - 0.28], [0.5, 0.7, top - 0.35]])
    state = _state(start, np.zeros((3, 3)), kind=2)
    mid, settings = _run(state, lambda f: still, 3, scene())
    t, k = 3 * settings.frame_time, settings.bubble_drag
    terminal = settings.bubble_buoyancy * 9.81 / k
    assert list(mid.kind) == [2, 2, 2]
    assert np.abs(mid.v[:, 2] - terminal * (1 - math.exp(-k * t))).max() < 1e-9
    rise = terminal * (t - (1 - math.exp(-k * t)) / k)
    assert np.abs(mid.x[:, 2] - start[:, 2] - rise).max() < 1e-9
    assert np.abs(mid.x[:, :2] - start[:, :2]).max() < 1e-12
    end, _ = _run(state, lambda f: still, 30, scene())
    assert list(end.kind) == [1, 1, 1]
    assert np.abs(end.x[:, 2] - top).max() < S
    assert np.abs(end.v).max() == 0.0


def test_nothing_ends_inside_a_collider_or_outside_the_domain():
    """Spray thrown at a solid box and out of the domain, bubbles rising under the box's bottom face: at
    every frame no particle is inside the box (its signed distance >= -1e-9 m, the push-out's round-off) or
    outside the domain; the bubbles end on the box's bottom face, the spray that hit it is gone."""
    pool = lattice((0, 0, 0), (1.0, 1.0, 0.6))
    still = (pool, np.zeros_like(pool))
    top = pool[:, 2].max()
    # A solid box whose bottom face is 0.1 m under the surface.
    box = {"type": "box", "size": [0.4, 0.4, 0.4], "position": [0.5, 0.5, top - 0.1 + 0.2]}
    data = scene(colliders=[box], domain={"min": [-0.5, -0.5, -0.5], "max": [1.5, 1.5, 2.0]})
    rng = np.random.default_rng(3)
    spray_x = np.tile([0.5, 0.5, 1.5], (200, 1)) + rng.normal(0, 0.02, (200, 3))
    spray_v = np.column_stack([rng.normal(0, 3, 200), rng.normal(0, 3, 200), rng.uniform(-8, 2, 200)])
    bubbles = np.array([[0.45, 0.5, top - 0.3], [0.55, 0.52, top - 0.25]])
    state = _state(np.vstack([spray_x, bubbles]), np.vstack([spray_v, np.zeros((2, 3))]))
    state.kind[200:] = 2
    settings = whitewater_settings(data)
    walls = Boundaries(data, settings.spacing)
    lo, hi = np.array(data["domain"]["min"]), np.array(data["domain"]["max"])
    centre, half = np.array(box["position"]), 0.2
    for f in range(1, 21):
        state = advance_frame(state, Liquid(f, *still), Liquid(f + 1, *still), settings, RANGES, walls)
        inside = np.all(np.abs(state.x - centre) < half - 1e-9, axis=1)
        assert not inside.any(), f"frame {f + 1}: {inside.sum()} particles inside the box"
        assert ((state.x >= lo) & (state.x <= hi)).all()
    kept = {int(i): k for i, k in zip(state.ids, state.x)}
    assert 200 in kept and 201 in kept, "the bubbles stay (pushed out, not removed)"
    assert kept[200][2] == pytest.approx(centre[2] - half, abs=1e-9)
    assert len(state) < 202


def test_a_dynamic_body_is_a_boundary_at_its_baked_poses(tmp_path):
    """A dynamic box the bake moved (its poses in bodies/bodies_####.json: sliding 1 cm per frame along x)
    holds back bubbles rising under it, as a static one does: at every frame none is inside the box at that
    frame's pose (to 1e-9 m), and both end on its bottom face. Without the poses (no cache given) the box is
    skipped by name and the bubbles rise through it."""
    pool = lattice((0, 0, 0), (1.0, 1.0, 0.6))
    still = (pool, np.zeros_like(pool))
    top = pool[:, 2].max()
    bottom = top - 0.1
    box = {"type": "box", "name": "crate", "size": [0.4, 0.4, 0.4], "position": [0.5, 0.5, bottom + 0.2],
           "dynamic": True}
    data = scene(colliders=[box])
    root = write_cache(tmp_path / "c", {f: still for f in range(1, 22)}, data)
    cache = CacheDir(root)

    def centre(f):
        return np.array([0.5 + 0.01 * (f - 1), 0.5, bottom + 0.2])

    for f in range(1, 22):
        cache.write_bodies(f, [{"name": "crate", "collider": 0, "location": centre(f).tolist(),
                                "rotation_quaternion": [1.0, 0.0, 0.0, 0.0], "center_of_mass": centre(f).tolist(),
                                "velocity": [0.3, 0.0, 0.0], "angular_velocity": [0.0, 0.0, 0.0]}])
    settings = whitewater_settings(data)
    start = np.array([[0.55, 0.5, top - 0.3], [0.62, 0.52, top - 0.25]])
    for walls, blocked in ((Boundaries(data, settings.spacing, cache), True),
                           (Boundaries(data, settings.spacing), False)):
        assert walls.skipped == ([] if blocked else ["crate"])
        state = _state(start, np.zeros((2, 3)), kind=2)
        entered = []
        for f in range(1, 21):
            state = advance_frame(state, Liquid(f, *still), Liquid(f + 1, *still), settings, RANGES, walls)
            if np.all(np.abs(state.x - centre(f + 1)) < 0.2 - 1e-9, axis=1).any():
                entered.append(f + 1)
        assert bool(entered) != blocked, entered
        if blocked:
            assert np.abs(state.x[:, 2] - bottom).max() < 1e-9
        else:
            assert (state.x[:, 2] > bottom + 0.05).all()
