"""Replay of a baked cache in Blender (sph_addon/blender/replay/objects.py).

A synthetic cache (a ball of particles drifting along +x, surfaces meshed by the core) is
replayed; the evaluated geometry must equal the files, a Cycles render must show the
liquid, and on 4.5+ a fresh Blender without the add-on must render it too (farm path).
"""

import json
import math
import os
import re
import shutil
import subprocess
import types
from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import BLENDER, python_for_subprocess
from evaluated import evaluated_mesh, evaluated_mesh_attributes, evaluated_point_attributes, evaluated_points
from rendering import load_png, projected_window, render, tiny_cycles

SPACING = 0.04
FRAMES = (1, 2, 3)          # frames with files; MISSING has none
MISSING = 5
DRIFT = 0.06                # x shift per frame (m)
CHILD = Path(__file__).with_name("replay_child.py")
RES = (96, 64)


# ---------------------------------------------------------------------------- cache

def _ball(frame: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Particles on a grid inside a 0.25 m ball; frame 2 drops every 7th so counts differ between frames."""
    r = np.arange(-0.25, 0.25 + 1e-9, SPACING)
    g = np.stack(np.meshgrid(r, r, r, indexing="ij"), -1).reshape(-1, 3)
    ids = np.flatnonzero(np.linalg.norm(g, axis=1) <= 0.25)
    if frame == 2:
        ids = ids[ids % 7 != 0]
    x = g[ids] + np.array([DRIFT * frame, 0.0, 0.5])
    v = np.column_stack([np.full(len(ids), 1.5), ids * 1e-3, -x[:, 2]])
    return x, v, ids


def _material(frame: int) -> np.ndarray:
    """Two materials, one half of the ball each (so each meshes as one piece)."""
    x = _ball(frame)[0]
    return (x[:, 0] > DRIFT * frame).astype(np.uint8)


def _age(frame: int) -> np.ndarray:
    return (_ball(frame)[2] % 5 * 0.1 + frame).astype(np.float32)


def _time_level(frame: int) -> np.ndarray:
    """The sph model's cache field: each particle's time-step level (0-3)."""
    return ((_ball(frame)[2] + frame) % 4).astype(np.uint8)


@pytest.fixture(scope="module")
def cache_root(ext, tmp_path_factory):
    """``ROOT/sph_cache`` with particles and core-meshed surfaces for FRAMES (one numba compile per session)."""
    ext.sub("runtime").prepare_numba()
    cache_mod, surface = ext.core("cache.cache_dir"), ext.core("surface")
    stage = ext.core("surface.stage")
    root = tmp_path_factory.mktemp("replay")
    cache = cache_mod.CacheDir(root / "sph_cache")
    settings = surface.default_settings(SPACING)
    for frame in FRAMES:
        x, v, ids = _ball(frame)
        heat = {"temperature": (20.0 + 10.0 * x[:, 2], "<f4"), "melt": (np.clip(x[:, 0], 0.0, 1.0), "<f4")}
        cache.write_particles(frame, x, v, ids, _material(frame), age=_age(frame),
                              extra={"time_level": (_time_level(frame), "u1"), **heat})
        stage.mesh_frame(cache.root, frame, settings)
    return root


@pytest.fixture
def scene_file(empty_file, cache_root, request):
    """An empty .blend saved beside ``sph_cache``, so that ``//sph_cache`` resolves."""
    path = cache_root / f"{request.node.name.replace('[', '_').replace(']', '')}.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def _domain() -> bpy.types.Object:
    ob = bpy.data.objects.new("Domain", None)
    bpy.context.scene.collection.objects.link(ob)
    return ob


@pytest.fixture
def read_ply(ext):
    return ext.core("cache.plyio").read_ply


MODES = ["handler"] if BLENDER < (4, 5) else ["import_ply", "handler"]


@pytest.fixture(params=MODES)
def replay(ext, monkeypatch, request):
    """The replay module, in each mechanism this Blender can run (4.5+ also runs 4.2's handler path)."""
    module = ext.sub("replay.objects")
    if request.param == "handler":
        monkeypatch.setattr(module, "native_import_available", lambda: False)
    return module


def _xyz(vertices, prefix: str = "") -> np.ndarray:
    return np.column_stack([vertices[prefix + a] for a in "xyz"]).astype(np.float32)


# ---------------------------------------------------------------------------- geometry

def test_file_pattern_follows_cache_layout(ext):
    replay, cache_mod = ext.sub("replay.objects"), ext.core("cache.cache_dir")
    cache = cache_mod.CacheDir("//sph_cache")
    assert replay._file_pattern("//sph_cache", "particles").format(frame=7) == cache.particles_path(7).as_posix()
    assert replay._file_pattern("//sph_cache/", "surface").format(frame=12) == cache.surface_path(12).as_posix()
    # Braces in a directory must survive Format String; Windows separators become POSIX ones.
    assert replay._file_pattern("/a{b}", "surface").format(frame=1) == "/a{b}/surface/surface_0001.ply"
    assert replay._file_pattern("//c\\d", "surface").format(frame=1) == "//c/d/surface/surface_0001.ply"


@pytest.mark.parametrize("frame", [1, 2])
def test_evaluated_geometry_is_the_files(replay, cache_root, scene_file, read_ply, frame):
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(frame)

    pfile = read_ply(cache_root / "sph_cache" / "particles" / f"particles_{frame:04d}.ply").vertices
    pos, vel = evaluated_points(particles)
    assert len(pos) == len(pfile) > 500
    np.testing.assert_array_equal(pos, _xyz(pfile))
    assert vel is not None, "particles carry no velocity attribute"
    np.testing.assert_allclose(vel, _xyz(pfile, "v"), rtol=0, atol=1e-7)

    sfile = read_ply(cache_root / "sph_cache" / "surface" / f"surface_{frame:04d}.ply")
    pos, corners, vel = evaluated_mesh(surface)
    assert len(pos) == len(sfile.vertices) > 100
    assert len(corners) == sfile.faces.size
    np.testing.assert_array_equal(pos, _xyz(sfile.vertices))
    np.testing.assert_array_equal(corners, sfile.faces.ravel())
    assert vel is not None, "surface carries no velocity attribute"
    np.testing.assert_allclose(vel, _xyz(sfile.vertices, "v"), rtol=0, atol=1e-7)


def test_replay_attributes(replay, scene_file, read_ply, cache_root):
    """Integer id and material, velocity once (no vx vy vz), speed, age, the models' cache fields (the sph
    model's integer time_level) and the temperature and melt fraction, as in the files, in both mechanisms."""
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(2)
    pfile = read_ply(cache_root / "sph_cache" / "particles" / "particles_0002.ply").vertices
    attrs = evaluated_point_attributes(particles)
    assert {"vx", "vy", "vz", "particle_id"}.isdisjoint(attrs), sorted(attrs)
    assert {name: attrs[name][0] for name in ("id", "material", "velocity", "speed", "age")} == {
        "id": 'INT', "material": 'INT', "velocity": 'FLOAT_VECTOR', "speed": 'FLOAT', "age": 'FLOAT'}
    np.testing.assert_array_equal(attrs["id"][1], pfile["id"])
    assert set(np.unique(attrs["material"][1])) == {0, 1}
    np.testing.assert_array_equal(attrs["material"][1], pfile["material"])
    velocity = _xyz(pfile, "v")
    np.testing.assert_allclose(attrs["velocity"][1], velocity, atol=1e-7)
    np.testing.assert_allclose(attrs["speed"][1], np.linalg.norm(velocity, axis=1), rtol=1e-6)
    np.testing.assert_allclose(attrs["age"][1], pfile["age"], rtol=1e-7)
    assert attrs["time_level"][0] == 'INT'
    np.testing.assert_array_equal(attrs["time_level"][1], pfile["time_level"])
    assert set(np.unique(attrs["time_level"][1])) == {0, 1, 2, 3}
    for name, field in (("temperature", "temperature"), ("melt", "melt"), ("temperature_celsius", "temperature")):
        assert attrs[name][0] == 'FLOAT'  # heat's fields, and the temperature under the name a shader reads
        np.testing.assert_allclose(attrs[name][1], pfile[field], rtol=1e-7)

    sfile = read_ply(cache_root / "sph_cache" / "surface" / "surface_0002.ply").vertices
    attrs = evaluated_mesh_attributes(surface)
    assert {"vx", "vy", "vz"}.isdisjoint(attrs), sorted(attrs)
    assert (attrs["material"][0], attrs["velocity"][0], attrs["speed"][0]) == ('INT', 'FLOAT_VECTOR', 'FLOAT')
    np.testing.assert_array_equal(attrs["material"][1], sfile["material"])
    assert set(np.unique(attrs["material"][1])) == {0, 1}
    np.testing.assert_allclose(attrs["speed"][1], np.linalg.norm(_xyz(sfile, "v"), axis=1), rtol=1e-5)
    for name, field in (("temperature", "temperature"), ("melt", "melt"), ("temperature_celsius", "temperature")):
        np.testing.assert_allclose(attrs[name][1], sfile[field], rtol=1e-7)  # the surface carries them too


def test_velocity_follows_the_timeline_in_slow_motion(replay, cache_root, tmp_path, read_ply):
    """A bake at time scale 0.25 moves 4x slower on the timeline: velocity (motion blur) is scaled, speed is not.

    The time scale is read from the cache's stored scene, and follows it when a new bake changes it.
    """
    shutil.copytree(cache_root / "sph_cache", tmp_path / "sph_cache")
    stored = tmp_path / "sph_cache" / "scene.json"
    stored.write_text(json.dumps({"simulation": {"time_scale": 0.25}}))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "slow.blend"))
    domain = _domain()
    particles, surface = replay.ensure_replay(domain, "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(2)
    velocity = _xyz(read_ply(tmp_path / "sph_cache" / "particles" / "particles_0002.ply").vertices, "v")
    surface_velocity = _xyz(read_ply(tmp_path / "sph_cache" / "surface" / "surface_0002.ply").vertices, "v")
    attrs = evaluated_point_attributes(particles)
    np.testing.assert_allclose(attrs["velocity"][1], 0.25 * velocity, atol=1e-7)
    np.testing.assert_allclose(attrs["speed"][1], np.linalg.norm(velocity, axis=1), rtol=1e-6)
    np.testing.assert_allclose(evaluated_mesh_attributes(surface)["velocity"][1], 0.25 * surface_velocity, atol=1e-7)

    stored.write_text(json.dumps({"simulation": {}}))  # re-baked at the default time scale
    replay.refresh(domain)
    np.testing.assert_allclose(evaluated_point_attributes(particles)["velocity"][1], velocity, atol=1e-7)


def test_cache_without_newer_fields_still_gives_integer_ids(ext, replay, cache_root, tmp_path, read_ply):
    """A cache written before particle_id and age: ids come from ``id`` (5.0 imports it; 4.5 drops it)."""
    plyio = ext.core("cache.plyio")
    x, v, ids = _ball(1)
    fields = [(a, "<f4") for a in ("x", "y", "z", "vx", "vy", "vz")] + [("id", "<u4"), ("material", "u1")]
    rec = np.zeros(len(ids), fields)
    for k, a in enumerate("xyz"):
        rec[a], rec["v" + a] = x[:, k], v[:, k]
    rec["id"] = ids
    plyio.write_ply(tmp_path / "sph_cache" / "particles" / "particles_0001.ply", rec)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "old.blend"))
    particles, _ = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(1)
    attrs = evaluated_point_attributes(particles)
    assert len(evaluated_points(particles)[0]) == len(ids) and not {"age", "time_level"} & set(attrs)
    if particles["sph_replay_mode"] == "import_ply" and BLENDER < (5, 0):
        assert "id" not in attrs, "4.5's importer drops a property named id: no ids rather than zeros"
    else:
        assert attrs["id"][0] == 'INT'
        np.testing.assert_array_equal(attrs["id"][1], ids)


def test_frames_outside_the_cache_show_nothing_before_and_the_last_after(replay, scene_file, read_ply, cache_root):
    """The replay reads only frames with files (no importer error): before them it shows nothing (the
    simulation has not started), after them it holds the last."""
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    assert replay.frame_range(particles) == replay.frame_range(surface) == (FRAMES[0], FRAMES[-1])
    scene = bpy.context.scene
    for frame, shown in ((MISSING, 3), (0, None), (-7, None), (2, 2)):
        scene.frame_set(frame)
        assert len(evaluated_points(particles)[0]) == (len(_ball(shown)[2]) if shown else 0), frame
        sfile = read_ply(cache_root / "sph_cache" / "surface" / f"surface_{shown:04d}.ply") if shown else None
        assert len(evaluated_mesh(surface)[0]) == (len(sfile.vertices) if shown else 0), frame


def test_empty_frames_at_the_ends_are_not_read(replay, cache_root, tmp_path, ext):
    """An inflow's first frame holds no particle: Import PLY would print "no vertices" for its files,
    so the range starts at the first frame with particles, and the empty frame shows nothing."""
    shutil.copytree(cache_root / "sph_cache", tmp_path / "sph_cache")
    cache = ext.core("cache.cache_dir").CacheDir(tmp_path / "sph_cache")
    empty = np.zeros((0, 3))
    cache.write_particles(0, empty, empty, np.zeros(0, np.int64), np.zeros(0, np.uint8))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "inflow.blend"))
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    assert replay.frame_range(particles) == (FRAMES[0], FRAMES[-1])
    bpy.context.scene.frame_set(0)
    assert len(evaluated_points(particles)[0]) == 0


def test_file_with_older_replay_groups_is_upgraded_on_open(replay, scene_file, cache_root, ext):
    """Groups saved by the previous version have no frame range: opening the file swaps in current ones,
    keeping the user's inputs, and names the cache's frames."""
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    mine = bpy.data.materials.new("Mine")
    ext.sub("replay.inputs").set_input(surface, "Material", mine)
    for ob in (particles, surface):
        group = ob.modifiers["SPH Replay"].node_group
        group["sph_replay_group"] = group["sph_replay_group"].rsplit("/", 1)[0] + "/1"
        for item in [i for i in group.interface.items_tree if i.name in ("First Frame", "Last Frame")]:
            group.interface.remove(item)
        assert replay.frame_range(ob) is None
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(scene_file))
    particles, surface = replay.find_replay(bpy.data.objects["Domain"])
    assert replay.frame_range(particles) == replay.frame_range(surface) == (FRAMES[0], FRAMES[-1])
    assert ext.sub("replay.inputs").get_input(surface, "Material") == bpy.data.materials["Mine"]
    assert not any(ng.get("sph_replay_group", "").endswith("/1") for ng in bpy.data.node_groups)
    bpy.context.scene.frame_set(MISSING)
    assert len(evaluated_points(particles)[0]) == len(_ball(3)[2])


def test_no_files_show_nothing(replay, scene_file):
    particles, surface = replay.ensure_replay(_domain(), "//not_baked", SPACING / 2)
    assert replay.frame_range(particles)[0] > replay.frame_range(particles)[1]
    for frame in (1, 2):
        bpy.context.scene.frame_set(frame)
        assert len(evaluated_points(particles)[0]) == 0
        pos, corners, _ = evaluated_mesh(surface)
        assert len(pos) == 0 and len(corners) == 0


def test_reopened_file_shows_its_frame(replay, scene_file):
    """Handler mode empties the meshes on save and reloads them (save_post, load_post); import mode needs nothing."""
    _, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(2)
    bpy.ops.wm.save_mainfile()
    if surface["sph_replay_mode"] == "handler":
        assert len(surface.data.vertices) > 0, "save_post did not reload the frame"
    bpy.ops.wm.open_mainfile(filepath=str(scene_file))
    particles, surface = replay.find_replay(bpy.data.objects["Domain"])
    assert len(evaluated_points(particles)[0]) == len(_ball(2)[2])
    assert len(evaluated_mesh(surface)[0]) > 100


# ---------------------------------------------------------------------------- bookkeeping

def _replay_ids() -> tuple[int, int, int, int]:
    return (len(bpy.data.objects), len(bpy.data.meshes), len(bpy.data.node_groups), len(bpy.data.materials))


def test_ensure_is_idempotent_and_remove_cleans_up(ext, scene_file):
    replay = ext.sub("replay.objects")
    domain = _domain()
    before = _replay_ids()
    handlers_before = {k: len(getattr(bpy.app.handlers, k)) for k in ("frame_change_post", "load_post")}
    particles, surface = replay.ensure_replay(domain, "//sph_cache", 0.02)
    assert particles.name == "Domain Particles" and surface.name == "Domain Surface"
    assert particles["sph_replay"] == "particles" and surface["sph_replay"] == "surface"
    assert particles["sph_domain"] == surface["sph_domain"] == "Domain"
    assert particles.users_collection[0] == domain.users_collection[0]
    after_first = _replay_ids()

    # User edits survive a second call: a material of their own and a radius they typed.
    mine = bpy.data.materials.new("Mine")
    ext.sub("replay.inputs").set_input(surface, "Material", mine)
    ext.sub("replay.inputs").set_input(particles, "Radius", 0.05)
    again = replay.ensure_replay(domain, "//sph_cache", 0.02)
    assert again == (particles, surface)
    assert _replay_ids() == (after_first[0], after_first[1], after_first[2], after_first[3] + 1)
    assert ext.sub("replay.inputs").get_input(surface, "Material") == mine
    assert ext.sub("replay.inputs").get_input(particles, "Radius") == pytest.approx(0.05)
    assert replay.find_replay(domain) == (particles, surface)
    assert {k: len(getattr(bpy.app.handlers, k)) for k in handlers_before} == handlers_before
    replay.register()  # a second register() must not add a second handler
    assert {k: len(getattr(bpy.app.handlers, k)) for k in handlers_before} == handlers_before

    # An untouched radius follows the bake's particle radius.
    ext.sub("replay.inputs").set_input(particles, "Radius", 0.02)
    replay.ensure_replay(domain, "//sph_cache", 0.03)
    assert ext.sub("replay.inputs").get_input(particles, "Radius") == pytest.approx(0.03)

    replay.remove_replay(domain)
    assert replay.find_replay(domain) == (None, None)
    assert _replay_ids() == (before[0], before[1], before[2], before[3] + 1)  # "Mine" is the user's
    assert not any(ng.get("sph_replay_group") for ng in bpy.data.node_groups)


def test_particles_show_in_viewport_and_render_on_request(ext, scene_file):
    """Render Particles (off by default) drives the particle object's render visibility, never the viewport's."""
    replay = ext.sub("replay.objects")
    domain = _domain()
    d = domain.sph.domain
    assert d.render_particles is False
    particles, surface = replay.ensure_replay(domain, "//sph_cache", SPACING / 2, d.render_particles)
    assert particles.hide_render and not surface.hide_render
    assert particles.visible_get() and not particles.hide_viewport
    d.render_particles = True
    assert not particles.hide_render
    replay.ensure_replay(domain, "//sph_cache", SPACING / 2, d.render_particles)
    assert not particles.hide_render, "a re-bake keeps the artist's choice"
    d.render_particles = False
    assert particles.hide_render and particles.visible_get()


@pytest.mark.parametrize("hidden_by_hand", [False, True])
def test_file_from_before_render_particles_keeps_its_render(ext, scene_file, hidden_by_hand):
    """A Domain saved before the setting existed stores no value for it, and its particle object rendered
    unless the artist hid it: opened (load handler) and re-baked (finish), the file renders as it did."""
    replay, baking = ext.sub("replay.objects"), ext.sub("baking")
    domain = _domain()
    domain.sph.role = 'DOMAIN'
    particles, _ = replay.ensure_replay(domain, "//sph_cache", SPACING / 2)
    particles.hide_render = hidden_by_hand   # the old add-on left it rendered; the artist may have hidden it
    domain.sph.domain.pop("render_particles", None)
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(scene_file))
    domain = bpy.data.objects["Domain"]
    assert "render_particles" in domain.sph.domain, "the load handler stored the old file's behaviour"
    assert domain.sph.domain.render_particles is not hidden_by_hand
    # Appended or opened without the handler: the bake's finish upgrades it the same way.
    domain.sph.domain.pop("render_particles")
    domain.sph.domain.particle_spacing = SPACING
    baking.finish(bpy.context.scene, types.SimpleNamespace(domain_name="Domain"))
    particles, _ = replay.find_replay(domain)
    assert particles.hide_render is hidden_by_hand
    assert domain.sph.domain.render_particles is not hidden_by_hand


def test_refresh_shows_rewritten_files(ext, replay, cache_root, tmp_path):
    """Same frame, new file: refresh() makes Blender look again (Import PLY compares whole-second mtimes)."""
    shutil.copytree(cache_root / "sph_cache", tmp_path / "sph_cache")
    old = tmp_path / "sph_cache" / "particles" / "particles_0001.ply"
    os.utime(old, (1.6e9, 1.6e9))  # a bake long ago, whatever the clock says now
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "refresh.blend"))
    cache_mod = ext.core("cache.cache_dir")
    domain = _domain()
    particles, _ = replay.ensure_replay(domain, "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(1)
    assert len(evaluated_points(particles)[0]) == len(_ball(1)[2])
    x = np.random.default_rng(1).random((123, 3))
    cache_mod.CacheDir(tmp_path / "sph_cache").write_particles(1, x, x, np.arange(123), np.zeros(123, np.uint8))
    assert len(evaluated_points(particles)[0]) == len(_ball(1)[2]), "nothing told Blender yet"
    replay.refresh(domain)
    pos, _ = evaluated_points(particles)
    assert len(pos) == 123
    np.testing.assert_array_equal(pos, x.astype(np.float32))


def test_broken_files_show_nothing(ext, replay, cache_root, tmp_path):
    """A truncated particle file and a surface whose triangles point past its vertices: no crash, nothing shown."""
    shutil.copytree(cache_root / "sph_cache", tmp_path / "sph_cache")
    plyio = ext.core("cache.plyio")
    good = tmp_path / "sph_cache/particles/particles_0001.ply"
    (tmp_path / "sph_cache/particles/particles_0004.ply").write_bytes(good.read_bytes()[:1000])
    verts = np.zeros(4, [(a, "<f4") for a in ("x", "y", "z", "vx", "vy", "vz")])
    plyio.write_ply(tmp_path / "sph_cache/surface/surface_0004.ply", verts, np.array([[0, 1, 2], [1, 3, 9]]))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "broken.blend"))
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(4)
    assert len(evaluated_points(particles)[0]) == 0
    pos, corners, _ = evaluated_mesh(surface)
    if surface["sph_replay_mode"] == "import_ply":
        # Blender's own importer drops the bad triangle (up to 5.1) or points its bad corner at
        # vertex 0 (5.2+, with a warning): a valid mesh either way.
        assert len(corners) in (3, 6) and corners.max() < len(pos)
    else:
        assert len(corners) == 0, "the handler refuses the whole file"
    bpy.context.scene.frame_set(1)
    assert len(evaluated_points(particles)[0]) == len(_ball(1)[2])


def test_handler_leaves_edit_mode_alone(ext, monkeypatch, scene_file, read_ply, cache_root):
    replay = ext.sub("replay.objects")
    monkeypatch.setattr(replay, "native_import_available", lambda: False)
    _, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    scene = bpy.context.scene
    scene.frame_set(1)
    n1 = len(surface.data.vertices)
    bpy.context.view_layer.objects.active = surface
    bpy.ops.object.mode_set(mode='EDIT')
    scene.frame_set(2)
    bpy.ops.object.mode_set(mode='OBJECT')
    assert len(surface.data.vertices) == n1, "the handler replaced a mesh being edited"
    scene.frame_set(3)
    assert len(surface.data.vertices) == len(read_ply(cache_root / "sph_cache/surface/surface_0003.ply").vertices)


@pytest.mark.skipif(BLENDER < (4, 5), reason="needs the Import PLY node")
def test_handler_replay_upgrades_to_import(ext, monkeypatch, scene_file):
    """A 4.2 file opened in 4.5+: ensure_replay switches the same objects to the Python-free mechanism."""
    replay = ext.sub("replay.objects")
    domain = _domain()
    monkeypatch.setattr(replay, "native_import_available", lambda: False)
    particles, surface = replay.ensure_replay(domain, "//sph_cache", SPACING / 2)
    bpy.context.scene.frame_set(1)
    assert len(surface.data.vertices) > 0
    monkeypatch.undo()
    assert replay.ensure_replay(domain, "//sph_cache", SPACING / 2) == (particles, surface)
    assert surface["sph_replay_mode"] == particles["sph_replay_mode"] == "import_ply"
    assert len(surface.data.vertices) == 0, "the handler's frame stays in the mesh"
    assert sorted(ng.name for ng in bpy.data.node_groups) == ["SPH Replay Particles", "SPH Replay Surface"]
    bpy.context.scene.frame_set(2)
    assert len(evaluated_points(particles)[0]) == len(_ball(2)[2])


# ---------------------------------------------------------------------------- no importer errors

QUIET_CHILD = Path(__file__).with_name("quiet_child.py")
# What Blender prints when an importer fails: "ERROR (io.ply): ... PLY Importer: surface_0001: Invalid PLY header"
# (4.5), "io.ply | ERROR PLY Importer: ..." (5.0), "Error: PLY Importer: ..." (the report).
IMPORTER_ERROR = re.compile(r"(?i)ply importer|invalid ply|io\.ply|\berror\b")


def _saved_case(ext, tmp_path, cache_root, name: str, keep_surfaces: bool = True, free: bool = False) -> Path:
    """A .blend beside a copy of the cache whose replay objects were made the way a bake's end makes them."""
    folder = tmp_path / name
    shutil.copytree(cache_root / "sph_cache", folder / "sph_cache")
    if not keep_surfaces:
        shutil.rmtree(folder / "sph_cache" / "surface")
    bpy.ops.wm.read_homefile(use_empty=True)
    path = folder / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    domain = _domain()
    domain.sph.role = 'DOMAIN'
    domain.sph.domain.particle_spacing = SPACING
    ext.sub("baking").finish(bpy.context.scene, types.SimpleNamespace(domain_name=domain.name))
    if free:
        assert bpy.ops.sph.free_bake(domain=domain.name) == {'FINISHED'}
    bpy.ops.wm.save_mainfile()
    return path


@pytest.mark.parametrize("addon", [False, True] if BLENDER >= (4, 5) else [True],
                         ids=lambda a: "with_addon" if a else "farm")
def test_replay_prints_no_importer_error(ext, cache_root, tmp_path, addon):
    """A baked-but-unmeshed cache, frames outside the cache and a freed bake: Blender prints no importer
    error, in a fresh process, with the add-on (an artist) and without it (a render farm, 4.5+)."""
    unmeshed = _saved_case(ext, tmp_path, cache_root, "unmeshed", keep_surfaces=False)
    full = _saved_case(ext, tmp_path, cache_root, "full")
    freed = _saved_case(ext, tmp_path, cache_root, "freed", free=True)
    jobs = [f"{unmeshed}:1,2,{MISSING}", f"{full}:0,{MISSING}", f"{freed}:1,{MISSING}"]
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    r = subprocess.run([python_for_subprocess(), str(QUIET_CHILD), *(["--addon"] if addon else []), *jobs],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    shown = json.loads(r.stdout.strip().splitlines()[-1])
    n = {k: len(_ball(k)[2]) for k in FRAMES}
    assert shown[str(unmeshed)] == {"1": [n[1], 0], "2": [n[2], 0], str(MISSING): [n[3], 0]}
    assert shown[str(full)]["0"] == [0, 0], "before the first frame: nothing"
    assert shown[str(full)][str(MISSING)][0] == n[3] and shown[str(full)][str(MISSING)][1] > 100
    assert shown[str(freed)] == {"1": [0, 0], str(MISSING): [0, 0]}
    printed = r.stdout.splitlines()[:-1] + r.stderr.splitlines()
    errors = [line for line in printed if IMPORTER_ERROR.search(line)]
    assert not errors, "\n".join(errors)


# ---------------------------------------------------------------------------- rendering

def _setuprender(scene, tmp: Path) -> None:
    """Camera looking along +y at the ball, a sun, a dim world; tiny CPU Cycles render."""
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    cam.location = (DRIFT * 2, -2.0, 0.5)
    cam.rotation_euler = (math.pi / 2, 0.0, 0.0)
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", 'SUN'))
    sun.data.energy = 4.0
    sun.rotation_euler = (0.6, 0.2, 0.4)
    for ob in (cam, sun):
        scene.collection.objects.link(ob)
    scene.camera = cam
    scene.world = bpy.data.worlds.new("World")
    scene.world.color = (0.05, 0.05, 0.05)
    if bpy.app.version < (5, 0, 0):
        scene.world.use_nodes = False
    tiny_cycles(scene, RES)


def _liquid_window(scene, frame: int, margin: int = 0, core: bool = False) -> tuple[slice, slice]:
    """Pixel rows/columns of the projected bounding box of the frame's particles (+ margin pixels).

    ``core``: of the particles within 0.15 m of the ball's centre only, a window the liquid fills.
    """
    x = _ball(frame)[0]
    if core:
        x = x[np.linalg.norm(x - x.mean(0), axis=1) < 0.15]
    return projected_window(scene, x.min(0) - SPACING, x.max(0) + SPACING, margin)


def _inside_outside(diff: np.ndarray, scene, frame: int) -> tuple[float, float]:
    """Fraction of pixels that changed (> 0.05) where the liquid is, and the largest change far from it."""
    rows, cols = _liquid_window(scene, frame, core=True)
    inside = float((diff[rows, cols] > 0.05).mean())
    rows_m, cols_m = _liquid_window(scene, frame, margin=8)
    mask = np.ones(diff.shape[:2], bool)
    mask[rows_m, cols_m] = False
    return inside, float(diff[mask].max()) if mask.any() else 0.0


def _render_pair(scene, tmp: Path, frame: int, names) -> tuple[np.ndarray, np.ndarray]:
    scene.frame_set(frame)
    shown = render(scene, tmp / "shown.png")
    was = {name: bpy.data.objects[name].hide_render for name in names}
    for name in names:
        bpy.data.objects[name].hide_render = True
    hidden = render(scene, tmp / "hidden.png")
    for name, value in was.items():
        bpy.data.objects[name].hide_render = value
    return shown, hidden


def test_render_shows_liquid(replay, scene_file, tmp_path):
    scene = bpy.context.scene
    _setuprender(scene, tmp_path)
    particles, surface = replay.ensure_replay(_domain(), "//sph_cache", SPACING / 2)
    shown, hidden = _render_pair(scene, tmp_path, 2, (particles.name, surface.name))
    inside, outside = _inside_outside(np.abs(shown - hidden).mean(-1), scene, 2)
    assert inside > 0.9, f"the liquid barely shows: {inside:.0%} of its window changed"
    assert outside < 0.02, f"the render changed far from the liquid (by up to {outside:.3f})"
    # Light blue: blue beats red where the liquid is.
    rows, cols = _liquid_window(scene, 2, core=True)
    assert shown[rows, cols, 2].mean() > shown[rows, cols, 0].mean()


@pytest.mark.skipif(BLENDER < (4, 5), reason="4.2 has no Import PLY node; its render path needs the add-on")
def test_farm_renders_without_addon(ext, scene_file, tmp_path):
    replay = ext.sub("replay.objects")
    scene = bpy.context.scene
    _setuprender(scene, tmp_path)
    domain = _domain()
    particles, surface = replay.ensure_replay(domain, "//sph_cache", SPACING / 2)
    names = (particles.name, surface.name)
    shown, hidden = _render_pair(scene, tmp_path, 2, names)
    # Saved as a farm's bake saves it: the surface's frames named for renders only (meshing comes
    # next), so the viewport shows no surface and the farm render reads it.
    replay.set_frame_range(surface, 1, 0)
    assert replay.expect_surfaces(domain) and replay.frame_range(surface, render=True) == (FRAMES[0], FRAMES[-1])
    scene.frame_set(2)
    assert len(evaluated_mesh(surface)[0]) == 0
    scene.frame_set(1)  # saved on another frame: the farm must pick the frame it renders
    bpy.ops.wm.save_mainfile()

    out = tmp_path / "farm.png"
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    r = subprocess.run([python_for_subprocess(), str(CHILD), str(scene_file), "2", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["addon_modules"] == [] and report["frame_handlers"] == [] and not report["auto_exec"]
    farm = load_png(out)

    inside, outside = _inside_outside(np.abs(farm - hidden).mean(-1), scene, 2)
    assert inside > 0.9, f"the farm render lacks the liquid: {inside:.0%} of its window changed"
    assert outside < 0.02
    assert float(np.abs(farm - shown).mean()) < 0.01, "the farm render differs from the in-process render"
