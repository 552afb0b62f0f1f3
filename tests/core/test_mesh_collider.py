"""Mesh colliders in the simulation: splashes onto the committed robustness meshes, and a fast jet
onto a thin shell.

Each splash drops a small block of water (~600 particles at 0.04 m) at 3 m/s onto one mesh of
``tests/data/meshes`` and checks every frame that no particle is inside the collider (signed
distance < 0 of the collider's own field) or, for the open plane in shell mode, that no particle
went from one side of the sheet to the other through it. The substeps are held at 30 per frame or
more so that the result does not depend on the liquid's stability limit, only on the collider.

The jet test shows the continuous collision test of ``colliders/response.py``: a block of liquid at
20 m/s against a shell of half-thickness one cell, with 8 substeps per frame, travels 0.083 m per
substep, more than the whole contact zone (2 x (thickness + particle radius) = 0.08 m): with
``continuous: false`` (Clavet's test of the predicted position only) about half of the jet tunnels;
with the default ``continuous: true`` none does, at 8 or 4 substeps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.colliders.contact.response import distances
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

MESHES = Path(__file__).resolve().parents[1] / "data" / "meshes"
SPACING = 0.04


def _local_distances(sim: Simulation, k: int = 0) -> np.ndarray:
    """Signed distance of every particle to collider ``k`` (its own field, at its current pose)."""
    c = sim.colliders[k]
    rot, pos = c.transform(float(sim.frame))
    local = np.ascontiguousarray((sim.state.x - pos) @ rot)
    d = np.empty(len(local))
    distances(c.shape.code, c.shape.params, c.shape.grid, local, d)
    return d


def _splash_scene(collider: dict, drop_at=(0.0, 0.0), frames: int = 10) -> dict:
    x, y = drop_at
    return scene_dict(
        particle_spacing=SPACING, frame_start=1, frame_end=1 + frames, fps=30,
        simulation={"min_substeps": 30},
        sources=[{"type": "box", "material": "water", "min": [x - 0.2, y - 0.2, 0.62],
                  "max": [x + 0.2, y + 0.2, 0.82], "velocity": [0.0, 0.0, -3.0]}],
        colliders=[collider], domain={"min": [-2, -2, -1.5], "max": [2, 2, 2]})


SOLIDS = {
    "box_internal_face.ply": ({}, (0.0, 0.0)),
    "two_boxes.obj": ({}, (0.35, 0.0)),          # onto the overlap of the two boxes
    "box_dup_flipped.ply": ({}, (0.0, 0.0)),
    "sphere_hole.ply": ({"hole_closing": 0.05}, (0.0, 0.0)),  # straight onto the hole at +z
    "nonmanifold_fin.obj": ({}, (0.0, 0.3)),     # onto the edge the fin shares with the box
}


@pytest.mark.parametrize("mesh", list(SOLIDS))
def test_splash_onto_solid_mesh_never_enters_it(mesh):
    extra, drop_at = SOLIDS[mesh]
    sim = Simulation(parse_scene(_splash_scene({"type": "mesh", "path": mesh, **extra}, drop_at), MESHES))
    n0 = sim.state.n
    assert n0 > 400
    touched = np.zeros(0, bool)
    worst = np.inf
    for _ in range(sim.scene.frame_end - sim.scene.frame_start):
        sim.advance_frame()
        d = _local_distances(sim)
        worst = min(worst, float(d.min()))
        # Contacts are resolved to d >= particle radius; d < 0 would be a particle inside the solid.
        assert (d >= 0.0).all(), f"{mesh}: {(d < 0).sum()} particles inside at frame {sim.frame}"
        touched = d < 2 * SPACING
    # The water did land on the mesh (it is resting on or flowing over it at the end).
    assert touched.sum() > 50
    assert worst > 0.0


def test_splash_onto_shell_plane_stays_on_its_side():
    collider = {"type": "mesh", "path": "plane_quad.ply", "mode": "shell"}
    sim = Simulation(parse_scene(_splash_scene(collider, frames=12), MESHES))
    side = {int(i): z > 0 for i, z in zip(sim.state.ids, sim.state.x[:, 2])}
    assert all(side.values())
    xy_prev = {int(i): p[:2].copy() for i, p in zip(sim.state.ids, sim.state.x)}
    crossed_outside = 0
    for _ in range(sim.scene.frame_end - sim.scene.frame_start):
        sim.advance_frame()
        d = _local_distances(sim)
        assert (d >= 0.0).all(), f"{(d < 0).sum()} particles inside the shell at frame {sim.frame}"
        for i, p in zip(sim.state.ids, sim.state.x):
            i = int(i)
            now = p[2] > 0
            if now != side[i]:
                # Changing side is only possible around the rim of the 1 x 1 m quad.
                off = max(np.abs(p[:2]).max(), np.abs(xy_prev[i]).max()) > 0.5 - 0.5 * SPACING
                assert off, f"particle {i} went through the sheet at {p} (frame {sim.frame})"
                crossed_outside += 1
                side[i] = now
            xy_prev[i] = p[:2].copy()
    # Water pooled on the sheet, which held it from below.
    on_top = (sim.state.x[:, 2] > 0) & (np.abs(sim.state.x[:, :2]).max(axis=1) < 0.45)
    assert on_top.sum() > 100


def _jet(continuous: bool, substeps: int) -> tuple[Simulation, int, int]:
    """A 20 m/s block against a shell one cell thick; returns (sim, particles, crossed through)."""
    data = scene_dict(
        particle_spacing=SPACING, frame_start=1, frame_end=4, fps=30,
        simulation={"substeps": substeps, "gravity": [0.0, 0.0, 0.0]},
        # A soft liquid (the loosest density error: few relaxation passes even at 4 substeps per
        # frame), so the only thing under test is the collider.
        materials=[{"name": "water", "params": {"density_error": 0.2}}],
        sources=[{"type": "box", "material": "water", "min": [-0.1, -0.1, 0.3], "max": [0.1, 0.1, 0.42],
                  "velocity": [0.0, 0.0, -20.0]}],
        colliders=[{"type": "mesh", "path": "plane_quad.ply", "mode": "shell", "thickness": 0.5 * SPACING,
                    "continuous": continuous}])
    data.pop("domain", None)
    sim = Simulation(parse_scene(data, MESHES))
    n = sim.state.n
    through = 0
    for _ in range(3):
        sim.advance_frame()
        # Without gravity nothing can get below the sheet other than through it.
        under = np.abs(sim.state.x[:, :2]).max(axis=1) < 0.5
        through = max(through, int(((sim.state.x[:, 2] < 0) & under).sum()))
    return sim, n, through


def test_fast_jet_tunnels_without_continuous_collision():
    sim, n, through = _jet(continuous=False, substeps=8)
    dt = 1.0 / (30 * 8)
    zone = 2 * (0.5 * SPACING + 0.5 * SPACING)  # 2 (thickness + radius)
    assert 20.0 * dt > zone  # the premise: one substep crosses the whole contact zone
    # Measured: 76-84 of 144 (depending on the liquid's relaxation); any sizeable share shows it.
    assert through > n // 4, f"only {through} of {n} tunnelled; the test no longer shows the problem"


@pytest.mark.parametrize("substeps", [8, 4])
def test_fast_jet_is_stopped_by_continuous_collision(substeps):
    sim, n, through = _jet(continuous=True, substeps=substeps)
    assert through == 0, f"{through} of {n} particles went through the shell at {substeps} substeps"
    assert sim.state.n == n
    # The jet is stopped on the sheet, not scattered: every particle is above it and near it.
    assert (sim.state.x[:, 2] > 0).all()
