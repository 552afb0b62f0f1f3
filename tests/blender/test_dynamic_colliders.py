"""Dynamic Colliders in Blender: the export, the keyframes a bake leaves (read back by a Blender with no
add-on, as a farm renders), Free Bake restoring the object, a new bake starting where the object stood,
and the conversion of Blender's rigid bodies. The bake is a 10 cm box dropped into a coarse pool (about
200 particles, 6 frames)."""

import json
import shutil
import subprocess
from pathlib import Path

import bpy
import numpy as np
import pytest
from conftest import ROOT, python_for_subprocess
from water_scene import water_in_tank

CHILD = Path(__file__).with_name("pose_child.py")
FRAMES = (1, 6)


def _crate(density: float = 300.0) -> bpy.types.Object:
    """A 10 cm cube above the water, turned a little, Dynamic; its visibility keyed (an artist's channel)."""
    bpy.ops.mesh.primitive_cube_add(size=0.1, location=(0.02, 0.0, 0.32), rotation=(0.2, 0.1, 0.3))
    ob = bpy.context.object
    ob.name = "Crate"
    ob.sph.role = 'COLLIDER'
    c = ob.sph.collider
    c.motion, c.density, c.body_friction, c.restitution = 'DYNAMIC', density, 0.3, 0.1
    c.linear_velocity = (0.0, 0.0, -0.5)
    ob.keyframe_insert("hide_render", frame=1)
    return ob


def _scene() -> tuple[bpy.types.Object, bpy.types.Object]:
    domain = water_in_tank(water_size=0.3, water_z=0.15, tank_size=0.6, tank_z=0.3, spacing=0.05,
                           frame_end=FRAMES[-1])
    return _crate(), domain


def test_a_dynamic_collider_exports_as_a_body(ext, saved_file):
    ob, domain = _scene()
    exported = ext.sub("export.snapshot").export(bpy.context.scene, domain)
    item = next(c for c in json.loads(exported.scene_path.read_text())["colliders"] if c["name"] == "Crate")
    assert item["dynamic"] is True and item["density"] == 300.0 and item["body_friction"] == 0.3
    assert item["restitution"] == 0.1 and item["linear_velocity"] == [0.0, 0.0, -0.5]
    assert "keyframes" not in item, "a Dynamic collider's own pose is not sampled over the frames"
    assert not any("float" in note for note in exported.notes), "the water's grid projection sees the body"
    np.testing.assert_allclose(item["position"], (0.02, 0.0, 0.32), atol=1e-6)
    np.testing.assert_allclose(item["rotation"], (0.2, 0.1, 0.3), atol=1e-6)
    ob.sph.collider.motion = 'STATIC'  # a Static collider's file is as before Dynamic existed
    exported = ext.sub("export.snapshot").export(bpy.context.scene, domain)
    item = next(c for c in json.loads(exported.scene_path.read_text())["colliders"] if c["name"] == "Crate")
    assert not {"dynamic", "density", "body_friction", "restitution", "linear_velocity"} & set(item)


def _shell(ob):
    ob.sph.collider.mode = "shell"


def _parented(ob):
    bpy.ops.object.empty_add(location=(0.0, 0.0, 0.1))
    ob.parent = bpy.context.object


def _keyed(ob):
    ob.keyframe_insert("location", frame=1)


@pytest.mark.parametrize("spoil, words", [(_shell, "set Mode to Solid"), (_parented, "clear its parent"),
                                          (_keyed, "remove them, or set Motion to Animated")])
def test_a_collider_that_cannot_be_dynamic_is_refused_naming_it(ext, saved_file, spoil, words):
    ob, domain = _scene()
    spoil(ob)
    with pytest.raises(ext.sub("export.errors").ExportError) as err:
        ext.sub("export.snapshot").export(bpy.context.scene, domain)
    assert "Crate: Motion" in str(err.value) and words in str(err.value)


def _world(ob) -> np.ndarray:
    return np.array(ob.matrix_world, dtype=np.float64)


def _cache_pose(ext, root: Path, frame: int, unit: float = 1.0) -> np.ndarray:
    from mathutils import Matrix, Quaternion

    b = next(b for b in ext.core("cache.cache_dir").CacheDir(root).read_bodies(frame) if b["name"] == "Crate")
    m = Matrix.Translation(np.asarray(b["location"]) / unit) @ Quaternion(b["rotation_quaternion"]).to_matrix().to_4x4()
    return np.array(m, dtype=np.float64)


@pytest.mark.smoke
def test_a_bake_keys_the_body_a_farm_plays_it_and_free_bake_restores_it(ext, saved_file):
    ob, domain = _scene()
    artist_action = ob.animation_data.action
    rest = _world(ob)
    assert 'FINISHED' in bpy.ops.sph.bake_data()
    root = saved_file.parent / "sph_cache"
    action = ob.animation_data.action
    assert action is not None and action != artist_action and ob.sph.collider.baked_action == action
    curves = ext.sub("compat").action_fcurves(ob)
    assert curves.find("hide_render") is not None, "the artist's channels play on in the bake's action"
    for path in ("location", "rotation_euler"):
        for index in range(3):
            fc = curves.find(path, index=index)
            assert [k.co[0] for k in fc.keyframe_points] == list(range(FRAMES[0], FRAMES[-1] + 1))
            assert {k.interpolation for k in fc.keyframe_points} == {'LINEAR'}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        np.testing.assert_allclose(_world(ob), _cache_pose(ext, root, frame), atol=1e-6)
    assert rest[2, 3] - _world(ob)[2, 3] > 0.01, "the crate thrown down did not fall"
    bpy.ops.wm.save_mainfile()

    # What a farm without the add-on sees: the keys alone move the object.
    r = subprocess.run([python_for_subprocess(), str(CHILD), str(saved_file), "Crate", *map(str, FRAMES)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    farm = json.loads(r.stdout.strip().splitlines()[-1])
    assert farm["addon_modules"] == []
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        np.testing.assert_allclose(farm["matrices"][str(frame)], _world(ob), atol=1e-6)

    # A new bake starts where the object stood before the keys, not where they have moved it.
    bpy.context.scene.frame_set(FRAMES[-1])
    exported = ext.sub("export.snapshot").export(bpy.context.scene, domain)
    item = next(c for c in json.loads(exported.scene_path.read_text())["colliders"] if c["name"] == "Crate")
    np.testing.assert_allclose(item["position"], rest[:3, 3], atol=1e-6)

    baked_name = action.name
    assert 'FINISHED' in bpy.ops.sph.free_bake()
    assert ob.animation_data.action == artist_action and baked_name not in bpy.data.actions
    assert not ob.sph.collider.rest_saved
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        np.testing.assert_allclose(_world(ob), rest, atol=1e-6)


def test_an_active_rigid_body_converts_to_a_dynamic_collider(ext, empty_file):
    bpy.ops.mesh.primitive_cube_add(size=0.2)
    ob = bpy.context.object
    ob.scale = (1.0, 2.0, 1.0)
    bpy.ops.rigidbody.object_add(type='ACTIVE')
    ob.rigid_body.mass, ob.rigid_body.friction, ob.rigid_body.restitution = 4.0, 0.3, 0.4
    assert 'FINISHED' in bpy.ops.sph.convert_rigid_body()
    c = ob.sph.collider
    assert ob.rigid_body is None and ob.sph.role == 'COLLIDER' and c.motion == 'DYNAMIC'
    assert c.density == pytest.approx(4.0 / (0.2 * 0.4 * 0.2), rel=1e-5)
    assert (c.body_friction, c.restitution) == pytest.approx((0.3, 0.4))


def test_the_crate_sample_bakes_on_a_farm_and_keys_its_crate(ext, tmp_path, empty_file):
    path = tmp_path / "crate_flood.blend"
    shutil.copy(ROOT / "sample_blends" / path.name, path)
    lines = []
    assert ext.sub("cli_command").run(["bake", str(path), "--frames", "1-2"], echo=lines.append) == 0, lines
    bpy.ops.wm.open_mainfile(filepath=str(path))
    crate = bpy.data.objects["Crate"]
    assert crate.sph.collider.motion == 'DYNAMIC' and crate.sph.collider.rest_saved
    curves = ext.sub("compat").action_fcurves(crate)
    assert [k.co[0] for k in curves.find("location", index=2).keyframe_points] == [1.0, 2.0]


def test_a_body_animated_until_a_frame_follows_its_keys_then_the_fluid(ext, saved_file):
    """Keyed from x = 0.02 to 0.12 over frames 1-3 and handed over at 3: the scene file holds the artist's
    keys up to 3 (also when re-exported over the bake's keys), the bake puts it where they do at 3, and
    after the bake its keys are the bake's."""
    ob, domain = _scene()
    ob.sph.collider.animated_until = 3
    ob.sph.collider.linear_velocity = (0.0, 0.0, 0.0)
    for frame, x in ((1, 0.02), (3, 0.12)):
        ob.location.x = x
        ob.keyframe_insert("location", index=0, frame=frame)
    bpy.context.scene.frame_set(1)

    def keys():
        exported = ext.sub("export.snapshot").export(bpy.context.scene, domain)
        item = next(c for c in json.loads(exported.scene_path.read_text())["colliders"] if c["name"] == "Crate")
        return [(k["frame"], round(k["position"][0], 6)) for k in item["keyframes"]]

    first = keys()
    assert [f for f, _ in first] == [1, 2, 3] and first[0][1] == 0.02 and first[-1][1] == 0.12
    assert 'FINISHED' in bpy.ops.sph.bake_data()
    bodies = ext.core("cache.cache_dir").CacheDir(saved_file.parent / "sph_cache").read_bodies(3)
    b = next(b for b in bodies if b["name"] == "Crate")
    assert b["location"][0] == pytest.approx(0.12, abs=1e-9)
    assert keys() == first, "re-exported over the bake's keys: still the artist's"
