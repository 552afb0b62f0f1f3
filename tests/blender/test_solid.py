"""The Solid role (a soft solid whose own mesh the particles deform): export, replay of the artist's object,
Quick Jelly, Alembic. The replay tests use a synthetic cache (a rigidly turning copy of the mesh); the
bake tests bake a tiny jelly with the elastic model."""

import json
import math

import bpy
import numpy as np
import pytest
from conftest import BLENDER

FRAMES = (1, 2, 3)
MODES = ["handler"] if BLENDER < (4, 5) else ["import_ply", "handler"]


@pytest.fixture(params=MODES)
def replay_solid(ext, monkeypatch, request):
    """The Solid replay in each mechanism this Blender runs (4.5+ also runs 4.2's handler path)."""
    module = ext.sub("replay.solid")
    if request.param == "handler":
        monkeypatch.setattr(bpy.types, "GeometryNodeImportPLY", None, raising=False)
        monkeypatch.delattr(bpy.types, "GeometryNodeImportPLY")
    return module


def _jelly_object(name: str = "Jelly") -> bpy.types.Object:
    """A moved, turned, scaled UV sphere with a UV layer, two material slots and a Subdivision modifier."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=8, radius=0.2, location=(0.3, -0.2, 0.5),
                                         rotation=(0.3, 0.0, 0.7))
    ob = bpy.context.object
    ob.name = name
    ob.scale = (1.0, 1.5, 1.0)
    for k in range(2):
        ob.data.materials.append(bpy.data.materials.new(f"{name} look {k}"))
    ob.modifiers.new("Subdivision", 'SUBSURF')
    bpy.context.view_layer.update()
    return ob


def _world(ob) -> np.ndarray:
    co = np.empty(3 * len(ob.data.vertices), np.float32)
    ob.data.vertices.foreach_get("co", co)
    m = np.array(ob.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def _turned(rest: np.ndarray, frame: int) -> np.ndarray:
    """The mesh turned about z through its centre and moved up, more every frame."""
    a = 0.4 * frame
    r = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
    c = rest.mean(axis=0)
    return (rest - c) @ r.T + c + np.array([0.0, 0.0, 0.1 * frame])


def _synthetic_cache(ext, root, ob, source: int = 1) -> None:
    """``root/sph_cache`` as a bake of ``ob`` as source ``source`` leaves it: its stored scene and deformed frames."""
    cache = ext.core("cache.cache_dir").CacheDir(root / "sph_cache")
    cache.root.mkdir(parents=True, exist_ok=True)
    sources = [{"type": "box", "material": "other"}] * source + [
        {"type": "mesh", "material": ob.name, "path": "solid.ply", "bind_mesh": True}]
    (cache.root / "scene.json").write_text(json.dumps({"sources": sources}))
    rest = _world(ob)
    for frame in FRAMES:
        rec = np.empty(len(rest), [("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
        pos = _turned(rest, frame)
        rec["x"], rec["y"], rec["z"] = pos[:, 0], pos[:, 1], pos[:, 2]
        ext.core("cache.plyio").write_ply(cache.deformed_path(source, frame), rec)


def _deformed_world(ob, without: str = "Subdivision") -> np.ndarray:
    """The evaluated vertices of ``ob`` in world space, with the modifier ``without`` turned off."""
    mod = ob.modifiers.get(without)
    if mod is not None:
        mod.show_viewport = False
    try:
        dg = bpy.context.evaluated_depsgraph_get()
        dg.update()
        me = ob.evaluated_get(dg).data
        co = np.empty(3 * len(me.vertices), np.float32)
        me.vertices.foreach_get("co", co)
    finally:
        if mod is not None:
            mod.show_viewport = True
    m = np.array(ob.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


@pytest.mark.smoke
def test_replay_deforms_the_artists_object(ext, saved_file, replay_solid):
    ob = _jelly_object()
    domain = bpy.data.objects.new("Domain", None)
    bpy.context.scene.collection.objects.link(domain)
    rest = _world(ob)
    nv, uv, slots = len(ob.data.vertices), [u.name for u in ob.data.uv_layers], len(ob.material_slots)
    _synthetic_cache(ext, saved_file.parent, ob)
    shown = replay_solid.ensure_solids(domain, "//sph_cache", saved_file.parent / "sph_cache", 1.0)
    assert shown == [ob] and ob.modifiers[0].name == replay_solid.MODIFIER_NAME
    assert [m.name for m in ob.modifiers] == [replay_solid.MODIFIER_NAME, "Subdivision"]
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        np.testing.assert_allclose(_deformed_world(ob), _turned(rest, frame), rtol=0, atol=2e-6)
    bpy.context.scene.frame_set(7)  # after the bake: the last frame holds
    np.testing.assert_allclose(_deformed_world(ob), _turned(rest, 3), rtol=0, atol=2e-6)
    # The artist's mesh itself is untouched: vertices, UVs, material slots; the Subdivision still applies.
    assert len(ob.data.vertices) == nv and [u.name for u in ob.data.uv_layers] == uv and len(ob.material_slots) == slots
    np.testing.assert_allclose(_world(ob), rest, rtol=0, atol=1e-6)
    dg = bpy.context.evaluated_depsgraph_get()
    assert len(ob.evaluated_get(dg).data.vertices) > nv
    # Freed: the object shows its own mesh again.
    for p in (saved_file.parent / "sph_cache" / "deformed").iterdir():
        p.unlink()
    replay_solid.refresh(domain)
    bpy.context.scene.frame_set(2)
    np.testing.assert_allclose(_deformed_world(ob), rest, rtol=0, atol=1e-6)


def test_replay_survives_save_and_reopen(ext, saved_file, replay_solid):
    ob = _jelly_object()
    domain = bpy.data.objects.new("Domain", None)
    bpy.context.scene.collection.objects.link(domain)
    rest = _world(ob)
    _synthetic_cache(ext, saved_file.parent, ob, source=0)
    replay_solid.ensure_solids(domain, "//sph_cache", saved_file.parent / "sph_cache", 1.0)
    bpy.context.scene.frame_set(2)
    bpy.ops.wm.save_as_mainfile(filepath=str(saved_file))
    bpy.ops.wm.open_mainfile(filepath=str(saved_file))
    ob = bpy.data.objects["Jelly"]
    bpy.context.scene.frame_set(3)
    np.testing.assert_allclose(_deformed_world(ob), _turned(rest, 3), rtol=0, atol=2e-6)


# ---------------------------------------------------------------------------- with a bake

def _quick_jelly() -> tuple[bpy.types.Object, bpy.types.Object]:
    """Quick Jelly on a 0.2 m cube with two material slots and a Subdivision modifier; a coarse Domain (64
    particles, 3 frames)."""
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.0, 0.0, 0.3), rotation=(0.0, 0.0, 0.4))
    ob = bpy.context.object
    ob.name = "Jelly"
    for k in range(2):
        ob.data.materials.append(bpy.data.materials.new(f"look {k}"))
    ob.modifiers.new("Subdivision", 'SUBSURF')
    assert 'FINISHED' in bpy.ops.sph.quick_fluid(preset="jelly")
    domain = next(o for o in bpy.data.objects if o.sph.role == 'DOMAIN')
    d = domain.sph.domain
    d.particle_spacing, d.frame_start, d.frame_end = 0.05, 1, 3
    return ob, domain


def test_quick_jelly_makes_a_solid_of_the_elastic_model(ext, saved_file):
    ob, domain = _quick_jelly()
    assert ob.sph.role == 'SOLID' and ob.sph.material.model == "elastic"
    assert ob.sph.material.elastic.preset == "jelly"
    assert not ob.hide_render  # the object itself is what renders
    assert not domain.sph.domain.surface_enabled  # a surface of its particles would render it twice


def test_solid_exports_its_base_mesh_bound_to_its_particles(ext, saved_file):
    ob, domain = _quick_jelly()
    ob.modifiers.new("Displace", 'DISPLACE').strength = 0.5  # modifiers come after the deformation
    exported = ext.sub("export.snapshot").export(bpy.context.scene, domain)
    source = exported.scene.sources[0][1]
    assert exported.scene.sources[0][0] == "mesh" and source["bind_mesh"] and source["material"] == "Jelly"
    assert exported.scene.materials[0].model == "elastic"
    mesh = ext.core("cache.plyio").read_ply(exported.scene_path.parent / source["path"]).positions()
    np.testing.assert_allclose(mesh, _world(ob), rtol=0, atol=1e-6)  # Blender's vertex order, world space


@pytest.mark.parametrize("model", ["sph", "viscoelastic"])
def test_a_solid_of_a_model_whose_particles_carry_no_mesh_is_refused_by_name(ext, saved_file, model):
    """Only the elastic model's particles carry a mesh (their rotations): a Solid set to another model, putty of
    the sph model say, is refused naming the object and its Model, with the Fluid as the way out."""
    ob, domain = _quick_jelly()
    ob.sph.material.model = model
    with pytest.raises(ext.sub("export.errors").ExportError) as info:
        ext.sub("export.snapshot").export(bpy.context.scene, domain)
    message = str(info.value)
    assert message.startswith("Jelly: Model: only particles of the Elastic model carry a Solid's mesh"), message
    assert "make the object a Fluid" in message and "bind_mesh" not in message, message


def test_a_keyed_melt_amount_exports_as_melt_keys_with_the_liquid_it_melts_into(ext, saved_file):
    """A Solid's Melt Amount keyed 0 at frame 2 and 1 at frame 4 becomes its source's melt keys at every frame
    (Blender's curve, the flat runs' inner frames dropped); the liquid it Melts Into, a Fluid whose Enabled box
    is off, is exported as a material without particles."""
    ob, domain = _quick_jelly()
    domain.sph.domain.frame_end = 5
    bpy.ops.mesh.primitive_cube_add(size=0.1, location=(0.5, 0.0, 0.3))
    liquid = bpy.context.object
    liquid.name, liquid.sph.role, liquid.sph.enabled = "Melted", 'FLUID', False
    liquid.sph.material.model = "sph"
    liquid.sph.material.sph.density = ob.sph.material.elastic.density
    ob.sph.material.elastic.melts_into = "Melted"
    for frame, amount in ((2, 0.0), (4, 1.0)):
        ob.sph.fluid.melt_amount = amount
        ob.keyframe_insert('sph.fluid.melt_amount', frame=frame)
    exported = ext.sub("export.snapshot").export(bpy.context.scene, domain)
    keys = exported.scene.sources[0][1]["melt_keyframes"]
    assert [k["frame"] for k in keys] == [1, 2, 3, 4, 5], keys
    np.testing.assert_allclose([k["amount"] for k in keys], [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-6)
    names = [m.name for m in exported.scene.materials]
    assert names == ["Jelly", "Melted"] and len(exported.scene.sources) == 1
    assert exported.scene.materials[0].params.melts_into == "Melted"


@pytest.mark.smoke
def test_baked_jelly_deforms_its_object_and_alembic_holds_it(ext, saved_file):
    ob, domain = _quick_jelly()
    nv, uv, slots = len(ob.data.vertices), [u.name for u in ob.data.uv_layers], len(ob.material_slots)
    rest = _world(ob)
    assert 'FINISHED' in bpy.ops.sph.bake()
    assert ob.modifiers[0].name == "SPH Deform" and ob.modifiers[1].name == "Subdivision"
    assert len(ob.data.vertices) == nv and [u.name for u in ob.data.uv_layers] == uv and len(ob.material_slots) == slots
    np.testing.assert_allclose(_world(ob), rest, rtol=0, atol=1e-6)  # the mesh datablock is the artist's
    cache = ext.core("cache.cache_dir").CacheDir(saved_file.parent / "sph_cache")
    bpy.context.scene.frame_set(3)
    baked = ext.core("cache.plyio").read_ply(cache.deformed_path(0, 3)).positions()
    assert np.abs(baked - rest).max() > 1e-3, "the jelly did not move"
    np.testing.assert_allclose(_deformed_world(ob), baked, rtol=0, atol=1e-5)

    path = saved_file.parent / "jelly.abc"
    assert 'FINISHED' in bpy.ops.sph.export_alembic(filepath=str(path), surface=False)
    before = set(bpy.data.objects)
    bpy.ops.wm.alembic_import(filepath=str(path), as_background_job=False)
    imported = [o for o in bpy.data.objects if o not in before]
    assert [o.type for o in imported] == ['MESH'], imported
    bpy.context.scene.frame_set(3)
    np.testing.assert_allclose(_deformed_world(imported[0]), baked, rtol=0, atol=1e-4)
