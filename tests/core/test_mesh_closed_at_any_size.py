"""A closed mesh is called closed at any size, and what ``validate`` logs on the way is said only when no
refusal follows (``scene.held_log``): a closed 1 mm cube was refused after a WARNING that called it an
open surface acting as a shell, which the refusal then contradicted.

At a spacing of 5 cm (distance grid 2.5 cm) a 1 mm cube holds no grid node: as a source or a solid
collider it is refused, as closed and too thin for the grid, naming the field to change; a 1 m cube
fills; an open sheet is refused as open.
"""

from __future__ import annotations

import json
import logging

import pytest
from conftest import run_main, scene_dict
from reference.analytic_sdf import box_mesh, write_mesh_ply

from sph_addon.core.colliders.shapes.mesh_collider import is_closed

OPEN_SHEET = ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
# A material whose preset moved to another model, with an override that model lacks: a WARNING line.
MOVED = {"name": "jelly", "model": "viscoelastic", "preset": "jelly", "params": {"plasticity": 0.1}}


def _cube(path, side: float, at=(0.2, 0.2, 0.2)) -> None:
    lo = [c - side / 2 for c in at]
    write_mesh_ply(path, *box_mesh(lo, [c + side for c in lo]))


@pytest.mark.parametrize("side", [1e-3, 1.0, 1e-6, 1e3])
def test_a_cube_is_closed_at_any_size(tmp_path, side):
    v, t = box_mesh((0.0, 0.0, 0.0), (side, side, side))
    assert is_closed(v, t)
    assert not is_closed(*OPEN_SHEET)


def _validate(tmp_path, caplog, **scene) -> tuple[int, str, list[str]]:
    (tmp_path / "scene.json").write_text(json.dumps(scene_dict(**scene)))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        code, _, err = run_main("validate", tmp_path / "scene.json")
    return code, err, [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def _mesh_source(**extra) -> dict:
    return {"type": "mesh", "material": "water", "path": "m.ply", **extra}


def test_a_closed_1mm_cube_source_is_refused_as_thin_not_open(tmp_path, caplog):
    _cube(tmp_path / "m.ply", 1e-3)
    code, err, warned = _validate(tmp_path, caplog, sources=[_mesh_source()])
    assert code == 2 and "sources[0].path" in err and "closed" in err and "open" not in err, err
    assert len(err.strip().splitlines()) == 1 and not warned, (err, warned)


def test_a_closed_1m_cube_source_fills(tmp_path, caplog):
    """The same check at a thousand times the size passes: a closed mesh larger than the spacing fills."""
    _cube(tmp_path / "m.ply", 1.0, at=(0.5, 0.5, 0.5))
    code, err, warned = _validate(tmp_path, caplog, sources=[_mesh_source()], colliders=[
        {"type": "box_container", "name": "tank", "size": [1.2, 1.2, 2.0], "position": [0.5, 0.5, 1.0]}])
    assert code == 0 and not warned, (err, warned)


def test_an_open_sheet_source_is_refused_as_open(tmp_path, caplog):
    write_mesh_ply(tmp_path / "m.ply", *OPEN_SHEET)
    code, err, warned = _validate(tmp_path, caplog, sources=[_mesh_source()])
    assert code == 2 and "sources[0].path" in err and "open" in err, err
    assert not warned, warned


def test_a_closed_1mm_cube_collider_is_refused_with_no_shell_warning_before(tmp_path, caplog):
    _cube(tmp_path / "m.ply", 1e-3, at=(0.2, 0.2, 0.6))
    code, err, warned = _validate(tmp_path, caplog, colliders=[
        {"type": "box_container", "name": "tank", "size": [0.4, 0.4, 1.0], "position": [0.2, 0.2, 0.5]},
        {"type": "mesh", "name": "bead", "path": "m.ply"}])
    assert code == 2 and "colliders[1].cell_size" in err and "closed" in err, err
    assert not warned, f"logged before the refusal: {warned}"


def test_a_warning_is_said_when_the_scene_passes_and_not_when_it_is_refused(tmp_path, caplog):
    sources = [{"type": "box", "material": "jelly", "min": [0, 0, 0], "max": [0.4, 0.4, 0.3]}]
    code, err, warned = _validate(tmp_path, caplog, materials=[MOVED], sources=sources)
    assert code == 0 and len(warned) == 1 and "plasticity" in warned[0], (err, warned)
    _cube(tmp_path / "m.ply", 1e-3)
    code, err, warned = _validate(tmp_path, caplog, materials=[MOVED],
                                  sources=sources + [_mesh_source(material="jelly")])
    assert code == 2 and "sources[1].path" in err and not warned, (err, warned)
