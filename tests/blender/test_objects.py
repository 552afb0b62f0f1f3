"""Object controls exported to the scene file: animated inflows, inherited velocity, Static colliders
found animated, the per-object Enabled box, and the Domain's particle estimate counting inflows.

What the core does with them is tested in tests/core (test_inflow_motion.py); here: what Blender
writes into the scene, and that files saved before these controls export what they did.
"""

import json
import shutil

import bpy
import pytest
import record_exports
from conftest import ROOT


@pytest.fixture
def clean(empty_file):
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


def _tank(tmp_path, fluid: bool = True):
    """A saved file with a 2 m Domain "Tank" (5 cm spacing, frames 1-3) and a Fluid cube "Water"."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "objects.blend"))
    if fluid:
        bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0, 0, 0.5))
        bpy.context.object.name = "Water"
        bpy.context.object.sph.role = 'FLUID'
    bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))
    tank = bpy.context.object
    tank.name, tank.sph.role = "Tank", 'DOMAIN'
    tank.sph.domain.particle_spacing = 0.05
    tank.sph.domain.frame_end = 3
    return tank


def _spout(location=(0.0, 0.0, 1.5)):
    bpy.ops.mesh.primitive_circle_add(radius=0.05, location=location, fill_type='NGON')
    spout = bpy.context.object
    spout.name, spout.sph.role = "Spout", 'INFLOW'
    return spout


def _build(ext, tmp_path, frames=(1, 3)):
    notes: list[str] = []
    data, origins = ext.sub("export.snapshot").build_scene(bpy.context.scene, bpy.data.objects["Tank"], tmp_path / "in",
                                                  frames, notes)
    return data, origins, notes


def _item(data, origins, section: str, name: str) -> dict:
    (k,) = [k for k in range(len(data[section])) if origins.get(f"{section}[{k}]") == name]
    return data[section][k]


# ------------------------------------------------------------------------------------------ inflows

def test_keyframed_inflow_exports_its_path_and_a_still_one_does_not(ext, tmp_path, clean):
    """An Inflow keyframed from x = 0 to x = 0.2 m over frames 1-3, turned 90 degrees about y, exports one
    key a frame (centre, velocity along its -Z at its Speed); the first key is also its centre. Unkeyed,
    it exports no keys (a still inflow's scene is what it was)."""
    _tank(tmp_path)
    spout = _spout()
    spout.sph.inflow.speed = 0.5
    data, origins, _ = _build(ext, tmp_path)
    assert "keyframes" not in _item(data, origins, "sources", "Spout")
    spout.keyframe_insert("location", frame=1)
    spout.keyframe_insert("rotation_euler", frame=1)
    spout.location.x = 0.2
    spout.rotation_euler.y = 1.5707963
    spout.keyframe_insert("location", frame=3)
    spout.keyframe_insert("rotation_euler", frame=3)
    bpy.context.scene.frame_set(2)
    data, origins, notes = _build(ext, tmp_path)
    item = _item(data, origins, "sources", "Spout")
    keys = item["keyframes"]
    assert [k["frame"] for k in keys] == [1, 2, 3]
    assert keys[0]["center"] == pytest.approx([0.0, 0.0, 1.5], abs=1e-6)
    assert keys[2]["center"] == pytest.approx([0.2, 0.0, 1.5], abs=1e-6)
    assert keys[0]["velocity"] == pytest.approx([0.0, 0.0, -0.5], abs=1e-6)
    assert keys[2]["velocity"] == pytest.approx([-0.5, 0.0, 0.0], abs=1e-6), "local -Z turned onto -X"
    assert (item["center"], item["velocity"]) == (keys[0]["center"], keys[0]["velocity"])
    assert notes == [] and bpy.context.scene.frame_current == 2, "the export restores the current frame"
    ext.core("scene.scene_file").parse_scene(json.loads(json.dumps(data)), tmp_path / "in")  # the core accepts it


def test_inherit_velocity_reaches_the_scene_for_inflows_and_fluids(ext, tmp_path, clean):
    """Inflow: Inherit Velocity is exported as inherit_velocity (0 unless set: files saved before it keep
    their stream). Fluid: the export adds the factor x the object's velocity at the first frame to the
    Initial Velocity (a cube moving 0.1 m a frame at 30 fps: 3 m/s, x 0.5)."""
    _tank(tmp_path)
    water = bpy.data.objects["Water"]
    spout = _spout()
    data, origins, _ = _build(ext, tmp_path)
    assert _item(data, origins, "sources", "Spout")["inherit_velocity"] == 0.0
    assert _item(data, origins, "sources", "Water")["velocity"] == [0.0, 0.0, 0.0]
    spout.sph.inflow.inherit_velocity = 1.0
    water.sph.material.initial_velocity = (0.0, 0.0, -1.0)
    water.sph.fluid.inherit_velocity = 0.5
    water.keyframe_insert("location", frame=1)
    water.location.x += 0.1
    water.keyframe_insert("location", frame=2)  # keys on both frames: the move is 0.1 m whatever the curve
    data, origins, _ = _build(ext, tmp_path)
    assert _item(data, origins, "sources", "Spout")["inherit_velocity"] == 1.0
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    assert _item(data, origins, "sources", "Water")["velocity"] == pytest.approx([0.5 * 0.1 * fps, 0.0, -1.0],
                                                                                 abs=1e-4)


def test_angular_velocity_reaches_the_scene_for_fluids_and_solids(ext, tmp_path, clean):
    """A Fluid's and a Solid's Angular Velocity is exported as their source's angular_velocity (rad/s, world
    axes), and only when set: a file saved before it, all zeros, exports as it did. The core accepts it."""
    _tank(tmp_path)
    water = bpy.data.objects["Water"]
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.5, 0.0, 0.5))
    jelly = bpy.context.object
    jelly.name, jelly.sph.role = "Jelly", 'SOLID'
    data, origins, _ = _build(ext, tmp_path)
    assert "angular_velocity" not in _item(data, origins, "sources", "Water")
    assert "angular_velocity" not in _item(data, origins, "sources", "Jelly")
    water.sph.material.initial_angular_velocity = (0.0, 0.0, 2.5)
    jelly.sph.material.initial_angular_velocity = (10.0, -1.0, 0.5)
    data, origins, _ = _build(ext, tmp_path)
    assert _item(data, origins, "sources", "Water")["angular_velocity"] == [0.0, 0.0, 2.5]
    assert _item(data, origins, "sources", "Jelly")["angular_velocity"] == [10.0, -1.0, 0.5]
    scene = ext.core("scene.scene_file").parse_scene(json.loads(json.dumps(data)), tmp_path / "in")
    assert sorted(tuple(p["angular_velocity"]) for _, p in scene.sources) == [(0.0, 0.0, 2.5), (10.0, -1.0, 0.5)]


# ------------------------------------------------------------------------------------------ colliders

def _collider(name="Paddle", location=(0.0, 0.0, 0.2)):
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=location)
    ob = bpy.context.object
    ob.name, ob.sph.role = name, 'COLLIDER'
    return ob


def test_static_collider_that_moves_is_exported_as_animated_with_a_note(ext, tmp_path, clean):
    """A Collider left at Static: still, it exports no keys and no note; keyframed, or moved by an
    animated parent, it exports one key a frame and a note naming it; export.export and the bake task
    carry the note for the operators to report."""
    _tank(tmp_path)
    paddle = _collider()
    data, origins, notes = _build(ext, tmp_path)
    assert "keyframes" not in _item(data, origins, "colliders", "Paddle") and notes == []
    paddle.keyframe_insert("location", frame=1)
    paddle.location.x = 0.3
    paddle.keyframe_insert("location", frame=3)
    data, origins, notes = _build(ext, tmp_path)
    keys = _item(data, origins, "colliders", "Paddle")["keyframes"]
    assert [k["frame"] for k in keys] == [1, 2, 3] and set(keys[0]) == {"frame", "position", "rotation"}
    assert keys[0]["position"][0] == pytest.approx(0.0, abs=1e-6)
    assert keys[2]["position"][0] == pytest.approx(0.3, abs=1e-6)
    assert len(notes) == 1 and notes[0].startswith("Paddle:") and "Animated" in notes[0]
    assert paddle.sph.collider.motion == 'STATIC', "the artist's setting is left alone"

    # Moved only by its parent's animation.
    paddle.animation_data_clear()
    paddle.location = (0.0, 0.0, 0.2)
    bpy.ops.object.empty_add(location=(0.0, 0.0, 0.0))
    rig = bpy.context.object
    rig.name = "Rig"
    paddle.parent = rig
    rig.keyframe_insert("location", frame=1)
    rig.location.y = 0.25
    rig.keyframe_insert("location", frame=3)
    exported = ext.sub("export.snapshot").export(bpy.context.scene, bpy.data.objects["Tank"])
    (note,) = exported.notes
    assert note.startswith("Paddle:")
    item = _item(json.loads(exported.scene_path.read_text()), exported.origins, "colliders", "Paddle")
    assert item["keyframes"][-1]["position"][1] == pytest.approx(0.25, abs=1e-6)
    task = ext.sub("baking").prepare_bake(bpy.context.scene, bpy.data.objects["Tank"], replace=True)
    assert task.notes == exported.notes


def test_declared_animated_collider_gets_no_note(ext, tmp_path, clean):
    _tank(tmp_path)
    paddle = _collider()
    paddle.sph.collider.motion = 'ANIMATED'
    paddle.keyframe_insert("location", frame=1)
    paddle.location.x = 0.3
    paddle.keyframe_insert("location", frame=3)
    data, origins, notes = _build(ext, tmp_path)
    assert len(_item(data, origins, "colliders", "Paddle")["keyframes"]) == 3 and notes == []


# ------------------------------------------------------------------------------------------ enabled

def test_disabled_objects_are_not_exported(ext, tmp_path, clean):
    """Unticking Enabled leaves a Fluid, an Inflow or a Collider out of the scene; with no enabled
    source left, the bake is refused saying so."""
    _tank(tmp_path)
    spout, paddle = _spout(), _collider()
    assert all(ob.sph.enabled for ob in bpy.data.objects), "on by default"
    data, origins, _ = _build(ext, tmp_path)
    names = set(origins.values())
    assert {"Water", "Spout", "Paddle"} <= names
    for ob in (spout, paddle):
        ob.sph.enabled = False
    data, origins, _ = _build(ext, tmp_path)
    assert [s["material"] for s in data["sources"]] == ["Water"]
    assert [c["name"] for c in data["colliders"]] == ["Tank"], "only the Domain's closed borders"
    assert [m["name"] for m in data["materials"]] == ["Water"]
    bpy.data.objects["Water"].sph.enabled = False
    with pytest.raises(ext.sub("export.snapshot").ExportError) as err:
        _build(ext, tmp_path)
    assert "Enabled" in str(err.value)


def test_files_saved_before_the_toggle_have_every_object_enabled(ext, tmp_path, clean):
    bpy.ops.wm.open_mainfile(filepath=str(record_exports.OLD_LAYOUT))
    roles = [ob for ob in bpy.data.objects if ob.sph.role != 'NONE']
    assert roles and all("enabled" not in ob.sph.keys() and ob.sph.enabled for ob in roles)


def test_enabled_box_in_the_panel_header(ext, tmp_path, clean):
    ui = ext.sub("ui")
    assert hasattr(ui.SPH_PT_main, "draw_header") and set(ui._TOGGLED) == {'FLUID', 'INFLOW', 'SOLID', 'COLLIDER'}


# ------------------------------------------------------------------------------------------ estimate

def test_domain_estimate_counts_the_honey_inflow(ext, tmp_path, clean):
    """honey_stool.blend has only an Inflow: the Domain panel's estimate was 0. Now it counts what the
    inflow emits, within a factor of 2 of the core's estimate for the exported scene."""
    path = tmp_path / "honey_stool.blend"
    shutil.copy(ROOT / "sample_blends" / "honey_stool.blend", path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    domain = next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')
    assert not [ob for ob in bpy.context.scene.objects if ob.sph.role == 'FLUID']
    n, mib = ext.sub("baking").particle_estimate(bpy.context.scene, domain)
    data, _ = ext.sub("export.snapshot").build_scene(bpy.context.scene, domain, tmp_path / "in")
    core = ext.core("scene.scene_file").parse_scene(json.loads(json.dumps(data)), tmp_path / "in").estimate_particles()
    print(f"honey_stool estimate: panel {n}, core {core}")
    assert n > 0 and mib > 0
    assert core / 2 <= n <= 2 * core


# ------------------------------------------------------------------------------------------ unit scale

def _unit_scene(tmp_path, name: str, unit: float):
    """A 0.32 m cube 0.44 m above the floor of a 1 m tank, 5 cm spacing, frames 1-6, modelled in units
    of ``unit`` metres (Scene > Units > Unit Scale). 0.32, not 0.3: at 0.3 the lattice points of the
    fill lie on the cube's faces, where the float32 rounding of the vertices decides (180 or 216
    particles, seen between the two unit scales) whatever the units."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / f"{name}.blend"))
    scene = bpy.context.scene
    scene.unit_settings.system = 'METRIC'
    scene.unit_settings.scale_length = unit
    k = 1.0 / unit
    bpy.ops.mesh.primitive_cube_add(size=0.32 * k, location=(0, 0, 0.6 * k))
    bpy.context.object.name, bpy.context.object.sph.role = "Water", 'FLUID'
    bpy.ops.mesh.primitive_cube_add(size=1.0 * k, location=(0, 0, 0.5 * k))
    tank = bpy.context.object
    tank.name, tank.sph.role = "Tank", 'DOMAIN'
    tank.sph.domain.particle_spacing = 0.05 * k
    tank.sph.domain.frame_end = 6
    tank.sph.domain.surface_enabled = False
    tank.sph.domain.cache_directory = f"//cache_{name}"
    return tank


def _lowest_per_frame(ext, tank) -> tuple[int, list[float]]:
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    root = ext.sub("export.snapshot").cache_dir(tank)
    plyio = ext.core("cache.plyio")
    frames = [plyio.read_ply(root / "particles" / f"particles_{f:04d}.ply").positions() for f in range(1, 7)]
    return len(frames[0]), [float(x[:, 2].min()) for x in frames]


def test_a_centimetre_scene_bakes_as_the_metre_scene(ext, tmp_path, clean):
    """A 0.32 m cube modelled as 32 units at Unit Scale 0.01 exports the metre scene's spacing, domain and
    positions in metres, bakes the same particle count and falls the same way (lowest particle per
    frame within 1 mm); the replay objects are scaled by 100 so Blender shows the cache in scene units.
    Measured: 216 particles each; lowest z 0.475 m at frame 1, 0.2407 m at frame 6 in both (within 3e-8 m)."""
    export = ext.sub("export.snapshot")
    tank = _unit_scene(tmp_path, "metres", 1.0)
    metre_data, _ = export.build_scene(bpy.context.scene, tank, tmp_path / "m_in")
    n_m, fall_m = _lowest_per_frame(ext, tank)
    tank = _unit_scene(tmp_path, "centimetres", 0.01)
    assert ext.sub("export.values").unit_scale(bpy.context.scene, tank) == 0.01
    cm_data, _ = export.build_scene(bpy.context.scene, tank, tmp_path / "cm_in")
    assert cm_data["particle_spacing"] == metre_data["particle_spacing"] == 0.05
    for corner in ("min", "max"):
        assert cm_data["domain"][corner] == pytest.approx(metre_data["domain"][corner], abs=1e-6)
    assert cm_data["colliders"][0]["size"] == pytest.approx(metre_data["colliders"][0]["size"], abs=1e-6)
    assert cm_data["simulation"]["gravity"] == metre_data["simulation"]["gravity"], "gravity is not scaled"
    n_cm, fall_cm = _lowest_per_frame(ext, tank)
    print(f"unit scale: {n_m} / {n_cm} particles, lowest z {fall_m} / {fall_cm}")
    assert n_cm == n_m > 0
    assert fall_cm == pytest.approx(fall_m, abs=1e-3)
    assert fall_m[-1] < fall_m[0] - 0.05, "the cube falls"
    particles = next(ob for ob in bpy.context.scene.objects if ob.get("sph_replay") == "particles")
    assert tuple(particles.scale) == pytest.approx((100.0,) * 3)
    # Off: one Blender unit is one metre again (a 30 m cube at 5 m spacing).
    tank.sph.domain.use_unit_scale = False
    off, _ = export.build_scene(bpy.context.scene, tank, tmp_path / "off_in")
    assert off["particle_spacing"] == 5.0


def test_a_centimetre_file_baked_before_unit_scale_keeps_metres(ext, tmp_path, clean):
    """A Domain baked before Use Unit Scale existed stores no value for it (every export now stores it):
    reopened in a scene at Unit Scale 0.01 it gets the setting off, so it bakes what it baked. At scale 1,
    or never baked, nothing is stored and the new default (on) applies."""
    tank = _unit_scene(tmp_path, "old_cm", 0.01)
    assert bpy.ops.sph.bake_data(frame_end=1) == {'FINISHED'}
    assert "use_unit_scale" in tank.sph.domain.keys(), "stored by the export"
    del tank.sph.domain["use_unit_scale"]  # as a file saved before the setting
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "old_cm.blend"))
    assert bpy.data.objects["Tank"].sph.domain.use_unit_scale is False
    tank = _unit_scene(tmp_path, "never_baked", 0.01)
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "never_baked.blend"))
    assert bpy.data.objects["Tank"].sph.domain.use_unit_scale is True


def test_surface_normals_are_off_for_new_domains_and_kept_for_old_bakes(ext, tmp_path, clean):
    """Normals are off by default (the replay shades smooth itself, and loads a frame faster); the export
    stores the setting. A Domain baked before the default changed stores no value: reopened, it keeps
    writing normals, as it did. Never baked, it gets the new default."""
    read_ply = ext.core("cache.plyio").read_ply
    tank = _unit_scene(tmp_path, "new", 1.0)
    tank.sph.domain.surface_enabled = True
    assert tank.sph.domain.surface.normals is False
    assert bpy.ops.sph.bake_data(frame_end=1) == {'FINISHED'}
    assert bpy.ops.sph.bake_mesh() == {'FINISHED'}
    surface = ext.sub("export.snapshot").cache_dir(tank) / "surface" / "surface_0001.ply"
    assert {"x", "vx", "material"} <= set(read_ply(surface).vertices.dtype.names)
    assert "nx" not in read_ply(surface).vertices.dtype.names
    assert "normals" in tank.sph.domain.surface.keys(), "stored by the export"
    del tank.sph.domain.surface["normals"]  # as a file saved before the default changed
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "new.blend"))
    assert bpy.data.objects["Tank"].sph.domain.surface.normals is True
    tank = _unit_scene(tmp_path, "never_baked_normals", 1.0)
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "never_baked_normals.blend"))
    assert bpy.data.objects["Tank"].sph.domain.surface.normals is False
