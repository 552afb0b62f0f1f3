"""Baking from Blender: the sample files through the operators and the farm command,
cancel and resume, freeing, and bad scenes reported by object and setting.

Bakes are kept to a few frames: what is tested here is the translation between
Blender and the core (the physics is tested in tests/core).
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
import record_exports
from conftest import ROOT
from evaluated import evaluated_mesh, evaluated_points
from rendering import projected_window, render, tiny_cycles

SAMPLES = ("dam_break", "honey_stool", "mud_suzanne", "jelly_steps", "rubber_suzanne")
# Built by make_samples.py, not baked here: the crate's bake is test_dynamic_colliders.py's, melt_and_float's
# (its chocolate melting) scripts/render_sample_docs.py's.
BUILT = (*SAMPLES, "crate_flood", "melt_and_float")
# The samples rebuilt since the fixtures (tests/data/exported/) were recorded, and their materials now.
REBUILT = {"jelly_steps": [{"model": "elastic", "name": "Jelly", "params": {}, "preset": "jelly"}],
           "rubber_suzanne": [{"model": "viscoelastic", "name": "Water", "params": {"pressure_projection": "none"},
                               "preset": "water"},
                              {"model": "elastic", "name": "Suzanne", "params": {"density": 550.0},
                               "preset": "rubber"}],
           "crate_flood": [{"model": "viscoelastic", "name": "Water", "params": {}, "preset": "water"}],
           "melt_and_float": [{"model": "viscoelastic", "name": "Water", "params": {}, "preset": "water"},
                              {"model": "elastic", "name": "Chocolate", "preset": "dark_chocolate",
                               "params": {"youngs_modulus": 200000.0, "thermal_conductivity": 1000.0,
                                          "melts_into": "Melted Chocolate"}},
                              {"model": "elastic", "name": "Jelly", "params": {"density": 600.0}, "preset": "jelly"},
                              {"model": "sph", "name": "Melted Chocolate", "preset": "melted_chocolate",
                               "params": {"thermal_conductivity": 1000.0}}]}
FRAMES = 3


def _open_sample(name: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{name}.blend"
    shutil.copy(ROOT / "sample_blends" / f"{name}.blend", path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    return path


def _domain():
    return next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')


def _cache(ext) -> Path:
    return ext.sub("export.snapshot").cache_dir(_domain())


def _read(ext, path: Path):
    return ext.core("cache.plyio").read_ply(path)


def _replay_objects(domain):
    found = {ob["sph_replay"]: ob for ob in bpy.context.scene.objects if ob.get("sph_domain") == domain.name}
    return found["particles"], found["surface"]


def _assert_replay_matches_cache(ext, frames):
    """After frame_set(k) Blender shows exactly the files of frame k."""
    cache = _cache(ext)
    particles, surface = _replay_objects(_domain())
    for k in frames:
        bpy.context.scene.frame_set(k)
        pts, vel = evaluated_points(particles)
        ply = _read(ext, cache / "particles" / f"particles_{k:04d}.ply")
        assert len(pts) == len(ply.vertices) > 0, k
        assert vel is not None
        verts, corners, _ = evaluated_mesh(surface)
        sply = _read(ext, cache / "surface" / f"surface_{k:04d}.ply")
        assert len(verts) == len(sply.vertices) > 0, k
        assert len(corners) == 3 * len(sply.faces)


@pytest.fixture
def no_replay_leak(empty_file):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


@pytest.mark.smoke
@pytest.mark.parametrize("name", SAMPLES)
def test_sample_bakes_with_operators_and_replays(ext, tmp_path, name, no_replay_leak):
    _open_sample(name, tmp_path)
    # A sample whose Solid renders itself has its Surface off (jelly_steps): this test is of the surface.
    _domain().sph.domain.surface_enabled = True
    assert bpy.ops.sph.bake(frame_end=FRAMES) == {'FINISHED'}  # Bake meshes too
    cache = _cache(ext)
    assert sorted(p.name for p in (cache / "surface").iterdir()) == [f"surface_{k:04d}.ply"
                                                                     for k in range(1, FRAMES + 1)]
    stamps = {p.name: p.stat().st_mtime_ns for p in (cache / "surface").iterdir()}
    assert bpy.ops.sph.bake_mesh() == {'FINISHED'}
    assert {p.name: p.stat().st_mtime_ns for p in (cache / "surface").iterdir()} == stamps, "up to date: skipped"
    _assert_replay_matches_cache(ext, (2, FRAMES))
    # The liquid renders with the Domain's material when it has one (honey amber, mud brown, ...).
    domain = _domain()
    for ob in _replay_objects(domain):
        used = ext.sub("replay.inputs").get_input(ob, "Material")
        assert used is not None
        if domain.active_material is not None:
            assert used == domain.active_material


@pytest.mark.smoke
@pytest.mark.parametrize("name", SAMPLES)
def test_sample_bakes_with_farm_command(ext, tmp_path, name, no_replay_leak):
    cli = ext.sub("cli_command")
    path = tmp_path / f"{name}.blend"
    shutil.copy(ROOT / "sample_blends" / f"{name}.blend", path)
    lines = []
    assert cli.run(["bake", str(path), "--frames", f"1-{FRAMES}"], echo=lines.append) == 0, lines
    assert any("saved" in line for line in lines), "the file was saved with its replay objects"
    assert cli.run(["mesh", str(path), "--frames", f"2-{FRAMES}"], echo=lines.append) == 0, lines
    assert cli.run(["info", str(path)], echo=lines.append) == 0
    assert '"frames_done": [\n    1,\n    3\n  ]' in lines[-1]
    bpy.ops.wm.open_mainfile(filepath=str(path))
    _assert_replay_matches_cache(ext, (2, FRAMES))


def _particle_bytes(cache: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((cache / "particles").iterdir())}


def test_cancel_on_worker_thread_then_resume_equals_uninterrupted(ext, tmp_path, no_replay_leak):
    baking, jobs = ext.sub("baking"), ext.sub("jobs")
    _open_sample("jelly_steps", tmp_path)
    domain = _domain()
    domain.sph.domain.frame_end = 5
    # Uninterrupted reference in its own folder.
    domain.sph.domain.cache_directory = "//reference"
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    reference = _particle_bytes(tmp_path / "reference")
    # The interface path: a worker thread, cancelled from the main thread after frame 2.
    domain.sph.domain.cache_directory = "//cancelled"
    job = jobs.Job(baking.prepare_bake(bpy.context.scene, domain))
    job.start()
    outcome = None
    while outcome is None:
        outcome = job.poll()
        if job.status is not None and job.status.frame >= 2:
            job.cancel()
        job.join(0.01)
    assert outcome.cancelled and outcome.error is None
    partial = _particle_bytes(tmp_path / "cancelled")
    assert 2 <= len(partial) < 5
    with pytest.raises(RuntimeError, match="already holds a bake"):
        bpy.ops.sph.bake_data()
    assert bpy.ops.sph.bake_data(resume=True) == {'FINISHED'}
    assert _particle_bytes(tmp_path / "cancelled") == reference


def test_free_removes_only_what_bakes_wrote(ext, tmp_path, no_replay_leak):
    _open_sample("dam_break", tmp_path)
    cache = _cache(ext)
    cache.mkdir()
    keep = [cache / "notes.txt", cache / "particles" / "reference.png"]
    keep[1].parent.mkdir()
    for p in keep:
        p.write_text("mine")
    assert bpy.ops.sph.bake(frame_end=2) == {'FINISHED'}
    assert (cache / "surface" / "surface_0002.ply").is_file()
    assert bpy.ops.sph.free_bake() == {'FINISHED'}
    left = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*"))
    assert left == ["notes.txt", "particles", "particles/reference.png"]


# ---------------------------------------------------------------------------- bad scenes

def _scene_with(tmp_path, *, domain=True, fluid="cube"):
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "bad.blend"))
    if fluid == "cube":
        bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0, 0, 0.5))
    elif fluid == "plane":
        bpy.ops.mesh.primitive_plane_add(size=0.3, location=(0, 0, 0.5))
    water = bpy.context.object
    water.name = "Water"
    water.sph.role = 'FLUID'
    if domain:
        bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))
        bpy.context.object.name = "Tank"
        bpy.context.object.sph.role = 'DOMAIN'
        bpy.context.object.sph.domain.particle_spacing = 0.05
        bpy.context.object.sph.domain.frame_end = 2
    return water


def _bake_error() -> str:
    with pytest.raises(RuntimeError) as info:
        bpy.ops.sph.bake()
    return str(info.value)


def test_no_domain_is_reported(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path, domain=False)
    assert "has no Domain" in _bake_error()


def test_two_domains_are_reported_by_name(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    bpy.ops.mesh.primitive_cube_add(size=3)
    bpy.context.object.name = "Tank2"
    bpy.context.object.sph.role = 'DOMAIN'
    bpy.context.view_layer.objects.active = bpy.data.objects["Water"]
    msg = _bake_error()
    assert "2 Domains" in msg and "Tank" in msg and "Tank2" in msg


def test_fluid_without_volume_is_reported(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path, fluid="plane")
    msg = _bake_error()
    assert "Water" in msg and "no volume" in msg


def test_collider_without_faces_is_reported(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    me = bpy.data.meshes.new("points")
    me.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1)], [])
    ob = bpy.data.objects.new("Wire Fence", me)
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = 'COLLIDER'
    msg = _bake_error()
    assert "Wire Fence" in msg and "no faces" in msg


def test_bake_mesh_waits_for_no_one_and_writes_nothing_while_another_process_holds_the_cache(
        ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    cache = _cache(ext)
    # A lock taken through another open file is another holder, as a command-line bake would be.
    with ext.core("cache.lock").lock_cache(cache, "bake"):
        with pytest.raises(RuntimeError) as info:
            bpy.ops.sph.bake_mesh()
    assert "Tank: Cache Directory" in str(info.value) and "another process is using this cache" in str(info.value)
    assert not (cache / "surface").exists() or not any((cache / "surface").iterdir())
    assert bpy.ops.sph.bake_mesh() == {'FINISHED'}
    assert len(list((cache / "surface").iterdir())) == 2


def test_unwritable_cache_is_reported(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    bpy.data.objects["Tank"].sph.domain.cache_directory = str(blocker / "cache")
    msg = _bake_error()
    assert "Tank: Cache Directory" in msg and "cannot be written" in msg
    assert blocker.read_text() == "not a folder"


def test_memory_budget_is_reported_before_work(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    tank = bpy.data.objects["Tank"]
    tank.sph.domain.particle_spacing = 0.0005
    msg = _bake_error()
    assert "Tank: Particle Spacing" in msg and "memory budget" in msg
    assert not (tmp_path / "sph_cache" / "particles").exists()


def test_inconsistent_surface_setting_names_domain_and_setting(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    bpy.data.objects["Tank"].sph.domain.surface.min_radius = 5.0
    msg = _bake_error()
    assert "Tank: Particle Radius" in msg and "smaller than the support radius" in msg


def test_unsaved_file_with_relative_cache_is_reported(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.mesh.primitive_cube_add(size=0.3)
    bpy.context.object.sph.role = 'FLUID'
    bpy.ops.mesh.primitive_cube_add(size=2)
    bpy.context.object.sph.role = 'DOMAIN'
    assert "not saved yet" in _bake_error()


# ---------------------------------------------------------------------------- generated settings

def test_preset_overrides_are_exported_as_params(ext, tmp_path, no_replay_leak):
    water = _scene_with(tmp_path)
    water.sph.material.viscoelastic.preset = "honey"
    water.sph.material.viscoelastic.kinematic_viscosity = 0.25
    export = ext.sub("export.snapshot")
    data, origins = export.build_scene(bpy.context.scene, bpy.data.objects["Tank"], tmp_path / "in")
    (material,) = data["materials"]
    assert material == {"name": "Water", "model": "viscoelastic", "preset": "honey",
                        "params": {"kinematic_viscosity": 0.25}}
    assert origins["materials[0]"] == "Water"
    assert data["particle_spacing"] == 0.05


def test_inflow_nozzle_length_reaches_the_scene(ext, tmp_path, no_replay_leak):
    """Nozzle Length goes to the inflow source; an Inflow from before it had one exports 0 (no pipe),
    which is what it baked with."""
    _scene_with(tmp_path)
    bpy.ops.mesh.primitive_circle_add(radius=0.05, location=(0.0, 0.0, 1.5), fill_type='NGON')
    spout = bpy.context.object
    spout.name, spout.sph.role = "Spout", 'INFLOW'
    export = ext.sub("export.snapshot")

    def inflow():
        data, origins = export.build_scene(bpy.context.scene, bpy.data.objects["Tank"], tmp_path / "in")
        (index,) = [k for k, s in enumerate(data["sources"]) if s["type"] == "inflow"]
        assert origins[f"sources[{index}]"] == "Spout"
        return data["sources"][index]

    assert spout.sph.inflow.nozzle_length == 0.0 and inflow()["nozzle_length"] == 0.0
    spout.sph.inflow.nozzle_length = 0.02
    assert inflow()["nozzle_length"] == pytest.approx(0.02)
    bpy.ops.wm.open_mainfile(filepath=str(record_exports.OLD_LAYOUT))
    old = next(ob for ob in bpy.data.objects if ob.sph.role == 'INFLOW')
    assert "nozzle_length" not in old.sph.inflow.keys(), "saved before the property existed"
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "old.blend"))
    assert inflow()["nozzle_length"] == 0.0


def test_honey_sample_is_in_the_coiling_regime(ext, tmp_path, no_replay_leak):
    """honey_stool.blend exports the regime of scripts/scenes/honey_coil.json, where the thread coils:
    >= 4 particles across, thread Reynolds number U d / nu below 1, a fall of >= 8 thread diameters."""
    _open_sample("honey_stool", tmp_path)
    data, _ = ext.sub("export.snapshot").build_scene(bpy.context.scene, _domain(), tmp_path / "in", (1, 1))
    coil = json.loads((ROOT / "scripts" / "scenes" / "honey_coil.json").read_text(encoding="utf-8"))
    (inflow,) = [s for s in data["sources"] if s["type"] == "inflow"]
    (want,) = coil["sources"]
    assert data["particle_spacing"] == pytest.approx(coil["particle_spacing"])
    for key in ("radius", "nozzle_length", "velocity"):
        assert inflow[key] == pytest.approx(want[key]), key
    (material,) = data["materials"]
    assert (material["preset"], material["params"]) == ("honey", {})
    nu = ext.sub("properties").preset_values("viscoelastic", "honey")["kinematic_viscosity"]
    d, speed = 2 * inflow["radius"], -inflow["velocity"][2]
    seat = bpy.data.objects["Stool Seat"]
    fall = inflow["center"][2] - max((seat.matrix_world @ v.co).z for v in seat.data.vertices)
    assert d / data["particle_spacing"] >= 4 and speed * d / nu < 1 and fall >= 8 * d
    assert fall == pytest.approx(want["center"][2], abs=1e-6), "as high above the seat as honey_coil's nozzle"
    lo, hi = data["domain"]["min"], data["domain"]["max"]
    assert hi[2] > inflow["center"][2] and all(hi[k] - lo[k] <= 0.2 for k in range(3)), "a Domain just around it"


def test_animated_collider_exports_keyframes(ext, tmp_path, no_replay_leak):
    _open_sample("mud_suzanne", tmp_path)
    export = ext.sub("export.snapshot")
    data, _ = export.build_scene(bpy.context.scene, _domain(), tmp_path / "in", (1, 60))
    suzanne = next(c for c in data["colliders"] if c["name"] == "Suzanne")
    keys = suzanne["keyframes"]
    assert [k["frame"] for k in keys] == list(range(1, 61))
    assert keys[0]["position"][0] == pytest.approx(-0.9, abs=1e-6)
    assert keys[29]["position"][0] == pytest.approx(0.0, abs=1e-6)
    assert keys[-1]["position"][0] == pytest.approx(0.9, abs=1e-6)
    assert bpy.context.scene.frame_current == 1, "the export restores the current frame"


def test_deforming_collider_exports_a_mesh_per_frame(ext, tmp_path, no_replay_leak):
    _scene_with(tmp_path)
    bpy.ops.mesh.primitive_plane_add(size=1.0)
    sheet = bpy.context.object
    sheet.name = "Sheet"
    sheet.sph.role = 'COLLIDER'
    sheet.sph.collider.motion = 'DEFORMING'
    sheet.sph.collider.mode = 'shell'
    sheet.data.shape_keys_clear() if hasattr(sheet.data, "shape_keys_clear") else None
    sheet.shape_key_add(name="Basis")
    key = sheet.shape_key_add(name="Bent")
    key.data[0].co.z = 0.3
    key.value = 0.0
    key.keyframe_insert("value", frame=1)
    key.value = 1.0
    key.keyframe_insert("value", frame=2)
    export = ext.sub("export.snapshot")
    data, _ = export.build_scene(bpy.context.scene, bpy.data.objects["Tank"], tmp_path / "in", (1, 2))
    item = next(c for c in data["colliders"] if c["name"] == "Sheet")
    assert item["deforming"] is True and item["path"] == "collider_Sheet_{frame:04d}.ply"
    z = [_read(ext, tmp_path / "in" / f"collider_Sheet_{f:04d}.ply").positions()[:, 2].max() for f in (1, 2)]
    assert z[0] == pytest.approx(0.0, abs=1e-6) and z[1] == pytest.approx(0.3, abs=1e-6)


# ---------------------------------------------------------------------------- farm command

def test_farm_command_exit_codes(ext, tmp_path, no_replay_leak):
    cli = ext.sub("cli_command")
    assert cli._handle is not None, "register() registered `blender --command sph`"
    out = []
    assert cli.run(["bake"], echo=out.append) == 2
    assert cli.run(["bake", str(tmp_path / "missing.blend")], echo=out.append) == 2
    assert "cannot be opened" in out[-1]
    _scene_with(tmp_path, domain=False)
    bpy.ops.wm.save_mainfile()
    assert cli.run(["bake", str(tmp_path / "bad.blend")], echo=out.append) == 2
    assert "has no Domain" in out[-1]
    assert cli.run(["bake", str(tmp_path / "bad.blend"), "--frames", "9-1"], echo=out.append) == 2


def _saved_frame_ranges(ext, path: Path) -> tuple:
    """The replay's frame ranges as saved in ``path`` (opened without the load handler that re-reads the cache)."""
    replay = ext.sub("replay.objects")
    replay.unregister()
    try:
        bpy.ops.wm.open_mainfile(filepath=str(path))
    finally:
        replay.register()
    return tuple(replay.frame_range(ob, render=True) for ob in replay.find_replay(_domain()))


def test_farm_saves_the_frames_a_render_reads(ext, tmp_path, no_replay_leak, capfd):
    """A farm renders without the add-on what the file names: after ``bake`` the baked frames for the
    particles and (Surface on) for the surface the meshing tasks write next; ``sync`` after a bake made
    elsewhere. The bake's log holds no importer error (the file is evaluated when saved, before the
    surfaces exist: only renders read them)."""
    cli, replay = ext.sub("cli_command"), ext.sub("replay.objects")
    path = _open_sample("jelly_steps", tmp_path)
    _domain().sph.domain.surface_enabled = True  # the sample's Solid renders itself: its Surface is off
    bpy.ops.wm.save_mainfile()
    lines = []
    capfd.readouterr()
    assert cli.run(["bake", str(path), "--frames", "1-2"], echo=lines.append) == 0, lines
    printed = "\n".join(capfd.readouterr())
    assert not re.search(r"(?i)ply importer|invalid ply|io\.ply", printed), printed[-3000:]
    assert not (_cache(ext) / "surface").exists()
    assert _saved_frame_ranges(ext, path) == ((1, 2), (1, 2))
    # A bake made elsewhere: the file names no surface frames.
    particles, surface = replay.find_replay(_domain())
    replay.set_frame_range(surface, 1, 0)
    bpy.ops.wm.save_mainfile()
    assert _saved_frame_ranges(ext, path) == ((1, 2), (1, 0))
    assert cli.run(["sync", str(path)], echo=lines.append) == 0, lines
    assert _saved_frame_ranges(ext, path) == ((1, 2), (1, 2))
    # Opened with the add-on, the file reads what the cache holds: particles, no surface yet.
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert tuple(replay.frame_range(ob) for ob in replay.find_replay(_domain())) == ((1, 2), (1, 0))


def test_farm_auto_resume_starts_then_continues(ext, tmp_path, no_replay_leak):
    """A retried farm task: the first run starts the bake; a rerun resumes it instead of refusing."""
    cli = ext.sub("cli_command")
    path = tmp_path / "jelly_steps.blend"
    shutil.copy(ROOT / "sample_blends" / path.name, path)
    out = []
    assert cli.run(["bake", str(path), "--frames", "1-2", "--auto-resume"], echo=out.append) == 0, out
    assert cli.run(["bake", str(path), "--frames", "1-2", "--auto-resume"], echo=out.append) == 0, out
    assert cli.run(["bake", str(path), "--frames", "1-2"], echo=out.append) == 2
    assert "already holds a bake" in out[-1]


def test_sample_files_rebuild_with_this_blender(ext, tmp_path, no_replay_leak):
    """scripts/make_samples.py builds every sample with the running Blender version, in the current
    settings layout, with the materials the committed (older) samples export (those rebuilt since:
    ``REBUILT``'s)."""
    out = tmp_path / "built"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_samples.py"), "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(p.stem for p in out.glob("*.blend")) == sorted(BUILT)
    migrate = ext.sub("migrate")
    for name in BUILT:
        # Without the load handler: a file that needed upgrading would show as pending here.
        migrate.unregister()
        try:
            bpy.ops.wm.open_mainfile(filepath=str(out / f"{name}.blend"))
        finally:
            migrate.register()
        emitters = [ob for ob in bpy.data.objects if ob.sph.role in {'FLUID', 'INFLOW', 'SOLID'}]
        assert emitters and not any(migrate.pending(ob.sph.material) for ob in emitters), name
        assert all(migrate.is_current(ob.sph.material) for ob in emitters), name
        found = record_exports.exported_materials(bpy, ext.sub("export.snapshot"), out / f"{name}.blend", tmp_path)
        want = REBUILT.get(name) or json.loads((record_exports.OUT / f"{name}.json").read_text(encoding="utf-8"))[
            "materials"]
        assert found["materials"] == want, name


def test_particle_estimate_matches_the_fill(ext, tmp_path, no_replay_leak):
    _open_sample("dam_break", tmp_path)
    baking = ext.sub("baking")
    n, mib = baking.particle_estimate(bpy.context.scene, _domain())
    assert bpy.ops.sph.bake_data(frame_end=1) == {'FINISHED'}
    actual = len(_read(ext, _cache(ext) / "particles" / "particles_0001.ply").vertices)
    # The estimate is volume / spacing^3; the lattice fill differs by its boundary layer.
    assert abs(n - actual) / actual < 0.15
    assert mib > 0
    assert np.isfinite(mib)


@pytest.mark.smoke
def test_baked_sample_renders_the_liquid(ext, tmp_path, no_replay_leak):
    """A Cycles render of a baked frame differs from the same frame with the liquid hidden, where the liquid is.

    The Domain gets an opaque material (which the replay uses): the water look is clear, and a
    clear liquid changes a 4-sample 96x54 render of a grey studio by less than its noise. The
    looks themselves are tested in test_liquid_materials.py."""
    _open_sample("dam_break", tmp_path)
    opaque = bpy.data.materials.new("Opaque")
    opaque.diffuse_color = (0.1, 0.3, 0.9, 1.0)
    _domain().data.materials.append(opaque)
    assert bpy.ops.sph.bake(frame_end=FRAMES) == {'FINISHED'}
    scene = bpy.context.scene
    tiny_cycles(scene, (96, 54))
    scene.render.use_motion_blur = False  # motion blur would need the neighbouring frames too
    scene.frame_set(FRAMES)
    shown = render(scene, tmp_path / "shown.png")
    replay = _replay_objects(_domain())
    for ob in replay:
        ob.hide_render = True
    hidden = render(scene, tmp_path / "hidden.png")
    diff = np.abs(shown - hidden).mean(axis=-1)
    x = _read(ext, _cache(ext) / "particles" / f"particles_{FRAMES:04d}.ply").positions()
    # The middle of the water column (the liquid fills it; its edges may show the tank behind).
    core = (x > np.quantile(x, 0.25, axis=0)).all(axis=1) & (x < np.quantile(x, 0.75, axis=0)).all(axis=1)
    rows, cols = projected_window(scene, x[core].min(0), x[core].max(0))
    assert rows.stop > rows.start and cols.stop > cols.start, "the camera sees the liquid"
    changed = float((diff[rows, cols] > 0.05).mean())
    assert changed > 0.5, f"only {changed:.0%} of the liquid's window changed when it was hidden"


def test_numba_caches_under_the_extension_user_directory():
    """A fresh Blender preparing a bake (the export and the core's checks import numba modules) has
    numba caching under the extension's user directory, never in the extension's own folder: numba
    reads NUMBA_CACHE_DIR once, at its first import (the checks used to come first)."""
    from conftest import python_for_subprocess

    child = Path(__file__).with_name("numba_cache_child.py")
    # This process's own bakes set NUMBA_CACHE_DIR; a fresh Blender starts without it.
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    r = subprocess.run([python_for_subprocess(), str(child), str(ROOT / "sample_blends" / "mud_suzanne.blend")],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    shown = json.loads(r.stdout.strip().splitlines()[-1])
    assert shown["numba_loaded"], "the check must exercise the import"
    assert shown["cache_dir"].startswith(shown["user_dir"]), shown
    shutil.rmtree(shown["user_dir"], ignore_errors=True)  # its wheels and private numba copy: ~380 MB


def test_the_first_bake_says_it_is_compiling_in_the_headless_log(ext, tmp_path, no_replay_leak, monkeypatch):
    """The core bake's compile notice (``core/numerics/compile_watch.py``) reaches the headless log through
    ``run_sync``, every note echoed (not only one a second), capitalised as the status line shows it. A fresh
    kernel compiled inside the bake stands for the solver's first compile."""
    baking, core_bake = ext.sub("baking"), ext.core("bake")
    _open_sample("jelly_steps", tmp_path)
    domain = _domain()
    domain.sph.domain.frame_end = 2
    task = baking.prepare_bake(bpy.context.scene, domain)
    from numba import njit  # importable once the bake is prepared (the extension's numba)

    @njit(cache=False)
    def twice(a):
        return 2.0 * a.sum()

    locked = core_bake._bake_locked

    def compiling(*args):
        twice(np.ones(2))
        return locked(*args)

    monkeypatch.setattr(core_bake, "_bake_locked", compiling)
    said = []
    baking.run_sync(bpy.context.scene, task, echo=said.append)
    assert said[0].startswith("Compiling the solver (the first bake on this machine only"), said
    assert any(s.startswith("Compiled 1 kernel in ") for s in said), said
