"""docs/adding_a_model.md's step 8 ("Blender comes for free"), followed with the page's example.

The example's term and model are added to the enabled extension's copy of the core as
tests/core/test_adding_a_model.py adds them to the core (``tests/adding_a_model_page.py``), and the
extension's Blender layer is registered again: it generates its settings from the model registry when
it registers, as it does when Blender starts with a plug-in's model registered. Then what a newcomer
looks for: the model's settings group and its properties, the model selector, the preset menu, the
panel drawing them, the exported material, and the replay's look of each preset (the declared one; the
neutral one for the preset the page declares none for). No file in ``sph_addon/blender/`` is edited.
"""

import importlib

import bpy
import pytest
from adding_a_model_page import page_model
from test_liquid_materials import _inputs, _shader_for
from test_ui import _draw_all


@pytest.fixture
def drag(ext, tmp_path):
    """The page's model, registered in the extension's core, with the Blender layer generated again."""
    core = importlib.import_module(f"{ext.package}.core")
    layer = importlib.import_module(f"{ext.package}.blender")
    layer.unregister()
    try:
        with page_model(core, tmp_path / "page_model") as model:
            layer.register()
            try:
                yield model
            finally:
                layer.unregister()
    finally:
        layer.register()  # as it was, without the model


def test_the_model_gets_its_settings_its_presets_and_its_panel(ext, drag, empty_file):
    props = ext.sub("properties")
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.object
    ob.sph.role = 'FLUID'
    m = ob.sph.material
    models = {i.identifier: i.name for i in m.bl_rna.properties["model"].enum_items}
    assert list(models) == list(props.SOLVERS) and models["drag"] == "Drag", "the selector lists it last"
    group = m.drag
    assert group.bl_rna.identifier == "SPH_PG_material_drag"
    for p in drag.parameters:
        prop = group.bl_rna.properties[p.name]
        assert prop.name == p.label and prop.description.startswith(p.description), p.name
        if isinstance(p.default, float):  # the model's own floats and the world passes' (heat, phase)
            assert (prop.default, prop.hard_min, prop.hard_max) == pytest.approx((p.default, p.minimum, p.maximum)), \
                p.name
        else:  # the names a material melts into or solidifies into (text, empty by default)
            assert prop.default == p.default, p.name
    presets = group.bl_rna.properties["preset"].enum_items
    assert sorted(i.identifier for i in presets) == sorted(drag.presets) == ["dust", "sand"]
    m.model = "drag"
    assert group.preset == "dust", "a model chosen for the first time starts from its default preset"
    assert (group.density, group.drag) == pytest.approx((1200.0, 200.0))
    group.preset = "sand"
    assert (group.density, group.drag) == pytest.approx((1600.0, 20.0)), "choosing a preset sets its values"
    group.drag = 30.0
    assert ext.sub("export.values").material_item(ob) == {"name": ob.name, "model": "drag", "preset": "sand",
                                                        "params": {"drag": 30.0}}
    log = _draw_all(ext, ob)
    owners = {name for kind, name in log if kind == "prop_of"}
    assert {f"SPH_PG_material_drag.{p.name}" for p in drag.parameters} | {"SPH_PG_material_drag.preset"} <= owners
    texts = {text for kind, text in log if kind == "prop_text"}
    assert "drag: Drag (1/s)" in texts, texts


def test_each_preset_has_a_look_the_declared_one_or_the_neutral_one(ext, drag, empty_file):
    """The page declares a look for ``sand`` and none for ``dust``: sand shades as declared, dust with the
    neutral look, in one material that picks each by the point's material index."""
    lm, base = ext.sub("liquid_materials"), ext.core("models.base")
    assert lm.look("drag", "sand") == drag.looks["sand"]
    assert "dust" not in drag.looks and lm.look("drag", "dust") == base.NEUTRAL_LOOK
    mat = lm.material_for([("drag", "sand"), ("drag", "dust")])
    assert mat.name == "SPH Sand + Dust"
    assert _inputs(_shader_for(mat, 0))["color"] == pytest.approx(drag.looks["sand"].color)
    assert _inputs(_shader_for(mat, 1))["color"] == pytest.approx(base.NEUTRAL_LOOK.color)


def test_the_layer_without_the_model_is_as_before(ext, empty_file):
    """Registered again without the page's model (after the tests above), the extension lists only its own."""
    props = ext.sub("properties")
    bpy.ops.mesh.primitive_cube_add()
    m = bpy.context.object.sph.material
    assert "drag" not in props.SOLVERS and "drag" not in m.bl_rna.properties
    assert [i.identifier for i in m.bl_rna.properties["model"].enum_items] == list(props.SOLVERS)
