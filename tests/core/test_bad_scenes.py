"""Malformed scene files and referenced meshes: exit 2, one sentence naming the field, no
traceback, nothing written; ``validate`` refuses everything ``bake`` would refuse before simulating.

Run in-process (``conftest.run_main``): no case here reaches the simulation.
"""

import json
import warnings

import numpy as np
import pytest
from conftest import REPO, run_main, scene_dict

from sph_addon.core.cache.plyio import read_ply

MESHES = REPO / "tests" / "data" / "meshes"
_PLY_HEAD = b"ply\nformat ascii 1.0\n"
_TRIANGLE = b"property float x\nproperty float y\nproperty float z\n"


def _mesh_collider(path: str, **extra) -> dict:
    return scene_dict(colliders=[{"type": "mesh", "path": path, **extra}])


def _with_source(**fields) -> dict:
    return scene_dict(sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.4, 0.4, 0.3],
                                **fields}])


def _sphere(**fields) -> dict:
    return scene_dict(sources=[{"type": "sphere", "material": "water", "center": [0.2, 0.2, 0.2], "radius": 0.1,
                                **fields}])


_deep_list = "[" * 5000 + "]" * 5000
_deep_object = '{"a":' * 3000 + "1" + "}" * 3000
_long_number = json.dumps(scene_dict()).replace('"particle_spacing": 0.05', '"particle_spacing": ' + "9" * 5000)

def _box_with_stray_vertex() -> bytes:
    """ASCII body of a unit box and one sliver triangle out to a vertex 5 km away."""
    from reference.analytic_sdf import box_mesh

    v, t = box_mesh()
    v = np.vstack([v, [5000.0, 0.0, 0.0]])
    t = np.vstack([t, [0, 1, 8]])
    return ("".join(f"{x} {y} {z}\n" for x, y, z in v) + "".join(f"3 {a} {b} {c}\n" for a, b, c in t)).encode()


# (id, scene file content (bytes, str or dict), extra files {name: bytes}, what the message must contain)
CASES = [
    ("nested-lists", _deep_list, {}, "more than 64 levels deep"),
    ("nested-objects", _deep_object, {}, "more than 64 levels deep"),
    ("not-utf8", b'{"format": "sph_addon.scene/2", "name": "\xff\xfe"}', {}, "not UTF-8"),
    ("nan-literal", json.dumps(scene_dict()).replace("0.05", "NaN"), {},
     "particle_spacing: must be a finite number, got nan"),
    ("5000-digit-number", _long_number, {}, "particle_spacing: must be a finite number"),
    ("radius-1e308", _sphere(radius=1e308), {}, "sources[0].radius: must be between"),
    ("centre-1e308", _sphere(center=[1e308, 0, 0]), {}, "sources[0].center[0]: must be between"),
    ("rate-1e308", scene_dict(sources=[{"type": "inflow", "material": "water", "rate": 1e308}]), {},
     "sources[0].rate: must be between"),
    ("velocity-1e300", _with_source(velocity=[1e300, 0, 0]), {}, "sources[0].velocity[0]: must be between"),
    ("velocity-over-max-speed", _with_source(velocity=[0, 0, -500]), {},
     "sources[0].velocity: 500 m/s is above simulation.max_speed"),
    ("source-type-list", _with_source(type=["box"]), {}, "sources[0].type: unknown source type ['box']"),
    ("collider-type-list", scene_dict(colliders=[{"type": ["box"]}]), {}, "colliders[0].type: unknown collider"),
    ("model-list", scene_dict(materials=[{"name": "water", "model": ["x"]}]), {}, "materials[0].model: unknown"),
    ("preset-object", scene_dict(materials=[{"name": "water", "preset": {"a": 1}}]), {},
     "materials[0].preset: unknown preset"),
    ("path-5000-chars", _mesh_collider("a" * 5000 + ".ply"), {}, "colliders[0].path: mesh file cannot be opened"),
    ("path-pattern-width", _mesh_collider("m_{frame:>99999999999d}.ply", deforming=True), {},
     "colliders[0].path: not a valid path pattern"),
    ("fps-0.001", scene_dict(fps=0.001), {}, "simulation.max_substeps: a frame lasts 1e+03 s"),
    ("fixed-substeps-too-few", scene_dict(fps=1, simulation={"substeps": 2}), {}, "simulation.substeps"),
    ("work-over-limit", scene_dict(frame_end=1000000, particle_spacing=0.01,
                                   sources=[{"type": "box", "material": "water", "min": [0, 0, 0],
                                             "max": [1, 1, 1]}], colliders=[]), {},
     "frame_end: about 1,000,000 particles x 64 substeps x 999,999 frames"),
    ("ply-count-not-a-number", _mesh_collider("m.ply"),
     {"m.ply": _PLY_HEAD + b"element vertex abc\n" + _TRIANGLE + b"end_header\n"},
     "colliders[0].path: ", ),
    ("ply-count-missing", _mesh_collider("m.ply"),
     {"m.ply": _PLY_HEAD + b"element vertex\n" + _TRIANGLE + b"end_header\n"}, "bad element line"),
    ("ply-empty", _mesh_collider("m.ply"), {"m.ply": b""}, "the file is empty"),
    ("ply-count-10e12", _mesh_collider("m.ply"),
     {"m.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000\n" + _TRIANGLE
      + b"end_header\n"}, "claims 1000000000000 records"),
    ("ply-nan-vertex", _mesh_collider("m.ply"),
     {"m.ply": _PLY_HEAD + b"element vertex 3\n" + _TRIANGLE + b"element face 1\n"
      b"property list uchar int vertex_indices\nend_header\nnan 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"}, "NaN"),
    # One guard of mesh coordinates for every reader: a source box scaled to 1e300 m overflowed the
    # particle estimate (OverflowError).
    ("mesh-source-1e300", scene_dict(sources=[{"type": "mesh", "material": "water", "path": "m.ply"}]),
     {"m.ply": _PLY_HEAD + b"element vertex 3\n" + _TRIANGLE + b"element face 1\n"
      b"property list uchar int vertex_indices\nend_header\n0 0 0\n1e300 0 0\n0 1e300 0\n3 0 1 2\n"},
     "sources[0].path: m.ply: the mesh has NaN, infinite or absurd (beyond 1e+12 m) vertex coordinates"),
    # A NUL byte in a path, as a collider (ValueError: embedded null byte) and as a source.
    ("collider-path-nul", _mesh_collider("m\x00.ply"), {}, "colliders[0].path: the path contains a NUL character"),
    ("source-path-nul", scene_dict(sources=[{"type": "mesh", "material": "water", "path": "m\x00.ply"}]), {},
     "sources[0].path: the path contains a NUL character"),
    # An infinite corner of a quad printed numpy's RuntimeWarnings before the error line.
    ("ply-quad-inf-vertex", _mesh_collider("m.ply"),
     {"m.ply": _PLY_HEAD + b"element vertex 4\n" + _TRIANGLE + b"element face 1\n"
      b"property list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n1 1 inf\n0 1 0\n4 0 1 2 3\n"},
     "colliders[0].path: m.ply: the mesh has NaN, infinite or absurd"),
    # Checks validate made apart from the bake: both now run preflight.check_bake.
    ("inflow-keyed-at-1000-m/s", scene_dict(sources=[{
        "type": "inflow", "material": "water", "center": [0.2, 0.2, 0.5], "radius": 0.05,
        "keyframes": [{"frame": 1, "velocity": [0, 0, -1]}, {"frame": 2, "velocity": [0, 0, -1000]}]}]), {},
     "sources[0].keyframes[1].velocity: 1e+03 m/s is above simulation.max_speed"),
    ("open-mesh-collider", scene_dict(colliders=[{"type": "mesh", "path": "m.ply", "position": [3, 3, 3]}]),
     {"m.ply": (MESHES / "plane_quad.ply").read_bytes()}, "colliders[0].path: m.ply: the mesh encloses no volume"),
    ("open-mesh-outflow", scene_dict(outflows=[{"type": "mesh", "path": "m.ply", "position": [3, 3, 3]}]),
     {"m.ply": (MESHES / "plane_quad.ply").read_bytes()}, "outflows[0].path: m.ply: the mesh encloses no volume"),
    # Surface tension's stable step needs more substeps than allowed: the watch called the motion a blow-up.
    ("surface-tension-beyond-the-substeps",
     scene_dict(materials=[{"name": "water", "preset": "water", "params": {"surface_tension": 100, "density": 1}}]),
     {}, "materials[0]: with these parameters its viscoelastic model is stable only at substeps of at most "
         "0.000224 s, 150 per frame at fps 30, over simulation.max_substeps (64)"),
    ("ply-source-count-not-a-number", scene_dict(sources=[{"type": "mesh", "material": "water", "path": "m.ply"}]),
     {"m.ply": _PLY_HEAD + b"element vertex abc\n" + _TRIANGLE + b"end_header\n"}, "sources[0].path: "),
    ("deforming-frame-file-broken", _mesh_collider("m_{frame:04d}.ply", deforming=True, mode="shell"),
     {**{f"m_{f:04d}.ply": (MESHES / "plane_quad.ply").read_bytes() for f in (1, 3)}, "m_0002.ply": b"ply\n"},
     "colliders[0].path: "),
    # One vertex 5 km away once made the grid huge and the message blamed cell_size.
    ("stray-vertex", _mesh_collider("m.ply"), {"m.ply": _PLY_HEAD + b"element vertex 9\n" + _TRIANGLE
                                                + b"element face 13\nproperty list uchar int vertex_indices\n"
                                                + b"end_header\n" + _box_with_stray_vertex()},
     "colliders[0].path: the distance grid of m.ply would be"),
    # A dynamic body is sampled every half spacing: a kilometre-wide box asked for hundreds of TiB, a
    # sphere of radius 1e6 m raised a broadcast error.
    ("dynamic-box-a-kilometre-wide", scene_dict(colliders=[{"type": "box", "size": [1000, 1000, 1000], "dynamic": True,
                                                            "position": [0.5, 0.5, 2.0]}]),
     {}, "colliders[0].size: a dynamic box this large is sampled at about"),
    ("dynamic-sphere-1e6-m", scene_dict(colliders=[{"type": "sphere", "radius": 1e6, "dynamic": True}]),
     {}, "colliders[0].radius: a dynamic sphere this large"),
    ("grid-over-memory-budget", scene_dict(simulation={"memory_budget_mb": 2},
                                           colliders=[{"type": "mesh", "path": "big.ply", "mode": "shell",
                                                       "cell_size": 0.001, "thickness": 0.001}]),
     {"big.ply": (MESHES / "plane_quad.ply").read_bytes()}, "colliders[0].cell_size: "),
]


def _write_case(tmp_path, content, files) -> tuple:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    scene = tmp_path / "scene.json"
    if isinstance(content, dict):
        content = json.dumps(content)
    scene.write_bytes(content if isinstance(content, bytes) else content.encode())
    return scene


@pytest.mark.parametrize("content,files,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_and_bake_refuse_with_one_sentence(tmp_path, content, files, expected):
    scene = _write_case(tmp_path, content, files)
    before = sorted(tmp_path.iterdir())
    out = tmp_path / "out"
    for args in (("validate", scene), ("bake", scene, "--out", out, "--quiet")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, stdout, stderr = run_main(*args)
        assert not caught, f"the error line only, no warnings: {[str(w.message) for w in caught]}"
        assert code == 2, (args[0], stdout, stderr)
        assert expected in stderr, stderr
        assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("error: "), stderr
        assert len(stderr) < 600, "one sentence, not a dump of the input"
    assert sorted(tmp_path.iterdir()) == before, "nothing may be written for bad input"


def test_validate_and_bake_agree_on_a_frame_range_override(write_scene):
    """A scene whose own range is invalid: both refuse it as it is, both take it with --frames."""
    scene = write_scene(scene_dict(frame_start=5, frame_end=2))
    out = scene.parent / "out"
    for args in (("validate", scene), ("bake", scene, "--out", out, "--quiet")):
        code, _, err = run_main(*args)
        assert code == 2 and "frame_end: must not be before frame_start" in err, (args, err)
    for args in (("validate", scene, "--frames", "1-2"), ("bake", scene, "--out", out, "--frames", "1-2", "--quiet")):
        code, stdout, err = run_main(*args)
        assert code == 0, (args, err)
    assert "frames 1-2" in run_main("validate", scene, "--frames", "1-2")[1]


def test_frames_with_negative_numbers_are_one_sentence(tmp_path, write_scene):
    scene = write_scene(scene_dict())
    code, _, err = run_main("bake", scene, "--out", tmp_path / "out", "--frames", "-3--5")
    assert code == 2 and err.strip() == "error: --frames: the last frame -5 is before the first -3", err
    code, _, err = run_main("bake", scene, "--out", tmp_path / "out", "--frames")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--help" in err, err
    assert not (tmp_path / "out").exists()


def test_negative_frame_range_is_understood(tmp_path, write_scene):
    """``--frames -5--3`` is frames -5 to -3 (Blender frames may be negative), not an unknown option."""
    from sph_addon.cli import _attach_dashed_values, build_parser

    args = build_parser().parse_args(_attach_dashed_values(["bake", "s.json", "--out", "o", "--frames", "-5--3"]))
    assert args.frames == "-5--3"


def test_validate_reports_the_estimate(write_scene):
    code, out, _ = run_main("validate", write_scene(scene_dict()))
    assert code == 0
    assert "valid; about 384 particles" in out and "substeps per frame" in out and "particle-steps" in out


def test_validate_reads_a_valid_mesh_collider_and_sizes_its_grid(tmp_path, write_scene):
    (tmp_path / "quad.ply").write_bytes((MESHES / "plane_quad.ply").read_bytes())
    code, out, err = run_main("validate", write_scene(_mesh_collider("quad.ply", mode="shell")))
    assert code == 0, err
    assert "for 1 distance grids" in out


def test_ply_face_element_with_an_extra_property_is_read(tmp_path):
    """A face element carrying flags beside its indices (what some exporters write) is read, not refused."""
    path = tmp_path / "flags.ply"
    path.write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 4\n" + _TRIANGLE
                     + b"element face 2\nproperty list uchar int vertex_indices\nproperty uchar flags\nend_header\n"
                     + np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], "<f4").tobytes()
                     + b"\x03" + np.array([0, 1, 2], "<i4").tobytes() + b"\x07"
                     + b"\x03" + np.array([0, 2, 3], "<i4").tobytes() + b"\x09")
    assert read_ply(path).faces.tolist() == [[0, 1, 2], [0, 2, 3]]
    # Mixed polygon sizes with a property after the list: walked record by record.
    path.write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 4\n" + _TRIANGLE
                     + b"element face 2\nproperty list uchar int vertex_indices\nproperty uchar flags\nend_header\n"
                     + np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], "<f4").tobytes()
                     + b"\x04" + np.array([0, 1, 2, 3], "<i4").tobytes() + b"\x07"
                     + b"\x03" + np.array([0, 2, 3], "<i4").tobytes() + b"\x09")
    assert read_ply(path).faces.tolist() == [[0, 1, 2], [0, 2, 3], [0, 2, 3]]


def test_stray_vertex_message_names_the_vertices_not_cell_size(tmp_path, write_scene):
    (tmp_path / "m.ply").write_bytes(_PLY_HEAD + b"element vertex 9\n" + _TRIANGLE + b"element face 13\n"
                                     b"property list uchar int vertex_indices\nend_header\n" + _box_with_stray_vertex())
    code, _, err = run_main("validate", write_scene(_mesh_collider("m.ply")))
    assert code == 2 and "1 of its 9 vertices lie up to 5e+03 m from the others, which span 1 x 1 x 1 m; remove " \
                          "those stray vertices" in err, err
    # A stray vertex no triangle uses does not count: the field is built over the triangles.
    body = _box_with_stray_vertex().decode().splitlines()
    (tmp_path / "m.ply").write_bytes(_PLY_HEAD + b"element vertex 9\n" + _TRIANGLE + b"element face 12\n"
                                     b"property list uchar int vertex_indices\nend_header\n"
                                     + "\n".join(body[:-1]).encode() + b"\n")
    code, out, err = run_main("validate", write_scene(_mesh_collider("m.ply", position=[0, 0, -2])))
    assert code == 0 and "valid" in out, err
