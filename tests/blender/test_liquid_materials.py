"""The replay's look per material preset (liquid_materials.py), chosen from the bake's materials.

Checked on the node trees and the evaluated ``material`` attribute, not on pixels: which
Principled BSDF a point with material index ``i`` ends up shaded by is found by evaluating the
material's node tree for that attribute value.
"""

import json

import bpy
import numpy as np
import pytest
from evaluated import evaluated_mesh_attributes


def _cube(size: float, location, name: str):
    bpy.ops.mesh.primitive_cube_add(size=size, location=location)
    ob = bpy.context.object
    ob.name = name
    return ob


def _quick(preset: str, ob) -> None:
    for other in bpy.context.scene.objects:
        other.select_set(other == ob)
    bpy.context.view_layer.objects.active = ob
    assert bpy.ops.sph.quick_fluid(preset=preset) == {'FINISHED'}


def _domain():
    return next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')


def _coarse(frames: int = 1) -> None:
    """A few hundred particles, a frame or two: the materials are what is tested, not the flow."""
    d = _domain().sph.domain
    d.particle_spacing, d.frame_end = 0.05, frames


def _surface_material(ext) -> bpy.types.Material:
    replay = ext.sub("replay.objects")
    _, surface = replay.find_replay(_domain())
    return ext.sub("replay.inputs").get_input(surface, "Material")


def _value(socket, attribute: float) -> float:
    """The value reaching ``socket`` when the geometry attribute is ``attribute`` (Math and Attribute only)."""
    if not socket.is_linked:
        return socket.default_value
    node = socket.links[0].from_node
    if node.type == 'ATTRIBUTE':
        assert node.attribute_name == "material" and node.attribute_type == 'GEOMETRY'
        return attribute
    assert node.type == 'MATH', node.type
    a, b, c = (_value(node.inputs[k], attribute) for k in range(3))
    return {"COMPARE": float(abs(a - b) <= max(c, 1e-5)), "ADD": a + b}[node.operation]


def _shader_for(mat: bpy.types.Material, attribute: int) -> bpy.types.Node:
    """The Principled BSDF that shades a point whose ``material`` attribute is ``attribute``."""
    out = next(n for n in mat.node_tree.nodes if n.type == 'OUTPUT_MATERIAL')
    node = out.inputs["Surface"].links[0].from_node
    while node.type == 'MIX_SHADER':
        fac = _value(node.inputs["Fac"], attribute)
        assert fac in (0.0, 1.0), "a Mix Shader either keeps or replaces: a point has one material"
        node = node.inputs[2 if fac == 1.0 else 1].links[0].from_node
    assert node.type == 'BSDF_PRINCIPLED'
    return node


def _inputs(bsdf) -> dict:
    i = bsdf.inputs
    return {"color": tuple(i["Base Color"].default_value)[:3], "transmission": i["Transmission Weight"].default_value,
            "ior": i["IOR"].default_value, "subsurface": i["Subsurface Weight"].default_value,
            "roughness": i["Roughness"].default_value}


def test_every_preset_has_a_look_of_its_own(ext):
    """The built-in models declare a look for each of their presets (``core/models/presets.py``); a model
    added later may declare none (its presets get the neutral look: tests/blender/test_adding_a_model.py)."""
    lm, solvers = ext.sub("liquid_materials"), ext.sub("properties").SOLVERS
    declared = {model: solvers[model].looks for model in ("viscoelastic", "elastic", "sph")}
    for model, looks in declared.items():
        spec = solvers[model]
        assert set(spec.presets) <= set(looks), f"{model}: a preset without a look renders with the neutral one"
        assert not set(spec.moved_presets) & set(looks), f"{model}: a look of a preset it gave away"
        assert all(lm.look(model, preset) is looks[preset] for preset in spec.presets)
    # The sph model's classic water is the same substance as water, its melted chocolate the viscoelastic
    # model's chocolate: the pairs allowed to look alike.
    assert declared["sph"]["classic_water"] == declared["viscoelastic"]["water"]
    assert declared["sph"]["melted_chocolate"] == declared["viscoelastic"]["chocolate"]
    every = [lk for model, looks in declared.items() for preset, lk in looks.items()
             if (model, preset) not in {("sph", "classic_water"), ("sph", "melted_chocolate")}]
    assert len(set(every)) == len(every), "no two presets look the same"
    looks = declared["viscoelastic"]
    water, honey, plasticine = (looks[k] for k in ("water", "honey", "plasticine"))
    assert water.transmission == 1.0 and water.ior == pytest.approx(1.333) and water.roughness < 0.05
    assert honey.transmission == 1.0 and honey.color[0] > honey.color[1] > 2 * honey.color[2], "amber"
    assert plasticine.transmission == 0.0 and plasticine.roughness >= 0.7, "matte"
    oil, chocolate, toothpaste, dough = (looks[k] for k in ("oil", "chocolate", "toothpaste", "dough"))
    assert oil.transmission == 1.0 and oil.color[0] > oil.color[1] > 2 * oil.color[2], "golden and clear"
    assert chocolate.transmission == 0.0 and max(chocolate.color) < 0.15 and chocolate.coat >= 0.5, "dark, glossy"
    assert toothpaste.transmission == 0.0 and min(toothpaste.color) > 0.85, "white, opaque"
    assert dough.transmission == 0.0 and dough.roughness >= 0.7 and dough.color[0] > dough.color[2], "beige, matte"
    solids = declared["elastic"]
    jelly, gummy, silicone, rubber, flesh = (solids[k] for k in ("jelly", "gummy", "silicone", "rubber", "flesh"))
    assert jelly.subsurface == 1.0, "translucent by subsurface scattering"
    assert gummy.transmission >= 0.5 and gummy.roughness >= 0.2 and max(gummy.color) > 5 * min(gummy.color), \
        "translucent, frosted, strongly coloured"
    assert silicone.transmission == 0.0 and silicone.subsurface >= 0.5 and silicone.roughness >= 0.5, \
        "matte, translucent by scattering"
    assert min(silicone.color) > 0.75 and max(silicone.color) - min(silicone.color) < 0.1, "off-white"
    assert rubber.transmission == 0.0 and max(rubber.color) < 0.1, "opaque, dark"
    assert flesh.transmission == 0.0 and flesh.subsurface == 1.0, "skin scatters light under its surface"
    assert flesh.color[0] > flesh.color[1] > flesh.color[2] and flesh.subsurface_radius[0] == max(
        flesh.subsurface_radius), "a skin tone, red scattering farthest"
    lumps = declared["sph"]
    putty, clay, potato, snow = (lumps[k] for k in ("putty", "clay", "mashed_potato", "wet_snow"))
    assert all(lk.transmission == 0.0 and lk.roughness >= 0.5 for lk in (putty, clay, potato, snow)), "opaque pastes"
    assert min(putty.color) > 0.6 and putty.color[0] > putty.color[2], "cream"
    assert clay.color[0] > clay.color[1] > clay.color[2] and max(clay.color) < 0.5, "terracotta brown"
    assert potato.color[0] > potato.color[1] > potato.color[2] > 0.4, "pale yellow"
    assert snow.subsurface == 1.0 and snow.color[2] == max(snow.color) and min(snow.color) > 0.85, "white, blue cast"
    for preset, model in solvers["viscoelastic"].moved_presets.items():
        assert lm.look("viscoelastic", preset) == declared[model][preset], "a bake made before the move"


def test_lava_glows_by_its_temperature(ext, empty_file):
    """The lava look emits a black body at the point's ``temperature_celsius`` attribute (°C + 273.15 K), brightening
    from 600 to 1200 °C; water, beside it in one material, does not glow."""
    lm = ext.sub("liquid_materials")
    mat = lm.material_for([("viscoelastic", "water"), ("sph", "lava")])
    lava, water = _shader_for(mat, 1), _shader_for(mat, 0)
    assert not water.inputs["Emission Strength"].is_linked
    body = lava.inputs["Emission Color"].links[0].from_node
    assert body.type == 'BLACKBODY'
    kelvin = body.inputs["Temperature"].links[0].from_node
    assert kelvin.operation == 'ADD' and kelvin.inputs[1].default_value == pytest.approx(273.15)
    attr = kelvin.inputs[0].links[0].from_node
    # Cycles reads an attribute named "temperature" as a smoke volume's (0 on a mesh): the replay's copy.
    assert attr.type == 'ATTRIBUTE' and attr.attribute_name == "temperature_celsius"
    ramp = lava.inputs["Emission Strength"].links[0].from_node
    assert ramp.type == 'MAP_RANGE' and ramp.clamp
    assert (ramp.inputs["From Min"].default_value, ramp.inputs["From Max"].default_value) == (600.0, 1200.0)
    assert ramp.inputs["Value"].links[0].from_node == attr


def test_looks_are_keyed_by_model_and_preset(ext, empty_file, monkeypatch):
    """Two models may each have a preset of one name: each gets its own look, and one bake holding
    both shades each material index with its own model's."""
    lm, base, params = ext.sub("liquid_materials"), ext.core("models.base"), ext.core("scene.params")
    other = base.Look(color=(0.1, 0.2, 0.3), roughness=0.5)

    class OtherModel(base.MaterialModel):
        name = "other_model"
        parameters = (params.Parameter("density", 1000.0, "kg/m^3", 1.0, 1e4, description="Mass per volume."),)
        presets = {"water": {}, "honey": {}}
        looks = {"water": other}

    monkeypatch.setitem(lm.SOLVERS, "other_model", OtherModel)
    water_look = lm.SOLVERS["viscoelastic"].looks["water"]
    assert lm.look("viscoelastic", "water") == water_look != other
    assert lm.look("other_model", "water") == other
    assert lm.look("other_model", "honey") == lm.look("no_such_model", "water") == base.NEUTRAL_LOOK, \
        "no look declared: the neutral one"
    water = lm.material_for([("viscoelastic", "water")])
    assert lm.material_for([("viscoelastic", "water")]) is water, "built once"
    assert lm.material_for([("other_model", "water")]) is not water
    both = lm.material_for([("viscoelastic", "water"), ("other_model", "water")])
    assert both.name == "SPH Water (Viscoelastic) + Water (Other_Model)"
    assert _inputs(_shader_for(both, 0))["color"] == pytest.approx(water_look.color)
    assert _inputs(_shader_for(both, 1))["color"] == pytest.approx(other.color)


def test_a_material_keyed_by_presets_alone_is_kept(ext, empty_file):
    """Up to commit 45ad05e a material was tagged with its presets alone (every bake was viscoelastic):
    the same bake finds it again and re-keys it; another model's preset of that name does not."""
    lm = ext.sub("liquid_materials")
    old = bpy.data.materials.new("SPH Jelly + Water")
    old[lm.TAG] = "jelly,water"
    assert lm.material_for([("other_model", "jelly"), ("viscoelastic", "water")]) is not old
    assert lm.material_for([("viscoelastic", "jelly"), ("viscoelastic", "water")]) is old
    assert old[lm.TAG] == "viscoelastic/jelly,viscoelastic/water"
    assert old.name == "SPH Jelly + Water"


def test_a_material_made_while_jelly_was_viscoelastic_is_kept(ext, empty_file):
    """jelly and rubber moved to the elastic model (``moved_presets``): a material tagged with the old model
    (or, older still, the preset alone) is found by the same bake with the new model, and re-keyed."""
    lm = ext.sub("liquid_materials")
    assert ext.core("models").SOLVERS["viscoelastic"].moved_presets == {"jelly": "elastic", "rubber": "elastic"}
    old = bpy.data.materials.new("SPH Jelly + Water")
    old[lm.TAG] = "viscoelastic/jelly,viscoelastic/water"
    older = bpy.data.materials.new("SPH Rubber")
    older[lm.TAG] = "rubber"
    assert lm.material_for([("elastic", "jelly"), ("elastic", "water")]) not in (old, older), "water never moved"
    assert lm.material_for([("elastic", "jelly"), ("viscoelastic", "water")]) is old
    assert old[lm.TAG] == "elastic/jelly,viscoelastic/water"
    assert lm.material_for([("elastic", "rubber")]) is older and older[lm.TAG] == "elastic/rubber"
    gummy = lm.material_for([("elastic", "gummy")])
    assert gummy.name == "SPH Gummy" and gummy not in (old, older)
    # A cache baked before the move names the viscoelastic model: the look is the elastic model's.
    stale = lm.material_for([("viscoelastic", "rubber")])
    assert stale is not older and _inputs(_shader_for(stale, 0))["color"] == pytest.approx(
        lm.SOLVERS["elastic"].looks["rubber"].color)


def test_the_cache_names_each_materials_model_and_preset(ext, tmp_path):
    lm = ext.sub("liquid_materials")
    assert lm.cache_looks(tmp_path) is None, "nothing baked"
    (tmp_path / "scene.json").write_text(json.dumps({"materials": [
        {"name": "a", "model": "viscoelastic", "preset": "honey"}, {"name": "b", "preset": "water"},
        {"name": "c"}]}))
    assert lm.cache_looks(tmp_path) == [("viscoelastic", "honey"), ("viscoelastic", "water"), ("viscoelastic", "")]


def test_water_and_honey_quick_setups_get_different_surface_materials(ext, saved_file):
    found = {}
    for preset in ("water", "honey"):
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.wm.save_as_mainfile(filepath=str(saved_file.with_name(f"{preset}.blend")))
        _quick(preset, _cube(0.3, (0, 0, 0.5), "Blob"))
        _coarse()
        _domain().sph.domain.cache_directory = f"//{preset}_cache"
        assert bpy.ops.sph.bake() == {'FINISHED'}
        mat = _surface_material(ext)
        found[preset] = (mat.name, _inputs(_shader_for(mat, 0)))
    assert found["water"][0] == "SPH Water" and found["honey"][0] == "SPH Honey"
    water, honey = found["water"][1], found["honey"][1]
    assert water["ior"] == pytest.approx(1.333) and honey["ior"] == pytest.approx(1.49)
    assert water["color"] != honey["color"]
    r, g, b = honey["color"]
    assert r > g > b, "honey is amber"


def test_two_material_bake_shades_two_ways_from_the_material_attribute(ext, saved_file):
    """Water and jelly in one bake: the surface's material attribute takes both indices, and each index
    reaches its preset's shader (index order: Fluid objects by name, then Inflows, then Solids: Quick Jelly
    makes a Solid of the elastic model)."""
    jelly, water = _cube(0.3, (0.25, 0, 0.5), "A Jelly"), _cube(0.3, (-0.25, 0, 0.5), "B Water")
    for ob in (jelly, water):
        ob.select_set(True)
    assert bpy.ops.sph.make_domain() == {'FINISHED'}
    _quick("jelly", jelly)
    _quick("water", water)
    assert len([ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN']) == 1
    _coarse(frames=2)
    assert bpy.ops.sph.bake() == {'FINISHED'}
    mat = _surface_material(ext)
    assert (jelly.sph.role, jelly.sph.material.model) == ('SOLID', "elastic")
    assert mat.name == "SPH Water + Jelly"
    replay = ext.sub("replay.objects")
    particles, surface = replay.find_replay(_domain())
    assert ext.sub("replay.inputs").get_input(particles, "Material") == mat
    bpy.context.scene.frame_set(2)
    indices = evaluated_mesh_attributes(surface)["material"][1]
    assert set(np.unique(indices)) == {0, 1}
    water, jelly = _inputs(_shader_for(mat, 0)), _inputs(_shader_for(mat, 1))
    assert jelly["subsurface"] == 1.0 and jelly["transmission"] == 0.0
    assert water["transmission"] == 1.0 and water["ior"] == pytest.approx(1.333)


def test_the_domains_material_and_the_artists_win(ext, saved_file):
    _quick("honey", _cube(0.3, (0, 0, 0.5), "Blob"))
    _coarse()
    mine = bpy.data.materials.new("Mine")
    _domain().data.materials.append(mine)
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    assert _surface_material(ext) == mine
    # Without the Domain's material: the preset's look, until the artist sets one on the modifier.
    _domain().data.materials.clear()
    replay = ext.sub("replay.objects")
    _, surface = replay.find_replay(_domain())
    ext.sub("replay.inputs").set_input(surface, "Material", None)
    assert bpy.ops.sph.bake_data(replace=True) == {'FINISHED'}
    assert _surface_material(ext).name == "SPH Honey"
    theirs = bpy.data.materials.new("Theirs")
    ext.sub("replay.inputs").set_input(surface, "Material", theirs)
    assert bpy.ops.sph.bake_data(replace=True) == {'FINISHED'}
    assert _surface_material(ext) == theirs
