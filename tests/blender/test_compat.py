"""The compatibility layer (``sph_addon/blender/compat.py``) on every Blender the suite runs on:
Geometry Nodes modifier inputs (ID properties up to 5.1, RNA structs from 5.2), keyframes
(channelbags of Action slots since 5.0), and the platform check at enable time."""

import bpy
import pytest

pytestmark = pytest.mark.smoke


@pytest.fixture
def modifier(empty_file):
    group = bpy.data.node_groups.new("Inputs", 'GeometryNodeTree')
    group.interface.new_socket("Geometry", in_out='INPUT', socket_type='NodeSocketGeometry')
    group.interface.new_socket("Geometry", in_out='OUTPUT', socket_type='NodeSocketGeometry')
    sockets = {name: group.interface.new_socket(name, in_out='INPUT', socket_type=f"NodeSocket{kind}").identifier
               for name, kind in (("Radius", "Float"), ("Frame", "Int"), ("Path", "String"), ("Material", "Material"))}
    group.links.new(group.nodes.new("NodeGroupInput").outputs[0], group.nodes.new("NodeGroupOutput").inputs[0])
    ob = bpy.data.objects.new("Holder", bpy.data.meshes.new("Holder"))
    bpy.context.scene.collection.objects.link(ob)
    mod = ob.modifiers.new("Nodes", 'NODES')
    mod.node_group = group
    return mod, sockets


def test_modifier_inputs_round_trip_by_socket_identifier(ext, modifier):
    compat = ext.sub("compat")
    mod, sockets = modifier
    material = bpy.data.materials.new("Liquid")
    values = {"Radius": 0.25, "Frame": 7, "Path": "//sph_cache/particles_{frame:04}.ply", "Material": material}
    for name, value in values.items():
        compat.set_modifier_input(mod, sockets[name], value)
    for name, value in values.items():
        got = compat.get_modifier_input(mod, sockets[name])
        assert got == pytest.approx(value) if name == "Radius" else got == value, name
    compat.set_modifier_input(mod, sockets["Material"], None)
    assert compat.get_modifier_input(mod, sockets["Material"]) is None
    assert compat.get_modifier_input(mod, "Socket_99") is None, "no such input"


def test_fcurves_are_found_and_made_in_the_layout_of_this_blender(ext, empty_file):
    compat = ext.sub("compat")
    keyed = bpy.data.objects.new("Keyed", None)
    bpy.context.scene.collection.objects.link(keyed)
    assert compat.action_fcurves(keyed) is None, "no animation yet"
    keyed.location.x = 1.0
    keyed.keyframe_insert("location", index=0, frame=1)
    keyed.location.x = 3.0
    keyed.keyframe_insert("location", index=0, frame=5)
    curve = compat.action_fcurves(keyed).find("location", index=0)
    assert [tuple(k.co) for k in curve.keyframe_points] == [(1.0, 1.0), (5.0, 3.0)]

    written = bpy.data.objects.new("Written", None)
    bpy.context.scene.collection.objects.link(written)
    curve = compat.action_fcurves(written, create=True).new("location", index=2)
    curve.keyframe_points.insert(1, 0.0)
    curve.keyframe_points.insert(11, 2.0)
    bpy.context.scene.frame_set(6)
    assert written.location.z == pytest.approx(1.0, abs=0.2), "the keys written animate the object"
    assert compat.action_fcurves(written).find("location", index=2) is not None


def test_an_unsupported_platform_is_refused_at_enable_with_one_sentence(ext, tmp_path, monkeypatch):
    runtime = ext.sub("runtime")
    (tmp_path / "blender_manifest.toml").write_text(
        'platforms = ["windows-x64"]\nwheels = ["./wheels/numba-0.68.1-cp311-cp311-win_amd64.whl", '
        '"./wheels/llvmlite-0.50.0-cp311-cp311-win_amd64.whl"]\n')
    monkeypatch.setattr(runtime, "EXTENSION_DIR", tmp_path)
    monkeypatch.setattr(runtime.importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(runtime.NumbaUnavailable) as refused:
        runtime.register()
    assert str(refused.value).startswith("SPH Fluids cannot run in this Blender: numba")
    assert "bundled for windows-x64 with Python 3.11" in str(refused.value)
