"""Outflows: volumes (box, sphere, closed mesh) that remove the particles entering them."""

import numpy as np
import pytest
from conftest import scene_dict
from reference.analytic_sdf import box_mesh, write_mesh_ply

from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

FRAMES = 12
# Two 0.1 m columns of water 0.4 m above the floor of a 1 x 0.2 m tank: the one at x < 0.3 falls
# into the outflow, the other beside it onto the floor.
SOURCES = [{"type": "box", "material": "water", "min": [0.1, 0, 0.4], "max": [0.2, 0.1, 0.6]},
           {"type": "box", "material": "water", "min": [0.7, 0, 0.4], "max": [0.8, 0.1, 0.6]}]
TANK = {"type": "box_container", "name": "tank", "size": [1.0, 0.2, 1.0], "position": [0.5, 0.1, 0.5]}


def _run(outflows: list, tmp_path=None) -> tuple[Simulation, int, int]:
    """(simulation after FRAMES frames, particles at the start, removed in all by the frames' stats)."""
    data = scene_dict(sources=SOURCES, colliders=[TANK], frame_end=1 + FRAMES, outflows=outflows)
    sim = Simulation(parse_scene(data, tmp_path or "."))
    n0, removed = sim.state.n, 0
    for _ in range(FRAMES):
        removed += sim.advance_frame().removed
    return sim, n0, removed


def _left_right(sim: Simulation) -> tuple[int, int]:
    """Particles left of the left column (source 0) and of the right one (source 1): a splash of the
    right one may run past the tank's middle, which is not the outflow's business."""
    source = sim.state.arrays["source"]
    return int(np.sum(source == 0)), int(np.sum(source == 1))


@pytest.mark.parametrize("shape", [
    {"type": "box", "size": [0.3, 0.2, 0.2], "position": [0.15, 0.1, 0.1]},
    {"type": "sphere", "radius": 0.2, "position": [0.15, 0.1, 0.0]},
])
def test_water_falling_into_an_outflow_is_removed_and_elsewhere_is_not(shape):
    sim, n0, removed = _run([{"name": "drain", **shape}])
    left, right = _left_right(sim)
    # Measured: 12 of the left column's 16 particles gone after 8 frames, all 16 after 10; none of the right one.
    assert right == n0 // 2, "particles outside the outflow are kept"
    assert left == 0 and removed == n0 // 2
    assert sum(sim.state.removed.values()) == removed
    baseline, n0, removed_none = _run([])
    assert removed_none == 0 and _left_right(baseline) == (n0 // 2, n0 // 2)


def test_mesh_outflow_uses_its_distance_field(tmp_path):
    # A closed cube 0.3 x 0.2 x 0.2 m around the left column's landing, in its local frame.
    write_mesh_ply(tmp_path / "drain.ply", *box_mesh((-0.15, -0.1, -0.1), (0.15, 0.1, 0.1)))
    sim, n0, removed = _run([{"type": "mesh", "name": "drain", "path": "drain.ply", "position": [0.15, 0.1, 0.1]}],
                            tmp_path)
    assert _left_right(sim) == (0, n0 // 2) and removed == n0 // 2


def test_a_keyframed_outflow_moves():
    """A drain keyed from under the left column (frame 1) to under the right one (frame 3), before
    either lands (frame ~8): the right column is removed, the left one lands and stays."""
    drain = {"type": "box", "name": "drain", "size": [0.3, 0.2, 0.2], "position": [0.15, 0.1, 0.1],
             "keyframes": [{"frame": 1, "position": [0.15, 0.1, 0.1]}, {"frame": 3, "position": [0.75, 0.1, 0.1]}]}
    sim, n0, removed = _run([drain])
    assert _left_right(sim) == (n0 // 2, 0) and removed == n0 // 2


@pytest.mark.parametrize("item, where", [
    ({"type": "box", "keyframes": [{"frame": 2}, {"frame": 1}]}, "outflows[0].keyframes[1].frame"),
    ({"type": "box", "keyframes": {"frame": 2}}, "outflows[0].keyframes"),
    ({"type": "plane"}, "outflows[0].type"),
    ({"type": "box", "friction": 0.5}, "outflows[0].friction"),
    ({"type": "box", "size": [0, 1, 1]}, "outflows[0].size[0]"),
    ({"type": "mesh", "path": "x.ply", "deforming": True}, "outflows[0].deforming"),
    ([1], "outflows[0]"),
])
def test_bad_outflows_are_refused_at_their_path(item, where):
    with pytest.raises(InputError) as exc:
        parse_scene(scene_dict(outflows=[item]))
    assert exc.value.where == where


def test_validate_reads_an_outflow_mesh_and_sizes_its_grid(tmp_path):
    """preflight checks outflow meshes as it checks collider meshes: a broken file is refused at its
    path before the bake starts, and a good one's distance grid is in the estimate."""
    from sph_addon.core.scene.preflight import preflight

    (tmp_path / "drain.ply").write_text("ply\nformat ascii 1.0\nelement vertex abc\nend_header\n")
    item = {"type": "mesh", "name": "drain", "path": "drain.ply", "position": [0.15, 0.1, 0.1]}
    scene = parse_scene(scene_dict(sources=SOURCES, colliders=[TANK], outflows=[item]), tmp_path)
    with pytest.raises(InputError) as exc:
        preflight(scene)
    assert exc.value.where.startswith("outflows[0]")
    test_mesh_outflow_uses_its_distance_field(tmp_path)  # writes a good drain.ply
    estimate = preflight(parse_scene(scene_dict(sources=SOURCES, colliders=[TANK], outflows=[item]), tmp_path))
    assert [where for where, _ in estimate.grids] == ["outflows[0]"]
