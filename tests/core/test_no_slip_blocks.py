"""The implicit viscosity's no-slip blocks (``lattice_fill.wall_viscosity_blocks``): the fused kernel
(``solid_share_kernels.no_slip_sums``) against the numpy statements it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
from conftest import REPO

from sph_addon.core.boundary import lattice_fill as lf
from sph_addon.core.scene.scene_file import load_scene
from sph_addon.core.world.simulation import Simulation


def _reference(x, walls, spacing, h):
    out = np.zeros((len(x), 6))
    dist = walls.distance(x)
    near = np.flatnonzero(dist < h + 0.5 * spacing)
    off, weights, towards = lf._wall_viscosity_weights(spacing, h)
    share = walls.solid_share(np.ascontiguousarray(x[near]), off, spacing)
    normal = lf._weighted(share, towards)
    length = np.linalg.norm(normal, axis=1)
    normal /= np.where(length > 0.0, length, 1.0)[:, None]
    d_i = np.maximum(dist[near], 0.25 * spacing)[:, None]
    depth = lf._weighted(normal, np.ascontiguousarray(off.T)) - d_i
    factor = np.clip(1.0 + depth / d_i, 1.0, lf.NO_SLIP_CAP)
    out[near] = lf._weighted(share * factor, weights)
    return out


def test_no_slip_blocks_are_the_numpy_statements():
    scene = load_scene(REPO / "scripts" / "scenes" / "dam_break.json")
    sim = Simulation(scene)
    walls = sim.walls_at(0.0).static()
    rng = np.random.default_rng(6)
    # The column's particles, and points scattered through the tank's corner and walls.
    x = np.concatenate([sim.state.x[::7], rng.uniform([-0.1, -0.1, -0.1], [0.4, 0.4, 0.4], (3000, 3))])
    new = lf.wall_viscosity_blocks(x, walls, sim.spacing, sim.h)
    ref = _reference(x, walls, sim.spacing, sim.h)
    assert np.count_nonzero(ref.any(axis=1)) > 1000
    assert np.array_equal(new, ref)
