"""The ``sph`` model (Desbrun & Cani 1996; the classic SPH liquid of Treuille's lecture) against physics.

The kernels against the slow reference written from the paper, momentum, the hydrostatic pool and
the dam break of Martin & Moyce at two spacings. Scenes are small for CI: the pool is a 0.2 m cube
of water in its tank, the dam break a slice 5 particles deep of a 0.2 m column.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import scene_dict
from test_water_physics import martin_moyce_slope, surge_front

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.reference.naive import brute_force_neighbors, smoothed_particle_accelerations

G = 9.81


def sph_sim(spacing, sources, colliders=(), materials=None, gravity=(0.0, 0.0, -G), fps=30, **simulation):
    """A scene of sph materials (default: one classic water named ``w``)."""
    materials = materials or [{"name": "w", "model": "sph", "preset": "classic_water"}]
    return Simulation(parse_scene(scene_dict(
        particle_spacing=spacing, fps=fps, frame_end=1000, materials=materials, sources=list(sources),
        colliders=list(colliders), simulation={"gravity": list(gravity), **simulation},
        domain={"min": [-5.0, -5.0, -5.0], "max": [5.0, 5.0, 5.0]})))


def test_kernels_match_the_slow_reference():
    """Densities, pressures and accelerations of a jittered cloud of two sph materials (one cohesive, one
    liquid) beside particles of another model, against the brute-force transcription of eqs. 3-7 with
    Monaghan's artificial pressure and Morris' viscosity (tests/reference/naive.py), to 1e-12."""
    from sph_addon.core.terms import density_pressure_desbrun1996_kernels as k
    from sph_addon.core.terms.density_pressure_desbrun1996 import lattice_sums

    rng = np.random.default_rng(7)
    s, h = 0.02, 0.04
    g = np.arange(5) * s
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3) + rng.normal(0, 0.2 * s, (125, 3))
    v = rng.normal(0, 0.5, x.shape)
    mat = rng.integers(0, 3, len(x)).astype(np.uint8)  # 0 water, 1 putty, 2 another model's
    owned = np.array([True, True, False])
    rho0 = np.array([1000.0, 1800.0, 1200.0])
    mass = rho0 * s**3
    c = np.array([20.0, 3.0, 0.0])
    alpha = np.array([0.05, 1.0, 0.0])
    nu = np.array([1e-3, 0.0, 0.0])
    tension = np.array([0.0, 3000.0, 0.0])
    full = lattice_sums(s, h)[0]
    lists = brute_force_neighbors(x, h)
    nbr = np.zeros((len(x), max(map(len, lists))), np.int32)
    count = np.array([len(r) for r in lists], np.int32)
    for i, r in enumerate(lists):
        nbr[i, :len(r)] = r
    rows = np.flatnonzero(owned[mat]).astype(np.int64)
    rho = np.full(len(x), np.nan)
    p = np.zeros(len(x))
    none = np.zeros((0, 4))  # no walls: the reference has none
    edges = np.zeros((0, 2), np.int64)
    k.densities(x, mat, nbr, count, rows, mass, ~owned, h, 1.0 / full, none, np.zeros(3), np.zeros(2), 1.0, edges,
                np.zeros((2, 2)), 1.0, rho)
    k.pressures(rows, mat, rho, rho0, c**2, tension, p)
    q = s / h
    acc, wall = np.empty((len(rows), 3)), np.empty((len(rows), 3))
    k.pair_accelerations(x, v, mat, nbr, count, rows, mass, rho, p, owned, ~owned, c, alpha, nu, h,
                         1.0 / (6.0 * (q**3 - q**2) + 1.0 if q <= 0.5 else 2.0 * (1.0 - q) ** 3), none, np.zeros(3),
                         np.zeros(2), 1.0, edges, np.zeros((2, 2)), 1.0, np.zeros(len(x)), acc, wall)
    ref_rho, ref_p, ref_acc = smoothed_particle_accelerations(x, v, mat, mass, rho0, c, alpha, nu, tension, owned,
                                                              h, s, full)
    np.testing.assert_allclose(rho[rows], ref_rho[rows], rtol=1e-12)
    np.testing.assert_allclose(p[rows], ref_p[rows], rtol=1e-10, atol=1e-9)
    assert (p[rows] < 0).any() and (p[rows] > 0).any()  # both sides of the state equation are exercised
    np.testing.assert_allclose(acc, ref_acc[rows], rtol=1e-10, atol=1e-9 * np.abs(ref_acc).max())


def test_a_lattice_at_rest_in_a_tank_stays_at_rest():
    """Without gravity, a cube of water filling a tank's corner on the lattice (its first layers half a
    spacing from the floor and two walls) is at ρ0 everywhere, walls included: it does not move
    (measured: mean ½v² 5e-10 J/kg after 3 frames; a wall share wrong by a lattice layer moved it at
    3 cm/s)."""
    sim = sph_sim(0.02, [{"type": "box", "material": "w", "min": [0, 0, 0], "max": [0.2, 0.2, 0.2]}],
                  [{"type": "box_container", "size": [0.2, 0.2, 0.5], "position": [0.1, 0.1, 0.25]}],
                  gravity=(0.0, 0.0, 0.0))
    for _ in range(3):
        sim.advance_frame()
    assert 0.5 * (sim.state.v**2).sum(1).mean() < 1e-8


def test_water_on_a_ball_flows_round_it():
    """A ball is not flat: its wall share comes from its signed distance (the curved walls' path). A
    block of water dropped on a 6 cm ball on the floor flows round it to the floor; none of it is left
    inside the ball, none is lost."""
    sim = sph_sim(0.01, [{"type": "box", "material": "w", "min": [-0.04, -0.04, 0.1], "max": [0.04, 0.04, 0.14]}],
                  [{"type": "box_container", "size": [0.4, 0.4, 0.4], "position": [0, 0, 0.2]},
                   {"type": "sphere", "radius": 0.06, "position": [0, 0, 0.0]}])
    n0 = sim.state.n
    for _ in range(15):
        sim.advance_frame()
    x = sim.state.x
    assert sim.state.n == n0
    assert np.linalg.norm(x, axis=1).min() > 0.06 - 0.01
    assert np.median(x[:, 2]) < 0.05, np.median(x[:, 2])


def _free_cloud(time_steps):
    """Two sph materials in a jittered block, no gravity, no colliders, random velocities: water and a
    putty of c = 3 m/s, whose particles step at a level two below the water's."""
    s = 0.02
    sim = sph_sim(s, [{"type": "box", "material": "w", "min": [0, 0, 0], "max": [0.1, 0.1, 0.1]},
                      {"type": "box", "material": "p", "min": [0.1, 0, 0], "max": [0.2, 0.1, 0.1]}],
                  materials=[{"name": "w", "model": "sph", "preset": "classic_water"},
                             {"name": "p", "model": "sph", "preset": "putty", "params": {"speed_of_sound": 3.0}}],
                  gravity=(0.0, 0.0, 0.0), time_steps=time_steps)
    rng = np.random.default_rng(3)
    sim.state.x[:] += rng.normal(0, 0.1 * s, sim.state.x.shape)
    sim.state.v[:] = rng.normal(0, 0.3, sim.state.v.shape)
    return sim


def _momentum(sim):
    m = sim._particle_mass[sim.state.material][:, None]
    return (m * sim.state.v).sum(0), float((m * np.abs(sim.state.v)).sum())


@pytest.mark.parametrize("time_steps, bound", [("global", 1e-9), ("individual", 1e-2)])
def test_momentum(time_steps, bound):
    """Every pair force is equal and opposite and the putty's yield solve conserves momentum: evaluated
    together (one level for all, ``global``), the total momentum of a free cloud keeps to 1e-9 of
    Σ m|v| over 5 frames (measured 2e-16). With individual steps a pair's forces act at each particle's
    own step, so momentum is exchanged only approximately; the bound is the measured drift with a
    margin (the levels are checked to differ): 7e-4 before the putty had a yield stress, 3.2e-3 with
    it (the solve at every micro-step changes the velocities the artificial viscosity of pairs at
    different levels sees)."""
    sim = _free_cloud(time_steps)
    p0, scale = _momentum(sim)
    levels = set()
    for _ in range(5):
        st = sim.advance_frame()
        levels.add(len([c for c in st.extra["time_levels"] if c]))
    p1, _ = _momentum(sim)
    assert np.abs(p1 - p0).max() < bound * scale, (np.abs(p1 - p0).max() / scale)
    if time_steps == "individual":
        assert max(levels) >= 2


@pytest.fixture(scope="module")
def pools():
    """The 0.2 m cube of classic water in its tank after 2 s, at 10 and 12 particles across."""
    out = {}
    for s in (0.02, 0.2 / 12):
        sim = sph_sim(s, [{"type": "box", "material": "w", "min": [0, 0, 0], "max": [0.2, 0.2, 0.2]}],
                      [{"type": "box_container", "size": [0.2, 0.2, 0.5], "position": [0.1, 0.1, 0.25]}])
        speeds = [np.linalg.norm(sim.state.v, axis=1) for _ in range(60) if sim.advance_frame()]
        out[s] = (sim, speeds)
    return out


@pytest.mark.slow
def test_a_pool_settles_to_its_depth_and_rests(pools):
    """Hydrostatics: twice the mean height of the particles (the depth of a uniform column) is within
    1 % of the filled 0.2 m after 2 s at both spacings (the liquid compresses by g H / (2 c²) = 0.25 %
    on average, and the free surface's particles, short of neighbours, sink by a fraction of a
    spacing), and the mean speed is under 1 cm/s. Measured at 10 and 12 particles across: depth
    -0.76 % and -0.84 %, mean speed 0.76 and 0.32 cm/s; the fastest particle 8.0 and 1.7 cm/s (the
    simple cubic fill rearranges as it takes its weight, and it is still settling): held under
    10 cm/s here, the target "under 1 cm/s" is met by the mean, not by every particle."""
    for s, (sim, speeds) in pools.items():
        depth = 2 * sim.state.x[:, 2].mean()
        assert abs(depth / 0.2 - 1) < 0.01, (s, depth)
        assert speeds[-1].mean() < 0.01, (s, speeds[-1].mean())
        assert speeds[-1].max() < 0.1, (s, speeds[-1].max())


def _dam_break(n: int, a: float = 0.2) -> float:
    """Front slope dZ/dT of the 2:1 column (a wide, 2a high, a/spacing = n) over 1 ≤ T ≤ 3.4."""
    s = a / n
    depth = 5 * s
    sim = sph_sim(s, [{"type": "box", "material": "w", "min": [0, 0, 0], "max": [a, depth, 2 * a]}],
                  [{"type": "box_container", "size": [4 * a, depth, 3 * a], "position": [2 * a, depth / 2, 1.5 * a]}],
                  materials=[{"name": "w", "model": "sph", "preset": "classic_water",
                              "params": {"speed_of_sound": 30.0}}], fps=60)
    t, z = [], []
    for f in range(22):
        sim.advance_frame()
        t.append((f + 1) / 60 * np.sqrt(2 * G / a))
        z.append(surge_front(sim.state.x, s) / a)
    t, z = np.array(t), np.array(z)
    sel = (t >= 1.0) & (t <= 3.4)
    return float(np.polyfit(t[sel], z[sel], 1)[0])


@pytest.mark.slow
@pytest.mark.parametrize("n", [15, 20])
def test_dam_break_front_follows_martin_and_moyce(n):
    """The surge front's slope dZ/dT within 5 % of Martin & Moyce's (1952) at a/spacing = 15 and 20
    (c = 30 m/s, ten times the surge's speed; measured -4.1 % and -4.0 %: the front runs a little
    slow, as weakly compressible SPH's does, from the artificial viscosity and the first layer's
    contact with the floor)."""
    slope = _dam_break(n)
    assert abs(slope / martin_moyce_slope() - 1) < 0.05, slope


def test_a_liquid_finer_than_the_substep_cap_is_not_refused():
    """Classic water at 5 mm needs 150 of its calm steps a frame, over the default cap of 64 substeps:
    the individual levels cut each substep further, so the bake is not refused (the viscoelastic
    model's stiff liquids still are: tests/core/test_bad_scenes.py)."""
    from sph_addon.core.scene.preflight import preflight

    scene = parse_scene(scene_dict(particle_spacing=0.005, materials=[{"name": "w", "model": "sph",
                                                                        "preset": "classic_water"}],
                                   sources=[{"type": "box", "material": "w", "min": [0, 0, 0],
                                             "max": [0.05, 0.05, 0.05]}]))
    assert scene.frame_time / (4 * 0.3 * 0.005 / (20.0 * 1.03)) > scene.simulation["max_substeps"]
    preflight(scene)
