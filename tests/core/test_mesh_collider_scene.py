"""Mesh colliders and mesh sources through the scene file and the bake: validation with JSON paths
(nothing written for bad input), the SDF cache in the bake folder, deforming meshes rebuilt per
frame with their cost in the frame stats, and filling a closed mesh with particles.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_main, scene_dict
from reference.analytic_sdf import box_mesh, write_mesh_ply

from sph_addon.core.bake import bake
from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.cache.plyio import read_ply
from sph_addon.core.colliders.shapes import sdf_cache
from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import load_scene, parse_scene
from sph_addon.core.sources.emission import fill_volume
from sph_addon.core.world.simulation import Simulation

MESHES = Path(__file__).resolve().parents[1] / "data" / "meshes"


def _scene(tmp_path: Path, colliders=None, sources=None, **kw) -> Path:
    """A 2-frame scene in ``tmp_path`` with the committed meshes copied next to it."""
    for f in MESHES.iterdir():
        if f.suffix in (".ply", ".obj"):
            shutil.copy(f, tmp_path / f.name)
    kw.setdefault("frame_end", 2)
    kw["simulation"] = {"min_substeps": 10, **kw.get("simulation", {})}
    data = scene_dict(particle_spacing=0.1, **kw)
    data["sources"] = sources or [{"type": "box", "material": "water", "min": [-0.3, -0.3, 0.6],
                                   "max": [0.3, 0.3, 0.9]}]
    default = [{"type": "mesh", "path": "box_dup_flipped.ply"}]
    data["colliders"] = colliders if colliders is not None else default
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data))
    return path


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("collider, where, pattern", [
    ({"type": "mesh", "path": "nowhere.ply"}, "colliders[0].path", "not found"),
    ({"type": "mesh"}, "colliders[0].path", "required"),
    ({"type": "mesh", "path": "box.stl"}, "colliders[0].path", "unsupported mesh format"),
    ({"type": "mesh", "path": "plane_quad.ply", "deforming": True}, "colliders[0].path", "frame:04d"),
    ({"type": "mesh", "path": "m_{frame:04d}.ply", "deforming": True}, "colliders[0].path",
     r"not found: .*m_0001\.ply \(2 of the frames"),
    ({"type": "mesh", "path": "m_{frame:q}.ply", "deforming": True}, "colliders[0].path", "path pattern"),
    ({"type": "mesh", "path": "plane_quad.ply", "frame_paths": []}, "colliders[0].frame_paths",
     "deforming"),
    ({"type": "mesh", "path": "plane_quad.ply", "mode": "open"}, "colliders[0].mode", "unknown value"),
])
def test_scene_validation_names_the_field(tmp_path, collider, where, pattern):
    with pytest.raises(InputError, match=pattern) as err:
        load_scene(_scene(tmp_path, colliders=[{"type": "plane"}, collider][1:]))
    assert err.value.where == where


def _bad_mesh_files(tmp_path: Path) -> None:
    v, t = box_mesh()
    write_mesh_ply(tmp_path / "nofaces.ply", v, np.zeros((0, 3), int))
    nan = v.copy()
    nan[3, 1] = np.nan
    write_mesh_ply(tmp_path / "nan.ply", nan, t)
    flat = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float)
    write_mesh_ply(tmp_path / "flat.ply", flat, [[0, 1, 2]])
    write_mesh_ply(tmp_path / "tiny.ply", *box_mesh((-0.01,) * 3, (0.01,) * 3))
    write_mesh_ply(tmp_path / "wall.ply", *box_mesh((-0.5, -0.5, -0.015), (0.5, 0.5, 0.015)))


@pytest.mark.parametrize("collider, where, pattern", [
    ({"type": "mesh", "path": "nofaces.ply"}, "colliders[1].path", "no faces"),
    ({"type": "mesh", "path": "nan.ply"}, "colliders[1].path", "NaN"),
    ({"type": "mesh", "path": "flat.ply"}, "colliders[1].path", "zero area"),
    ({"type": "mesh", "path": "plane_quad.ply"}, "colliders[1].path", "encloses no volume.*shell"),
    # Closed meshes thinner than a cell were once called open, with hole_closing as the fix.
    ({"type": "mesh", "path": "tiny.ply"}, "colliders[1].cell_size",
     r"closed, but no grid node falls inside it at cell size 0.05 m .*smallest extent is 0.02 m.*lower cell_size "
     r"\(now 0.05 m\) below half its thinnest part"),
    ({"type": "mesh", "path": "wall.ply"}, "colliders[1].cell_size", r"closed, .*smallest extent is 0.03 m"),
    ({"type": "mesh", "path": "plane_quad.ply", "mode": "shell", "thickness": 0.01}, "colliders[1].thickness",
     "at least one cell"),
    ({"type": "mesh", "path": "box_dup_flipped.ply", "cell_size": 0.004}, "colliders[1].cell_size",
     "memory budget"),
])
def test_bad_mesh_content_is_input_error_and_the_bake_writes_nothing(tmp_path, collider, where, pattern):
    _bad_mesh_files(tmp_path)
    # A good mesh collider first: its field is built before the bad one fails, and must not be stored.
    good = {"type": "mesh", "path": "box_internal_face.ply", "position": [0, 0, -2]}
    scene = _scene(tmp_path, colliders=[good, collider], simulation={"memory_budget_mb": 16})
    out = tmp_path / "out"
    with pytest.raises(InputError, match=pattern) as err:
        bake(scene, out)
    assert err.value.where == where
    assert not out.exists()


def test_mesh_source_errors_name_the_source(tmp_path):
    with pytest.raises(InputError, match="not found") as err:
        load_scene(_scene(tmp_path, sources=[{"type": "box", "material": "water", "max": [0.2, 0.2, 0.2]},
                                             {"type": "mesh", "material": "water", "path": "gone.obj"}]))
    assert err.value.where == "sources[1].path"
    sheet = {"type": "mesh", "material": "water", "path": "plane_quad.ply"}
    scene = _scene(tmp_path, colliders=[], sources=[sheet])
    out = tmp_path / "out"
    with pytest.raises(InputError, match="encloses no volume") as err:
        bake(scene, out)
    assert err.value.where == "sources[0].path"
    assert not out.exists()


def test_closed_tank_with_wide_hole_closing_keeps_its_particles(tmp_path):
    """hole_closing of 3 cells (0.06 m at 0.02 m) once turned the whole grid inside and the tank
    deleted every particle, exit 0."""
    tank = {"type": "mesh", "path": "box_dup_flipped.ply", "flip_normals": True, "cell_size": 0.02,
            "hole_closing": 0.06}
    source = {"type": "box", "material": "water", "min": [-0.3, -0.3, -0.3], "max": [0.3, 0.3, 0.3]}
    sim = Simulation(load_scene(_scene(tmp_path, colliders=[tank], sources=[source])))
    assert sim.state.n == 216
    sim.advance_frame()
    assert sim.state.n == 216 and np.abs(sim.state.x).max() < 0.5


_WATER_IN_THE_BOX = {"type": "box", "material": "water", "min": [-0.3, -0.3, -0.3], "max": [0.3, 0.3, 0.3]}


@pytest.mark.parametrize("collider, remedy", [
    ({"type": "mesh", "path": "inward.ply"}, "its faces point inward, as a container's do: set flip_normals"),
    ({"type": "mesh", "path": "box_internal_face.ply"}, "set flip_normals if the mesh is a container"),
    ({"type": "sphere", "radius": 1.0}, "move the sources out of it"),
])
def test_a_collider_swallowing_the_sources_is_refused_before_work(tmp_path, collider, remedy):
    """A container mesh wound inward without flip_normals once deleted all the fluid, exit 0,
    after validate had said valid with an estimate of its particles."""
    v, t = box_mesh()
    write_mesh_ply(tmp_path / "inward.ply", v, t[:, ::-1])
    scene = _scene(tmp_path, colliders=[{"type": "plane", "position": [0, 0, -2]}, collider],
                   sources=[_WATER_IN_THE_BOX])
    before = sorted(tmp_path.iterdir())
    for args in (("validate", scene), ("bake", scene, "--out", tmp_path / "out", "--quiet")):
        code, _, err = run_main(*args)
        assert code == 2, err
        assert err.startswith("error: colliders[1]: its inside covers the sources: 100% of the particles") and \
            remedy in err and len(err.strip().splitlines()) == 1, err
    assert sorted(tmp_path.iterdir()) == before, "nothing may be written"


def test_the_swallow_check_samples_large_sources_coarsely_and_still_takes_a_thin_one(tmp_path):
    """Preflight tests the sources on a lattice coarse enough for ~100k points (here twice the
    spacing, for ~147k particles); a sheet 0.07 m thick has no point on that lattice, so it is
    sampled on the bake's own (0.1 m), where it has one layer, instead of being refused."""
    from sph_addon.core.scene.preflight import preflight

    write_mesh_ply(tmp_path / "sheet.ply", *box_mesh((-0.5, -0.5, 0.45), (0.5, 0.5, 0.52)))
    big = {"type": "box", "material": "water", "min": [3, 3, 0], "max": [10, 10, 3]}
    sheet = {"type": "mesh", "material": "water", "path": "sheet.ply"}
    scene = load_scene(_scene(tmp_path, colliders=[{"type": "plane", "position": [0, 0, -2]}],
                              sources=[big, sheet]))
    assert preflight(scene).particles > 100_000
    with pytest.raises(InputError, match="the mesh is closed, but thinner than the particle spacing can fill"):
        fill_volume("mesh", scene.sources[1][1], 0.2, tmp_path, "sources[1]", 2**30)


def test_the_same_container_with_flip_normals_keeps_its_particles(tmp_path, monkeypatch):
    v, t = box_mesh()
    write_mesh_ply(tmp_path / "inward.ply", v, t[:, ::-1])
    scene = _scene(tmp_path, colliders=[{"type": "mesh", "path": "inward.ply", "flip_normals": True}],
                   sources=[_WATER_IN_THE_BOX])
    code, out, err = run_main("validate", scene)
    assert code == 0 and "about 216 particles" in out, err
    builds = []
    real = sdf_cache.build_mesh_sdf
    monkeypatch.setattr(sdf_cache, "build_mesh_sdf", lambda *a, **kw: builds.append(1) or real(*a, **kw))
    code, _, err = run_main("bake", scene, "--out", tmp_path / "out", "--quiet")
    assert code == 0, err
    assert len(read_ply(tmp_path / "out" / "particles" / "particles_0002.ply").vertices) == 216
    assert len(list((tmp_path / "out" / "sdf").glob("sdf_*.npz"))) == 1
    assert len(builds) == 1, "the bake reuses the field its preflight built"


# --------------------------------------------------------------------------- SDF cache in the bake


def test_bake_caches_sdfs_in_its_folder_and_free_removes_them(tmp_path, monkeypatch):
    scene = _scene(tmp_path, colliders=[{"type": "mesh", "path": "box_internal_face.ply"},
                                        {"type": "mesh", "path": "plane_quad.ply", "mode": "shell",
                                         "position": [0, 0, -1]}])
    out = tmp_path / "out"
    manifest = bake(scene, out)
    files = sorted((out / "sdf").glob("sdf_*.npz"))
    assert len(files) == 2
    assert manifest["stats"]["1"]["sdf_build_s"] > 0.0  # built while setting up, reported on the first frame
    assert manifest["stats"]["2"]["sdf_build_s"] == 0.0  # rigid meshes are not rebuilt

    # A second bake of the same meshes reads the fields instead of building them.
    def no_build(*args, **kwargs):
        raise AssertionError("the SDF was rebuilt instead of read from the bake cache")

    monkeypatch.setattr(sdf_cache, "build_mesh_sdf", no_build)
    bake(scene, out, resume=False, force=True)
    assert sorted((out / "sdf").glob("sdf_*.npz")) == files
    monkeypatch.undo()

    CacheDir(out).free()
    assert not (out / "sdf").exists()


# --------------------------------------------------------------------------- deforming meshes


def _growing_boxes(tmp_path: Path, frames) -> None:
    for f in frames:
        s = 0.3 + 0.1 * (f - 1)
        v, t = box_mesh((-s, -s, -s), (s, s, s))
        write_mesh_ply(tmp_path / f"grow_{f:04d}.ply", v, t)


def test_deforming_mesh_is_rebuilt_every_frame_and_costs_are_reported(tmp_path):
    _growing_boxes(tmp_path, range(1, 4))
    scene = _scene(tmp_path, colliders=[{"type": "mesh", "path": "grow_{frame:04d}.ply", "deforming": True}],
                   frame_end=3)
    manifest = bake(scene, tmp_path / "out")
    stats = manifest["stats"]
    assert all(stats[str(f)]["sdf_build_s"] > 0.0 for f in (1, 2, 3))
    assert len(list((tmp_path / "out" / "sdf").glob("sdf_*.npz"))) == 3

    sim = Simulation(load_scene(scene))
    half = [sim.colliders[0].shape.grid.min()]
    for _ in range(2):
        sim.advance_frame()
        half.append(sim.colliders[0].shape.grid.min())
    # The deepest point of each frame's box is its half-size: 0.3, 0.4, 0.5 m.
    assert np.allclose(half, [-0.3, -0.4, -0.5], atol=1e-5)


def test_frame_paths_hold_each_mesh_until_the_next_entry(tmp_path):
    _growing_boxes(tmp_path, (1, 3))
    scene = _scene(tmp_path, colliders=[{"type": "mesh", "deforming": True, "frame_paths": [
        {"frame": 1, "path": "grow_0001.ply"}, {"frame": 3, "path": "grow_0003.ply"}]}], frame_end=4)
    raw = json.loads(scene.read_text())
    sim = Simulation(load_scene(scene))
    depth = [sim.colliders[0].shape.grid.min()]
    for _ in range(3):
        sim.advance_frame()
        depth.append(sim.colliders[0].shape.grid.min())
    assert np.allclose(depth, [-0.3, -0.3, -0.5, -0.5], atol=1e-5)

    with pytest.raises(InputError, match="increasing") as err:
        parse_scene({**raw, "colliders": [{"type": "mesh", "deforming": True, "frame_paths": [
            {"frame": 3, "path": "grow_0003.ply"}, {"frame": 1, "path": "grow_0001.ply"}]}]}, tmp_path)
    assert err.value.where == "colliders[0].frame_paths[1].frame"


# --------------------------------------------------------------------------- mesh sources


def test_mesh_source_fills_the_mesh_with_the_scene_spacing(tmp_path):
    # Unit box with duplicated and flipped triangles: 10^3 lattice points at 0.1 m.
    src = {"type": "mesh", "material": "water", "path": "box_dup_flipped.ply", "velocity": [1.0, 0.0, 0.0]}
    scene = load_scene(_scene(tmp_path, colliders=[], sources=[src]))
    sim = Simulation(scene)
    assert sim.state.n == 1000
    assert np.abs(sim.state.x).max() < 0.5
    assert np.allclose(sim.state.v, [1.0, 0.0, 0.0])
    assert scene.estimate_particles() >= sim.state.n
    # Jitter is seeded: same seed, same particles; another seed, others.
    jit = [Simulation(load_scene(_scene(tmp_path, colliders=[], sources=[{**src, "jitter": 0.5, "seed": s}])))
           for s in (1, 1, 2)]
    assert np.array_equal(jit[0].state.x, jit[1].state.x)
    assert not np.array_equal(jit[0].state.x, jit[2].state.x)
    assert np.abs(jit[0].state.x).max() < 0.5


def test_mesh_source_particles_inside_a_collider_are_dropped(tmp_path):
    src = {"type": "mesh", "material": "water", "path": "box_dup_flipped.ply"}
    ball = {"type": "sphere", "radius": 0.25}
    sim = Simulation(load_scene(_scene(tmp_path, colliders=[ball], sources=[src])))
    r = np.linalg.norm(sim.state.x, axis=1)
    assert (r > 0.25).all() and 800 < sim.state.n < 1000
