"""The coarse grid projection (terms/pressure_projection_zhu2005.py) against a dense solve, the hydrostatic
column it exists for, Newton's third law through the contact reports, and the bodies it leaves alone."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.terms import pressure_projection_zhu2005_kernels as k
from sph_addon.core.terms.pressure_projection_zhu2005 import GridProjection
from sph_addon.core.world.simulation import Simulation

S = 0.025
H = 2 * S


def _tank(depth: float = 0.3, frames: int = 0, **extra) -> Simulation:
    """Water ``depth`` m deep in a closed 0.2 m square column 0.6 m high (spacing 2.5 cm)."""
    sim = Simulation(parse_scene(scene_dict(
        particle_spacing=S, fps=30, frame_end=100,
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.2, 0.2, depth]}],
        colliders=[{"type": "box_container", "size": [0.2, 0.2, 0.6], "position": [0.1, 0.1, 0.3]}], **extra)))
    for _ in range(frames):
        sim.advance_frame()
    return sim


def _project(x: np.ndarray, v: np.ndarray, walls, dt: float, proj: GridProjection | None = None) -> None:
    """One projection of water particles (material 0) from no earlier pressure."""
    (proj or GridProjection()).project(x, v, np.ones(len(x), bool), walls, H, dt, np.zeros(len(x)))


def test_pressure_solve_matches_a_dense_solve():
    """CG on the fluid cells' 7-point Laplacian (air: p = 0 at a fraction θ of the way, the ghost
    fluid's 1 / θ on the diagonal; solid: no flux) against numpy's dense solve of the same matrix,
    written out from the stencil, on a random pocket of fluid under a lid of air with solid cells
    scattered in it and θ drawn over (0.01, 1]: to 1e-7 (the solve's tolerance is 1e-10 here)."""
    rng = np.random.default_rng(7)
    dims = (7, 6, 8)
    kind = np.where(rng.random(dims) < 0.15, k.SOLID, k.FLUID).astype(np.int8)
    kind[:, :, -2:] = k.AIR
    flat = kind.reshape(-1).copy()
    row = np.empty(flat.size, np.int64)
    nbr = np.empty((flat.size, 6), np.int64)
    m = k.fluid_rows(flat, *dims, row, nbr)
    surface = 1.0 / rng.uniform(0.01, 1.0, (m, 6))
    surface[nbr[:m] >= 0] = 1.0  # between fluid cells: the liquid's own density (no solid in the faces)
    # Dense -L: every fluid cell's row from its neighbours, the grid's outside counting as air.
    cells = np.flatnonzero(row >= 0)
    a = np.zeros((m, m))
    for cell in cells:
        i = row[cell]
        idx = np.unravel_index(cell, dims)
        for axis in range(3):
            for side, step in enumerate((-1, 1)):
                j = list(idx)
                j[axis] += step
                if not 0 <= j[axis] < dims[axis]:
                    a[i, i] += surface[i, 2 * axis + side]
                    continue
                other = flat[np.ravel_multi_index(j, dims)]
                if other == k.SOLID:
                    continue
                a[i, i] += surface[i, 2 * axis + side] if other == k.AIR else 1
                if other == k.FLUID:
                    a[i, row[np.ravel_multi_index(j, dims)]] -= 1
    assert m > 100 and np.allclose(a, a.T)
    rhs = rng.standard_normal(m)
    p = np.zeros(m)
    it, res = k.solve(nbr, surface, m, rhs, p, 1e-10, 1000, np.empty(m), np.empty(m), np.empty(m))
    assert res <= 1e-10 and it < 300
    np.testing.assert_allclose(p, np.linalg.solve(a, rhs), atol=1e-7 * np.abs(p).max())
    # Fluid cut off from air by solid is no longer fluid (its pressure would be undetermined).
    assert np.all(flat[cells] == k.FLUID) and np.count_nonzero(flat == k.FLUID) == m


def test_a_column_falling_one_substep_is_stopped_and_its_weight_goes_to_the_tank():
    """Every particle of a resting column given one substep of gravity, -g Δt, is stopped by one
    projection, the top layer and the layers along the walls too (the surface lies at the lattice's
    top in every column once the content beside the walls is read over a full cell's: read raw, it
    lay lower along the walls, which pulled the liquid up them), and the tank receives exactly the
    velocity the liquid lost, downward, on its floor."""
    sim = _tank()
    walls = sim.walls_at(0.0)
    x = sim.state.x.copy()
    dt = 1 / 180
    v = np.zeros_like(x)
    v[:, 2] = -9.81 * dt
    before = v.copy()
    _project(x, v, walls, dt)
    assert np.abs(v).max() < 1e-5 * 9.81 * dt  # the solve's tolerance (measured 1.4e-6)
    (_, points, dv), = walls.given
    np.testing.assert_allclose(dv.sum(axis=0), (v - before).sum(axis=0), rtol=1e-12, atol=1e-9)
    up = dv[:, 2].sum()
    assert up > 0.95 * len(x) * 9.81 * dt and np.abs(dv[points[:, 2] > 1e-9, 2]).sum() < 1e-9 * up


def test_a_drop_away_from_every_collider_is_left_alone():
    """A body that touches no solid carries no weight: the relaxation alone holds it, and the
    projection changes none of its velocities (bit for bit), nor reports anything."""
    sim = _tank()
    walls = sim.walls_at(0.0)
    rng = np.random.default_rng(3)
    x = sim.state.x[:200] * 0.5 + np.array([0.05, 0.05, 0.2])
    v = rng.standard_normal(x.shape)
    kept = v.copy()
    _project(x, v, walls, 0.005)
    assert np.array_equal(v, kept) and not walls.given


def test_a_resting_pool_stays_still_and_full_from_its_first_frame():
    """A 0.3 m pool filled at rest: in its first second no particle moves faster than 10 cm/s (before
    the projection: 15 cm/s at this depth, 0.5 m: CHANGELOG.md, method notes), its depth (twice the mean height)
    stays within 0.5 % of the filled one, one relaxation pass a substep, and the solve converges."""
    sim = _tank()
    stats = [sim.advance_frame() for _ in range(30)]
    assert max(st.max_speed for st in stats) < 0.10, [round(st.max_speed, 3) for st in stats]
    assert abs(2 * sim.state.x[:, 2].mean() / 0.3 - 1) < 0.005
    assert all(st.extra["projection_capped"] == 0 and st.extra["projection_iterations"] > 0 for st in stats)
    assert np.mean([st.extra["density_iterations"] for st in stats[5:]]) < 1.5


@pytest.mark.parametrize("threads", [1, 2])
def test_projection_is_the_same_on_any_number_of_threads(threads):
    """The splat adds each node's terms in row order and the solve is serial: a bake is the same
    whatever numba's thread count."""
    import numba

    sim = _tank()
    walls = sim.walls_at(0.0)
    x = sim.state.x.copy()
    v = np.random.default_rng(1).standard_normal(x.shape) * 0.1
    ref = v.copy()
    _project(x, ref, walls, 0.005)
    was = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        _project(x, v, sim.walls_at(0.0), 0.005)
    finally:
        numba.set_num_threads(was)
    assert np.array_equal(v, ref)


def test_a_resting_pool_carries_the_hydrostatic_pressure():
    """The pressure the grid solves for a resting pool is hydrostatic: ρ p / Δt (p the particles'
    ``grid_pressure``, m²/s, the velocity potential that removes one substep's g Δt) falls with
    height at ρ g within 2 % (a straight fit over the cells below the top one), and is 0 above
    the surface: the weight that the relaxation's compression carried before the projection."""
    sim = _tank(frames=30)
    projection = sim.models[0].term("pressure_projection_zhu2005").grid
    x = sim.state.x
    pressure = 1000.0 * sim.state.arrays["grid_pressure"] / projection.last_dt
    below = x[:, 2] < 0.3 - H
    centre = (np.floor(x[:, 2] / H) + 0.5) * H  # the pressure is the cell's: cells of h from z = 0
    slope = np.polyfit(centre[below], pressure[below], 1)[0]
    assert slope == pytest.approx(-1000.0 * 9.81, rel=0.02)
    assert np.all(pressure >= -1e-9) and pressure.max() < 1000.0 * 9.81 * (0.3 + H)


def test_the_pic_share_damps_what_the_grid_does_not_see(monkeypatch):
    """Noise below the grid's scale (random particle velocities in a resting pool): FLIP alone keeps
    most of it, and the PIC share, 1 - exp(-Δt ν_g (π/Δ)²) = 0.094 a substep at h = 5 cm and 60
    substeps a second, takes it off on top: the kinetic energy left is 0.75-0.95 of FLIP's alone."""
    from sph_addon.core.terms import pressure_projection_zhu2005 as grid_projection

    sim = _tank()
    x = sim.state.x.copy()
    noise = np.random.default_rng(2).standard_normal(x.shape) * 0.01
    energy = {}
    for nu in (0.0, grid_projection.PIC_VISCOSITY):
        monkeypatch.setattr(grid_projection, "PIC_VISCOSITY", nu)
        v = noise.copy()
        _project(x, v, sim.walls_at(0.0), 1 / 60)
        energy[nu] = float(np.sum(v * v))
    ratio = energy[grid_projection.PIC_VISCOSITY] / energy[0.0]
    assert 0.75 < ratio < 0.95, ratio


def test_a_surface_particle_rising_into_the_cell_above_moves_the_pressure_continuously():
    """The free surface lies where the cells' content crosses 1/2, between cell centres (the ghost
    fluid, ``pressure_projection_zhu2005_ghost_fluid``): one surface particle lifted a tenth of a spacing
    at a time, through the face of the cell above, moves content from its cell to the one above and
    leaves the column's surface where it was, so its neighbours' projected velocities do not change
    (measured: 1e-12 of g Δt; bound 0.5 %). When the first cell holding a particle was fluid, crossing
    the face moved that column's surface up a whole cell, and the top layer was kicked sideways by
    4.3 % of g Δt at once: the bursts of a resting pool (1-2 cm/s at 2 s)."""
    sim = _tank()
    walls = sim.walls_at(0.0)
    x0 = sim.state.x
    dt = 1 / 180
    top = np.flatnonzero(x0[:, 2] > x0[:, 2].max() - S / 2)
    lifted = top[np.argmin(np.linalg.norm(x0[top, :2] - 0.0875, axis=1))]
    others = np.setdiff1d(top, [lifted])
    sideways = []
    for step in range(9):
        x = x0.copy()
        x[lifted, 2] += step * S / 10  # 0.2875 m -> 0.3075 m: the cell face at 0.3 m is crossed at step 5
        v = np.zeros_like(x)
        v[:, 2] = -9.81 * dt
        _project(x, v, walls, dt)
        sideways.append(v[others, :2].copy())
    jumps = [np.abs(b - a).max() / (9.81 * dt) for a, b in zip(sideways, sideways[1:])]
    assert max(jumps) < 0.005, jumps


def test_the_walls_leave_a_cell_the_share_of_its_content_outside_them():
    """A full cell's content is its particles' trilinear weights, so beside a flat wall a cell keeps
    1 - (1 - δ)² / 2 of it, δ the distance from its centre to the wall in cells (the weights beyond
    the wall are missing): 0.875 for a wall at the cell's face, 1/8 for a centre half a cell inside
    it, all of it 1.5 cells away (a cell's weights reach one cell), and the product of the walls'
    shares in an edge or a corner of the box; with the signed distance of each centre."""
    from sph_addon.core.boundary.static_cells import WallCells

    static = _tank().walls_at(0.0).static()
    # The box spans [0, 0.2]² x [0, 0.6]; cells of width d = 2.5 cm from the origin: cell 0 touches a
    # wall, cell -1's centre lies inside one (δ = -1/2 cell), cell (5, 5, 5)'s 2.5 cells from the nearest.
    d = S
    index = np.array([[5, 5, 5], [0, 5, 5], [0, 0, 5], [0, 0, 0], [5, 5, -1], [1, 1, 1]])
    cells = WallCells()
    distance, share = cells(static, index, d)
    expected = [1.0, 0.875, 0.875**2, 0.875**3, 0.125, 1.0]
    np.testing.assert_allclose(share, expected, atol=1e-9)
    np.testing.assert_allclose(distance, [2.5 * d, 0.5 * d, 0.5 * d, 0.5 * d, -0.5 * d, 1.5 * d])
    again = cells(static, index[::-1], d)  # kept, as measured, whatever the order asked
    np.testing.assert_array_equal(again[1], share[::-1])
    np.testing.assert_array_equal(again[0], distance[::-1])



def test_the_walls_cells_refuse_liquid_beyond_their_key_range():
    """A cell more than 2^20 cells from the origin cannot be packed into the cache's key: the lookup
    says how far the liquid is and what to do, instead of mixing it up with another cell."""
    from sph_addon.core.boundary.static_cells import WallCells

    static = _tank().walls_at(0.0).static()
    with pytest.raises(ValueError, match="from the origin.*move the scene closer"):
        WallCells()(static, np.array([[1 << 20, 0, 0]]), S)


def test_the_splat_is_the_same_cut_in_any_number_of_slabs():
    """The splat cuts the grid into slabs across x, one task each (as many as numba has threads): every
    node still adds its rows' terms in increasing row order, so the sums are the same bytes."""
    from sph_addon.core.terms.pressure_projection_zhu2005_kernels import splat

    rng = np.random.default_rng(5)
    x = rng.uniform(0.0, 1.0, (3000, 3)) * [1.0, 1.5, 2.0]
    v, sel = rng.normal(size=x.shape), rng.uniform(size=3000) < 0.9
    dims, origin = (12, 17, 22), np.array([-0.1, -0.1, -0.1])

    def sums(threads):
        u = [np.zeros(tuple(n + (a == axis) for a, n in enumerate(dims))) for axis in range(3)]
        w, fill = [np.zeros_like(a) for a in u], np.zeros(dims)
        splat(x, v, sel, origin, 10.0, *u, *w, fill, threads)
        return u + w + [fill]

    one = sums(1)
    assert sum(float(f.sum()) for f in one[3:6]) == pytest.approx(3 * np.count_nonzero(sel), rel=0.05)
    for threads in (2, 5, 16, 64):
        assert all(np.array_equal(a, b) for a, b in zip(one, sums(threads))), threads


def test_a_large_solve_is_the_same_on_any_number_of_threads():
    """From ``PARALLEL_ROWS`` fluid rows the solve's row loops run in parallel, its dot products still
    summed in row order on one thread: the same bytes at 1 and 2 threads, and converged."""
    import numba

    dims = (40, 40, 16)
    kind = np.full(dims, k.FLUID, np.int8)
    kind[:, :, -2:] = k.AIR
    kind[:, :, 0] = k.SOLID
    flat = kind.reshape(-1).copy()
    row = np.empty(flat.size, np.int64)
    nbr = np.empty((flat.size, 6), np.int64)
    m = k.fluid_rows(flat, *dims, row, nbr)
    assert m >= k.PARALLEL_ROWS
    rng = np.random.default_rng(8)
    surface = 1.0 / rng.uniform(0.01, 1.0, (m, 6))
    surface[nbr[:m] >= 0] = 1.0  # between fluid cells: the liquid's own density (no solid in the faces)
    rhs = rng.standard_normal(m)
    out = {}
    was = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            p = np.zeros(m)
            out[threads] = (k.solve(nbr, surface, m, rhs, p, 1e-8, 2000, np.empty(m), np.empty(m), np.empty(m)), p)
    finally:
        numba.set_num_threads(was)
    (it, res), p = out[1]
    assert res <= 1e-8 and it > 10
    assert out[2][0] == (it, res) and np.array_equal(out[2][1], p)
    q = np.empty(m)
    k._laplacian(nbr, surface, m, p, q)
    assert np.linalg.norm(q - rhs) <= 1.01e-8 * np.linalg.norm(rhs)
