"""Mesh loading (sph_addon/core/cache/mesh_io.py): PLY via plyio, a small OBJ reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sph_addon.core.cache.mesh_io import load_mesh, read_obj
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
    ("", "bad.obj: the file is empty"),
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


# --------------------------------------------------------------------------- concave polygons

_L = [(0.2, 0.0), (0.2, 0.1), (0.1, 0.1), (0.1, 0.2), (0.0, 0.2), (0.0, 0.0)]  # notch at x, y > 0.1
_U = [(0.0, 0.0), (0.3, 0.0), (0.3, 0.2), (0.2, 0.2), (0.2, 0.1), (0.1, 0.1), (0.1, 0.2), (0.0, 0.2)]
# A tilted plane: the 2D polygon (u, v) sits at origin + u e1 + v e2.
_E1 = np.array([0.6, 0.0, 0.8])
_E2 = np.array([0.0, 1.0, 0.0])
_ORIGIN = np.array([0.3, -0.2, 0.1])


def _shoelace(poly) -> float:
    x, y = np.asarray(poly, float).T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def _in_polygon(poly, pts) -> np.ndarray:
    """Even-odd rule (points strictly inside; the test points stay off the edges)."""
    poly = np.asarray(poly, float)
    inside = np.zeros(len(pts), bool)
    for (x0, y0), (x1, y1) in zip(poly, np.roll(poly, -1, axis=0)):
        crosses = (y0 > pts[:, 1]) != (y1 > pts[:, 1])
        with np.errstate(divide="ignore", invalid="ignore"):
            x = x0 + (pts[:, 1] - y0) * (x1 - x0) / (y1 - y0)
        inside ^= crosses & (pts[:, 0] < x)
    return inside


def _write_polygon(path, corners3, fmt):
    n = len(corners3)
    if fmt == "obj":
        path.write_text("".join(f"v {float(x)!r} {float(y)!r} {float(z)!r}\n" for x, y, z in corners3)
                        + "f " + " ".join(str(k + 1) for k in range(n)) + "\n")
        return
    head = (f"ply\nformat {fmt} 1.0\nelement vertex {n}\nproperty double x\nproperty double y\n"
            f"property double z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n").encode()
    if fmt == "ascii":
        # float(): numpy 2 writes a scalar's repr as "np.float64(0.42)".
        rows = "".join(f"{float(x)!r} {float(y)!r} {float(z)!r}\n" for x, y, z in corners3)
        body = rows + f"{n} " + " ".join(map(str, range(n)))
        path.write_bytes(head + body.encode() + b"\n")
    else:
        corners = np.asarray(corners3, "<f8").tobytes()
        path.write_bytes(head + corners + bytes([n]) + np.arange(n, dtype="<i4").tobytes())


@pytest.mark.parametrize("fmt", ["obj", "ascii", "binary_little_endian"])
@pytest.mark.parametrize("shape", ["L", "U", "U-reversed"])
def test_concave_polygon_is_triangulated_exactly(tmp_path, shape, fmt):
    """A fan over an L or a U lays triangles over the notch (phantom surfaces)."""
    poly = {"L": _L, "U": _U, "U-reversed": _U[::-1]}[shape]
    corners = _ORIGIN + np.array([u * _E1 + v * _E2 for u, v in poly])
    path = tmp_path / ("face.obj" if fmt == "obj" else "face.ply")
    _write_polygon(path, corners, fmt)
    v, t = load_mesh(path)
    assert t.shape == (len(poly) - 2, 3)
    tri = v[t]
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    assert 0.5 * np.linalg.norm(cross, axis=1).sum() == pytest.approx(_shoelace(poly), rel=1e-9)
    # Every triangle lies in the polygon: points near each corner and at the centroid are inside it.
    uv = np.stack([(tri - _ORIGIN) @ _E1, (tri - _ORIGIN) @ _E2], -1)  # (m, 3, 2)
    centroid = uv.mean(axis=1, keepdims=True)
    probes = (0.98 * uv + 0.02 * centroid).reshape(-1, 2)
    assert _in_polygon(poly, np.concatenate([probes, centroid[:, 0]])).all()
    # The polygon's winding is kept (the normal Newell's method gives for the corners as listed).
    sign = 1.0 if shape != "U-reversed" else -1.0
    assert (cross @ np.cross(_E1, _E2) * sign > 0).all()


def test_convex_and_degenerate_polygons_keep_a_fan(tmp_path):
    f = tmp_path / "m.obj"
    # A hexagon (convex), four corners on a line (no area), a self-crossing pentagram (no ear found).
    star = [(np.cos(a), np.sin(a), 0.0) for a in np.pi / 2 + 4 * np.pi / 5 * np.arange(5)]
    hexagon = [(np.cos(a), np.sin(a), 1.0) for a in np.pi / 3 * np.arange(6)]
    lines = [f"v {x} {y} {z}\n" for x, y, z in hexagon + [(0, 0, 2), (1, 0, 2), (2, 0, 2), (3, 0, 2)] + star]
    f.write_text("".join(lines) + "f 1 2 3 4 5 6\nf 7 8 9 10\nf 11 12 13 14 15\n")
    _, t = read_obj(f)
    assert t[:4].tolist() == [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]]
    assert t[4:6].tolist() == [[6, 7, 8], [6, 8, 9]]
    assert len(t) == 4 + 2 + 3 and t[6:].min() >= 10


def test_concave_prism_collider_is_outside_in_its_notch(tmp_path):
    """An extruded L listed from its inner corner's neighbour: fanned, each cap would lay a triangle
    over half the notch (phantom lids 2 cm apart); ear-clipped, the notch is open space."""
    from sph_addon.core.colliders.shapes.sdf_mesh import build_mesh_sdf

    ring = _L[1:] + _L[:1]  # from (0.2, 0.1): the fan's first triangle is the notch's lower half
    n = len(ring)
    height = 0.04
    corners = [(x, y, 0.0) for x, y in ring] + [(x, y, height) for x, y in ring]
    faces = ["f " + " ".join(str(k + 1) for k in range(n)),
             "f " + " ".join(str(n + k + 1) for k in reversed(range(n)))]
    faces += [f"f {k + 1} {(k + 1) % n + 1} {n + (k + 1) % n + 1} {n + k + 1}" for k in range(n)]
    path = tmp_path / "prism.obj"
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners) + "\n".join(faces) + "\n")
    sdf = build_mesh_sdf(*load_mesh(path), cell_size=0.005, padding=0.0)
    notch, body = [0.14, 0.14, 0.02], [0.05, 0.05, 0.02]
    d = sdf.sample(np.array([notch, body, [0.14, 0.14, 0.05]]))[0]
    assert d[0] == pytest.approx(0.04, abs=0.003)  # outside, 4 cm from the inner walls (a lid: 2 cm)
    assert d[1] == pytest.approx(-0.02, abs=0.003)
    assert d[2] == pytest.approx(np.hypot(0.04, 0.01), abs=0.003)


@pytest.mark.parametrize("fmt", ["ascii", "binary_big_endian"])
def test_ply_face_properties_around_the_corner_list_are_read_past(tmp_path, fmt):
    """Flags and texture-coordinate lists beside ``vertex_indices`` (or ``vertex_index``)."""
    head = (f"ply\nformat {fmt} 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
            "element face 2\nproperty uchar flags\nproperty list uchar float texcoord\n"
            "property list uchar int vertex_index\nproperty int material\nend_header\n").encode()
    quad = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    # (flags, texcoords, corners, material): a texcoord list of another length than the corners.
    faces = [(7, [0.5, 0.5], [0, 1, 2], 3), (9, [], [0, 2, 3], 4)]
    if fmt == "ascii":
        body = "".join(f"{x} {y} {z}\n" for x, y, z in quad) + "".join(
            f"{f} {len(tc)} {' '.join(map(str, tc))} 3 {' '.join(map(str, c))} {m}\n" for f, tc, c, m in faces)
        data = body.encode()
    else:
        data = np.asarray(quad, ">f4").tobytes() + b"".join(
            bytes([f, len(tc)]) + np.asarray(tc, ">f4").tobytes() + b"\x03" + np.asarray(c, ">i4").tobytes()
            + np.int32(m).astype(">i4").tobytes() for f, tc, c, m in faces)
    path = tmp_path / "faces.ply"
    path.write_bytes(head + data)
    v, t = load_mesh(path)
    assert v.shape == (4, 3) and t.tolist() == [[0, 1, 2], [0, 2, 3]]
