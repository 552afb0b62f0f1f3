"""Water in physical units against physics: the dam break of Martin & Moyce, hydrostatics, spreading.

The water preset's constants are derived from the spacing (``lattice``), so the same scene
at several spacings must give the same macroscopic result. Scenes are kept small for CI: the dam
break runs in a tank 5 particles deep in y (a quasi-2D slice of the 2:1 column, side walls without
friction), the pool in a 0.3 m square column.
"""

import json

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

G = 9.81
# Martin & Moyce (1952), Phil. Trans. R. Soc. A 244, 312-324, Figure 3, n² = 2, a = 2.25 in:
# (T = t sqrt(2g/a), Z = z/a) as digitised in the literature.
MARTIN_MOYCE = np.array([[0.832, 1.217], [1.219, 1.474], [1.997, 2.292], [2.547, 2.995], [3.345, 4.134],
                         [4.034, 4.944]])


def martin_moyce_slope() -> float:
    """Least-squares slope dZ/dT of the data over 1.0 <= T <= 3.4 (the surge, after the collapse)."""
    sel = (MARTIN_MOYCE[:, 0] >= 1.0) & (MARTIN_MOYCE[:, 0] <= 3.4)
    return float(np.polyfit(MARTIN_MOYCE[sel, 0], MARTIN_MOYCE[sel, 1], 1)[0])


def surge_front(x: np.ndarray, spacing: float) -> float:
    """Leading edge of the connected liquid along x from the back wall (x = 0): the far edge of the
    first run of occupied bins of one spacing, so droplets thrown ahead do not count."""
    bins = np.bincount(np.clip((x[:, 0] / spacing).astype(int), 0, None))
    empty = np.flatnonzero(bins == 0)
    return (empty[0] if len(empty) else len(bins)) * spacing


def _dam_break(spacing: float, a: float = 1.0, frames: int = 21) -> tuple[np.ndarray, np.ndarray]:
    """The 2:1 column (a wide, 2a high) released in a 4a tank; returns (T, Z) per frame."""
    depth = 5 * spacing
    sim = Simulation(parse_scene(scene_dict(
        particle_spacing=spacing, fps=30, frame_end=1 + frames,
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [a, depth, 2 * a]}],
        colliders=[{"type": "box_container", "size": [4 * a, depth, 3 * a],
                    "position": [2 * a, depth / 2, 1.5 * a]}])))
    t, z = [], []
    for f in range(frames):
        sim.advance_frame()
        t.append((f + 1) / 30 * np.sqrt(2 * G / a))
        z.append(surge_front(sim.state.x, spacing) / a)
    return np.array(t), np.array(z)


@pytest.fixture(scope="module")
def dam_breaks() -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The same column at a/spacing = 10, 15 and 20 (spacings s, s/1.5, s/2)."""
    return {n: _dam_break(1.0 / n) for n in (10, 15, 20)}


def _slope(t: np.ndarray, z: np.ndarray) -> float:
    sel = (t >= 1.2) & (t <= 3.0)
    return float(np.polyfit(t[sel], z[sel], 1)[0])


@pytest.mark.slow
def test_dam_break_front_follows_martin_and_moyce(dam_breaks):
    """Front slope dZ/dT over 1.2 <= T <= 3 within 5 % of Martin & Moyce at a/spacing = 20 and 10 %
    at 10 (the required tolerances; measured on this slice of a 1 m column: -0.1 % at 10 and +3.2 % at
    20, +4.0 % before the grid's ghost-fluid surface; the full-depth sample scene: docs/materials.md)."""
    ref = martin_moyce_slope()
    errors = {n: _slope(*dam_breaks[n]) / ref - 1 for n in dam_breaks}
    assert abs(errors[10]) < 0.10, errors
    assert abs(errors[20]) < 0.05, errors


@pytest.mark.slow
def test_dam_break_front_is_the_same_at_three_spacings(dam_breaks):
    """Resolution independence: the front's slope over 1.2 <= T <= 3 at a/spacing = 10 and 15 within
    5 % of the slope at 20 (measured -0.1 / +2.5 / +3.2 % of Martin & Moyce's: -3.1 and -0.6 % of the
    slope at 20), and at every frame from T = 1.2 on the front within 8 % of the front at 20: one
    coarse spacing is 10 % of a and the front is binned at it, so two bins at Z = 2.5 (measured 5.0 %;
    7.7 % with the grid's surface a cell out; 5 % before the grid projection)."""
    t, z20 = dam_breaks[20]
    sel = t >= 1.2
    for n in (10, 15):
        z = dam_breaks[n][1]
        assert abs(_slope(t, z) / _slope(t, z20) - 1) < 0.05, (n, _slope(t, z), _slope(t, z20))
        assert np.all(np.abs(z[sel] / z20[sel] - 1) < 0.08), (n, z[sel], z20[sel])


def _pool(spacing: float = 0.025, depth: float = 0.5) -> Simulation:
    """A pool of water ``depth`` m deep in a closed 0.3 m square column 1 m high, filled at rest."""
    return Simulation(parse_scene(scene_dict(
        particle_spacing=spacing, fps=30, frame_end=100,
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, depth]}],
        colliders=[{"type": "box_container", "size": [0.3, 0.3, 1.0], "position": [0.15, 0.15, 0.5]}])))


@pytest.fixture(scope="module")
def pool() -> Simulation:
    """A 0.5 m deep pool in a 0.3 m square column, 2 s after it was filled (s = 0.025 m)."""
    sim = _pool()
    sim.stats = [sim.advance_frame() for _ in range(60)]
    return sim


@pytest.mark.slow
def test_pool_density_error_is_within_the_target_at_every_depth(pool):
    """The relaxation stops only below the material's density error (1 %), so every 5 cm band of the
    pool is within it on average, and the error reported per frame never exceeds it. Since the grid
    projection carries the column's weight the pool is uniform: every band within 0.2 % of the rest
    density (measured 1.0005-1.0011; before it the bands rose with depth to the 1 % target, the
    relaxation's compression standing in for the hydrostatic pressure; water's own over 0.5 m is
    2e-6), and the layer on the floor holds the lattice's 144 particles (the old code packed 31 %
    more there)."""
    x = pool.state.x
    model = pool.models[0].term("relaxation_clavet2005")
    # Clavet's density's compression, as density_error states it: the near density's over its ratio.
    ratio = 1 + (model.rho_near / model.rho0_near[0] - 1) / model.near_ratio
    assert all(s.extra["density_error_mean"] <= 0.01 for s in pool.stats)
    assert not any(s.extra["density_capped"] for s in pool.stats)
    inner = np.all((x[:, :2] > 0.05) & (x[:, :2] < 0.25), axis=1)
    bands = [ratio[inner & (x[:, 2] >= lo) & (x[:, 2] < lo + 0.05)].mean() for lo in np.arange(0.0, 0.4, 0.05)]
    assert all(abs(b - 1) < 0.002 for b in bands), bands
    floor_layer = np.count_nonzero(x[:, 2] < 0.025)
    assert abs(floor_layer / 144 - 1) < 0.02, floor_layer


@pytest.mark.slow
def test_the_first_frame_of_a_pool_is_not_a_free_fall(pool):
    """Before any substep was measured the substep policy estimated one relaxation pass whatever the
    substep, so the pool's first frame took the fewest substeps (2): the column fell, the next frame
    needed 87 passes a substep and threw particles up at 1.01 m/s. The first frame's passes are now
    estimated from gravity's compression per substep (measured: 6 substeps, fastest particle
    0.36 m/s over the first second, 0.38 once the passes were accelerated, 0.46 since frames are
    re-planned; 0.153 since the walls mirror the liquid: what remained was the layers
    along the walls repacking, CHANGELOG.md, method notes, "The first frames"; 0.060 since the grid projection
    holds the column from the first substep; 0.0045 since its surface lies where the cells' content
    crosses 1/2, read over a full cell's beside the walls)."""
    assert pool.stats[0].substeps >= 5, [s.substeps for s in pool.stats[:3]]
    assert max(s.max_speed for s in pool.stats[:10]) < 0.015, [round(s.max_speed, 4) for s in pool.stats[:10]]


def test_the_substep_policy_keeps_the_last_count_when_nearly_as_cheap():
    """Costs that favour 5 substeps by 5 % keep a frame at 4 (within the 10 % margin); by 20 %, it moves."""
    from sph_addon.core.world.integrators import SubstepPolicy

    class Model:
        def __init__(self, saving):
            self.saving = saving

        def max_dt(self, world):
            return 1.0

        def work_per_substep(self, dt):
            # A frame of S substeps costs S (1 + this): 1 at 4 substeps, 1 - saving at 5, 2 otherwise.
            substeps = round(1 / 30 / dt)
            return {4: 1.0, 5: 1.0 - self.saving}.get(substeps, 2.0) / substeps - 1.0

    policy = SubstepPolicy(0, 1.0, 4, 64)
    assert policy.choose(1 / 30, 0.0, 0.025, [Model(0.05)], None) == 5, "no previous frame: the cheapest"
    assert policy.choose(1 / 30, 0.0, 0.025, [Model(0.05)], None, previous=4) == 4
    assert policy.choose(1 / 30, 0.0, 0.025, [Model(0.20)], None, previous=4) == 5
    assert policy.choose(1 / 30, 0.0, 0.025, [Model(0.05)], None, previous=3) == 5, "below the minimum: not kept"


def test_a_substep_far_dearer_than_planned_has_the_rest_of_its_frame_planned_again():
    """The plan rests on the last frame's passes; when a substep measures more than REPLAN_COST times
    the plan's estimate (a collapse starting: the million-particle dam break's second frame took 3
    substeps of 73 passes), the rest of the frame is planned again from that measurement. Here the
    model is made to report 60 passes after the first substep of the second frame: that frame takes
    more, shorter substeps and still ends exactly one frame later; no other frame is planned twice."""
    sim = Simulation(parse_scene(scene_dict(
        particle_spacing=0.025, fps=30, frame_end=10,
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, 0.25]}],
        colliders=[{"type": "box_container", "size": [0.3, 0.3, 1.0], "position": [0.15, 0.15, 0.5]}])))
    model = sim.models[0].term("relaxation_clavet2005")
    target = sim.frame + 2
    planned, steps = [], []
    choose, step = sim.substeps_for_frame, sim.step

    def recording_choose(span=None):
        n = choose(span)
        planned.append((sim.frame + 1, span, n))
        return n

    def dear_step(dt):
        step(dt)
        steps.append((sim.frame + 1, dt))
        if [f for f, _ in steps].count(target) == 1 and steps[-1][0] == target:
            model.last_iterations = 60  # as if the relaxation had needed 60 passes

    sim.substeps_for_frame, sim.step = recording_choose, dear_step
    times, counts = [sim.state.time], {}
    for frame in range(target - 1, target + 3):
        counts[frame] = sim.advance_frame().substeps
        times.append(sim.state.time)
    first = {f: n for f, span, n in planned if span is None}
    again = [(f, span, n) for f, span, n in planned if span is not None]
    assert [f for f, _, _ in again] == [target], again
    assert counts[target] > first[target] and counts[target] == 1 + again[0][2], (counts, first, again)
    assert all(counts[f] == first[f] for f in counts if f != target), (counts, first)
    dts = [dt for f, dt in steps if f == target]
    assert dts[1] < dts[0] and np.allclose(dts[1:], dts[1]), dts
    np.testing.assert_allclose(np.diff(times), 1 / 30, rtol=1e-12)


def test_a_resumed_bake_keeps_the_substeps_the_straight_bake_keeps():
    """The last frame's substep count is state (the policy keeps it when nearly as cheap): a bake
    resumed from a checkpoint takes the same counts and reaches the same positions as the straight one."""
    def pool():
        return Simulation(parse_scene(scene_dict(
            particle_spacing=0.025, fps=30, frame_end=100,
            sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, 0.25]}],
            colliders=[{"type": "box_container", "size": [0.3, 0.3, 1.0], "position": [0.15, 0.15, 0.5]}])))

    straight = pool()
    counts = [straight.advance_frame().substeps for _ in range(12)]
    first = pool()
    for _ in range(5):
        first.advance_frame()
    arrays, meta = first.checkpoint()
    resumed = pool()
    resumed.restore({k: v.copy() for k, v in arrays.items()}, json.loads(json.dumps(meta)))
    # Frame 6 is one where the cheapest count (4) differs from the one kept (5): measured.
    assert counts[5:] == [resumed.advance_frame().substeps for _ in range(7)]
    np.testing.assert_array_equal(resumed.state.x, straight.state.x)


@pytest.mark.slow
def test_a_shallow_pool_keeps_its_substeps_and_calms_down():
    """A 0.25 m pool alternated 4 and 5 substeps every frame (the pass count the cost estimate feeds on
    depends on the count chosen), and the relaxation's equilibrium depends on the substep, so the whole
    column breathed: 90th percentile speed 2.9 cm/s at 2 s, 2.8 at 4 s. With the policy's margin the
    count settles (measured with plain passes: 5 from frame 3 on; with accelerated passes, 6 for the
    first 13 frames, whose count the first frame's estimate set, then 3 for good) and the 90th
    percentile at 2 s is 1.0 cm/s (0.6 at 4 s with accelerated passes)."""
    sim = _pool(depth=0.25)
    counts = [sim.advance_frame().substeps for _ in range(60)]
    assert len(set(counts[20:])) == 1, counts
    assert sum(a != b for a, b in zip(counts, counts[1:])) <= 1, counts
    assert np.percentile(np.linalg.norm(sim.state.v, axis=1), 90) < 0.015


@pytest.mark.slow
def test_pool_keeps_its_volume_and_calms_down(pool):
    """The interior's number density is within 1 % of the filled lattice's, the liquid's depth (twice
    its mean height, exactly the filled 0.5 m at the start) within 0.5 % (measured +0.05 % since the
    grid projection carries the column's weight; -1.15 % before it, -3.99 % before the walls mirrored
    the liquid; the requirement is 1 %), the three layers along the side walls within 1 % of the
    lattice's counts (1.000 / 1.000 / 1.000; 1.061 / 1.065 / 0.970 once: CHANGELOG.md, method notes, "The wall's
    missing turn"), and 2 s after filling 90 % of the particles move slower than 0.2 cm/s (measured
    0.09; 0.22 with the grid's surface at the first cell without particles, 0.93 before the grid
    projection) and every particle slower than 1 cm/s, the required bound (measured 0.46; 2.1 with
    the surface a cell out; SPlisHSPlasH's DFSPH on this pool: 4.8 cm/s)."""
    x, v = pool.state.x, pool.state.v
    inner = np.all((x[:, :2] > 0.05) & (x[:, :2] < 0.25), axis=1) & (x[:, 2] > 0.05) & (x[:, 2] < 0.40)
    number_density = inner.sum() * 0.025**3 / (0.2 * 0.2 * 0.35)
    assert abs(number_density - 1) < 0.01, number_density
    assert abs(2 * x[:, 2].mean() / 0.5 - 1) < 0.005, 2 * x[:, 2].mean()
    wall = np.minimum.reduce([x[:, 0], 0.3 - x[:, 0], x[:, 1], 0.3 - x[:, 1]])
    mid = (x[:, 2] > 0.1) & (x[:, 2] < 0.4)
    layers = [np.count_nonzero(mid & (wall >= k * 0.025) & (wall < (k + 1) * 0.025)) / (4 * (11 - 2 * k) * 12)
              for k in range(3)]
    assert all(abs(r - 1) < 0.01 for r in layers), layers
    speed = np.linalg.norm(v, axis=1)
    assert np.percentile(speed, 90) < 0.002 and speed.max() < 0.01, (np.percentile(speed, 90), speed.max())
    assert pool.state.n == 2880 and x[:, :2].min() >= 0 and x[:, :2].max() <= 0.3


@pytest.mark.slow
def test_pool_depth_is_the_same_at_a_finer_spacing(pool):
    """Resolution independence of the hydrostatics: the same pool at s / 1.5 (9,720 particles), 1 s
    after filling, keeps its depth as at s (twice the mean height: measured +0.02 % at s / 1.5 and
    +0.05 % at s since the grid projection; before it -1.24 % and -1.16 %: CHANGELOG.md, method notes), within
    0.2 points of it and within 0.5 % of the filled 0.5 m; every frame's mean density error within the
    1 % target without reaching the cap; the first second's fastest particle under 3 cm/s
    (measured 1.06; 4.0 with the grid's surface a cell out, 18 before the projection)."""
    sim = _pool(spacing=0.025 / 1.5)
    stats = [sim.advance_frame() for _ in range(30)]
    depth = 2 * sim.state.x[:, 2].mean() / 0.5 - 1
    coarse = 2 * pool.state.x[:, 2].mean() / 0.5 - 1
    assert sim.state.n == 9720
    assert abs(depth) < 0.005 and abs(depth - coarse) < 0.002, (depth, coarse)
    assert all(st.extra["density_error_mean"] <= 0.01 and not st.extra["density_capped"] for st in stats)
    assert max(st.max_speed for st in stats) < 0.03, [round(st.max_speed, 4) for st in stats]


@pytest.mark.slow
@pytest.mark.parametrize("spacing", [0.025, 0.025 / 1.5])
def test_a_resting_pool_stays_under_1_cm_s_from_2_s_to_4_s(spacing):
    """The target "speed below 1 cm/s everywhere after 2 s", at two spacings: no particle of the
    0.5 m pool moves faster than 1 cm/s at the end of any frame from 2 s to 4 s (measured 0.47 and
    0.48 cm/s; at s / 2, by ``scripts/benchmarks/pool_at_rest.py --spacing 0.0125``, 0.46). Before the
    grid's surface lay where the cells' content crosses 1/2, a surface particle that
    rose into the cell above kicked its neighbours sideways (bursts of 1.4-2.1 cm/s), and the raw
    content beside the walls pulled liquid up them (3 cm/s at s / 2)."""
    sim = _pool(spacing=spacing)
    speeds = [sim.advance_frame().max_speed for _ in range(120)]
    assert max(speeds[59:]) < 0.01, [round(v, 4) for v in speeds[59:]]


@pytest.mark.slow
def test_without_surface_tension_a_cube_spreads_to_a_film():
    """γ = 0: no cohesion beyond incompressibility, so a 10 cm cube of water dropped on a wide floor
    spreads until at most two particle layers remain (95 % of the particles within two spacings of
    the floor after 1 s)."""
    s = 0.01
    sim = Simulation(parse_scene(scene_dict(
        particle_spacing=s, fps=30, frame_end=40,
        materials=[{"name": "water", "preset": "water", "params": {"surface_tension": 0.0}}],
        sources=[{"type": "box", "material": "water", "min": [-0.05, -0.05, 0.0], "max": [0.05, 0.05, 0.1]}],
        colliders=[{"type": "box_container", "size": [1.6, 1.6, 1.0], "position": [0, 0, 0.5]}])))
    for _ in range(30):
        sim.advance_frame()
    z = sim.state.x[:, 2]
    assert np.percentile(z, 95) < 2 * s, np.percentile(z, 95)


@pytest.mark.slow
def test_water_puddle_thickness_is_the_same_at_three_spacings():
    """A 6 cm cube of water (surface tension 0.072 N/m) dropped on a wide floor spreads to one particle
    layer at spacings 10, 6.7 and 5 mm (95 % of the particles below 0.6 spacing after 1.5 s;
    measured 0.52-0.55). Real water on a surface it does not wet stops at about 2 l_c = 5.4 mm, at or
    below one layer at these spacings, so one layer is the physical answer here; the old water
    preset stopped at 3.2 cm, and halving the spacing halved it."""
    side = 0.06
    for s in (0.01, 0.01 / 1.5, 0.005):
        sim = Simulation(parse_scene(scene_dict(
            particle_spacing=s, fps=30, frame_end=100,
            sources=[{"type": "box", "material": "water", "min": [-side / 2, -side / 2, 0.0],
                      "max": [side / 2, side / 2, side]}],
            colliders=[{"type": "box_container", "size": [1.2, 1.2, 1.0], "position": [0, 0, 0.5]}])))
        for _ in range(45):
            sim.advance_frame()
        layers = np.percentile(sim.state.x[:, 2], 95) / s
        assert layers < 0.6, (s, layers)
