"""A mesh collider's distance grid clipped to the domain (colliders/sdf_clip.py, colliders/reach.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import scene_dict
from reference.analytic_sdf import box_mesh, cube_sphere, torus_mesh, write_mesh_ply

from sph_addon.core.colliders.motion import KeyframedMotion
from sph_addon.core.colliders.shapes.reach import domain_in_local_frame
from sph_addon.core.colliders.shapes.sdf_mesh import build_mesh_sdf, grid_dims, sdf_grid
from sph_addon.core.scene.preflight import preflight
from sph_addon.core.scene.scene_file import load_scene
from sph_addon.core.world.simulation import Simulation

SPACING = 0.05
H = SPACING / 2  # automatic cell size
DOMAIN = {"min": [-1.0, -1.0, -0.5], "max": [1.0, 1.0, 1.5]}


def _ground_scene(tmp_path: Path, domain=DOMAIN, frame_end: int = 16) -> Path:
    """A 40 m x 40 m slab 0.2 m thick, its top at z = 0, under a 2 m domain; water 30 cm above it."""
    write_mesh_ply(tmp_path / "ground.ply", *box_mesh((-20, -20, -0.2), (20, 20, 0.0)))
    data = scene_dict(particle_spacing=SPACING, frame_end=frame_end,
                      sources=[{"type": "box", "material": "water", "min": [-0.15, -0.15, 0.3],
                                "max": [0.15, 0.15, 0.6]}],
                      colliders=[{"type": "mesh", "name": "ground", "path": "ground.ply"}])
    if domain is not None:
        data["domain"] = domain
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data))
    return path


def test_a_40m_ground_in_a_2m_domain_gets_a_grid_bounded_by_the_domain(tmp_path):
    """Before the clip: a 1605 x 1605 x 14 grid (144 MB of float32). Now the grid spans the domain
    plus the padding and a few cells (build times: BENCHMARKS.md)."""
    scene = load_scene(_ground_scene(tmp_path))
    sim = Simulation(scene)
    shape = sim.colliders[0].shape
    origin, h = shape.params[:3], shape.params[3]
    top = origin + h * (np.array(shape.grid.shape) - 1)
    margin = 2 * h + 4 * h + SPACING + h  # padding + CLIP_CELLS + a CFL step + rounding
    assert (origin >= np.array(DOMAIN["min"]) - margin).all()
    assert (top[:2] <= np.array(DOMAIN["max"][:2]) + margin).all()
    assert shape.grid.shape == (97, 97, 14) and shape.grid.nbytes < 600_000
    # Below the top face is solid, out to the grid's cut faces; above and below the slab is free.
    for p, d in (((0, 0, 0.1), 0.1), ((0, 0, -0.05), -0.05), ((0.95, -0.95, -0.1), -0.1),
                 ((1.1, 1.1, -0.1), -0.1), ((0.5, 0.5, -0.25), 0.05)):
        assert sdf_grid(shape.params, shape.grid, *p)[0] == pytest.approx(d, abs=1e-6), p
    # The same build again (its time is in BENCHMARKS.md, scripts/benchmarks/sdf_clip.py).
    from sph_addon.core.cache.mesh_io import load_mesh
    from sph_addon.core.colliders.shapes import mesh_collider

    v, t = load_mesh(tmp_path / "ground.ply", "ground")  # float32 corners, as the bake reads them
    settings = mesh_collider.mesh_settings(dict(scene.colliders[0][1]), SPACING)
    again = build_mesh_sdf(v, t, reach=sim_reach(sim), **settings)
    assert np.array_equal(again.grid, shape.grid)
    # validate's estimate sizes the same grid.
    estimate = preflight(scene)
    assert estimate.grids == (("colliders[0]", (97, 97, 14)),)
    assert estimate.grid_bytes < 5 * 2**20


def sim_reach(sim):
    from sph_addon.core.colliders.shapes.reach import scene_reach

    return scene_reach(sim.scene, sim.colliders[0].motion)


def test_water_dropped_on_the_clipped_ground_rests_on_it(tmp_path):
    sim = Simulation(load_scene(_ground_scene(tmp_path)))
    n = sim.state.n
    for _ in range(15):
        sim.advance_frame()
    z = sim.state.x[:, 2]
    assert sim.state.n == n
    assert z.min() > 0.4 * SPACING  # on the surface, not in it
    assert z.min() < 0.6 * SPACING  # it landed (fell 30 cm in 0.5 s)


def test_without_a_domain_the_grid_covers_the_whole_mesh(tmp_path):
    scene = load_scene(_ground_scene(tmp_path, domain=None))
    assert preflight(scene).grids == (("colliders[0]", (1605, 1605, 14)),)


@pytest.mark.parametrize("mesh, reach", [
    (box_mesh((-1, -1, -1), (1, 1, 1)), ((-0.3, -2, -2), (2, 0.4, 0.2))),
    (cube_sphere(8), ((-0.2, -0.5, -2), (2, 2, 0.3))),
    (torus_mesh(24, 12), ((-2, -0.2, -0.1), (0.1, 2, 2))),
])
def test_the_clipped_field_is_the_whole_field_where_particles_reach(mesh, reach):
    """Nodes of the clipped grid are nodes of the whole grid. The sign agrees at every node, and the
    value at every node in the reach closer to the surface than the margin (padding + CLIP_CELLS
    cells): the surface that near lies in the grid. Farther values may be larger (the nearest
    surface can lie beyond the grid: 0.6 m instead of 1.2 m deep in the box), which no contact
    test needs."""
    from sph_addon.core.colliders.shapes.sdf_clip import CLIP_CELLS

    v, t = mesh
    h = 0.05
    reach = (np.array(reach[0], float), np.array(reach[1], float))
    whole = build_mesh_sdf(v, t, cell_size=h, padding=0.0)
    clip = build_mesh_sdf(v, t, cell_size=h, padding=0.0, reach=reach)
    assert clip.grid.size < whole.grid.size
    off = np.rint((clip.params[:3] - whole.params[:3]) / h).astype(int)
    assert np.allclose(clip.params[:3], whole.params[:3] + off * h)
    part = whole.grid[tuple(slice(o, o + n) for o, n in zip(off, clip.grid.shape))]
    on_surface = np.abs(part) < 1e-6  # ±0 and round-off
    assert np.array_equal(np.sign(part)[~on_surface], np.sign(clip.grid)[~on_surface])
    nodes = np.stack(np.meshgrid(*[clip.params[a] + h * np.arange(clip.grid.shape[a]) for a in range(3)],
                                 indexing="ij"), -1)
    near = np.all((nodes >= reach[0]) & (nodes <= reach[1]), axis=-1) & (np.abs(part) < (2 + CLIP_CELLS) * h)
    band = near & (np.abs(part) < 1.5 * h)  # exact distances in both (sdf_unsigned's narrow band)
    assert band.sum() > 100
    assert np.abs(part[band] - clip.grid[band]).max() < 1e-6
    # Beyond the band both are sweeps from different extents (measured 4 % of a cell apart at most).
    assert np.abs(part[near] - clip.grid[near]).max() < 0.1 * h
    assert tuple(grid_dims(v, cell_size=h, padding=0.0, reach=reach)) == clip.grid.shape


def test_the_reach_follows_the_collider_through_the_bake():
    """A collider turning a quarter turn and moving 1 m: every domain corner, at every moment
    (not only the sampled ones), lies in the box, in the collider's frame."""
    motion = KeyframedMotion([1.0, 5.0], [[0, 0, 0], [1.0, 0, 0]], [[0, 0, 0], [0, 0, math.pi / 2]])
    domain = {"min": [-1.0, -0.5, 0.0], "max": [2.0, 0.5, 1.0]}
    lo, hi = domain_in_local_frame(domain, motion, 1, 5, grow=0.0)
    corners = np.array([[x, y, z] for x in (-1.0, 2.0) for y in (-0.5, 0.5) for z in (0.0, 1.0)])
    for f in np.linspace(1.0, 5.0, 401):
        r, c = motion.transform(float(f))
        local = (corners - c) @ r
        assert (local >= lo - 1e-12).all() and (local <= hi + 1e-12).all(), f
    assert domain_in_local_frame(None, motion, 1, 5, 0.1) is None
