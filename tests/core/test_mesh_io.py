"""Mesh loading (sph_addon/core/colliders/mesh_io.py): PLY via plyio, a small OBJ reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sph_addon.core.colliders.mesh_io import load_mesh, read_obj
from sph_addon.core.errors import InputError

MESHES = Path(__file__).resolve().parents[1] / "data" / "meshes"


def test_committed_meshes_load_with_expected_sizes():
    expected = {"box_internal_face.ply": (12, 14), "box_dup_flipped.ply": (8, 24), "plane_quad.ply": (4, 2),
                "two_boxes.obj": (16, 24), "nonmanifold_fin.obj": (12, 14)}
    for name, (nv, nt) in expected.items():
        v, t = load_mesh(MESHES / name)
        assert v.shape == (nv, 3) and v.dtype == np.float64, name
        assert t.shape == (nt, 3) and t.dtype == np.int64, name
        assert t.min() >= 0 and t.max() < nv, name


def test_obj_corner_forms_negative_indices_and_polygons(tmp_path):
    f = tmp_path / "m.obj"
    f.write_text(
        "# comment\n"
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 1.5 0 1.0\n"
        "vt 0 0\nvn 0 0 1\n"
        "o thing\ng group\nusemtl mat\ns off\n"
        "f 1 2 3\n"
        "f 1/1 3/1 4/1\n"
        "f 1/1/1 2/1/1 3/1/1\n"
        "f 1//1 3//1 4//1\n"
        "f -5 -4 -3   # negative: the first three vertices\n"
        "f 1 2 3 5 4\n"  # pentagon -> 3 fan triangles
    )
    v, t = read_obj(f)
    assert v.shape == (5, 3) and v[4].tolist() == [0.5, 1.5, 0.0]
    assert t.tolist() == [[0, 1, 2], [0, 2, 3], [0, 1, 2], [0, 2, 3], [0, 1, 2],
                          [0, 1, 2], [0, 2, 4], [0, 4, 3]]


def test_obj_negative_index_is_relative_to_vertices_so_far(tmp_path):
    f = tmp_path / "m.obj"
    f.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 0 0 1\nf -1 -3 -2\n")
    _, t = read_obj(f)
    assert t.tolist() == [[0, 1, 2], [3, 1, 2]]


@pytest.mark.parametrize("body, pattern", [
    ("v 0 0 0\nv 1 0 0\nf 1 2 3\n", "line 3: face corner '3' refers to a vertex not defined"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "line 4: vertex index 0"),
    ("v 0 0\n", "line 1: bad vertex"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", "at least 3 corners"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 a 2\n", "bad face corner 'a'"),
    ("v 0 0 0\n", "no faces"),
])
def test_bad_obj_raises_input_error_with_line(tmp_path, body, pattern):
    f = tmp_path / "bad.obj"
    f.write_text(body)
    with pytest.raises(InputError, match=pattern) as exc:
        load_mesh(f, where="sources[0].mesh")
    assert exc.value.where == "sources[0].mesh"


def test_bad_files_raise_input_error(tmp_path):
    with pytest.raises(InputError, match="unsupported mesh format '.stl'"):
        load_mesh(tmp_path / "x.stl")
    with pytest.raises(InputError, match="cannot read"):
        load_mesh(tmp_path / "missing.obj")
    with pytest.raises(InputError, match="cannot open"):
        load_mesh(tmp_path / "missing.ply")
    bad = tmp_path / "trunc.ply"
    bad.write_bytes((MESHES / "plane_quad.ply").read_bytes()[:-10])
    with pytest.raises(InputError, match="truncated"):
        load_mesh(bad)
