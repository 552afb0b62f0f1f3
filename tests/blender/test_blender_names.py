"""The core's name rules (core/scene/blender_names.py) against the Blender running the tests.

The core checks a model's names without Blender, from frozen lists: the members of Blender's
PropertyGroup and the names the extension keeps on its groups. Here those lists are held against
this Blender and this extension; a model that passes the checks is accepted by the extension's
property generation and by Blender; and each name the checks refuse does break in Blender.
"""

import bpy
import pytest
from bpy.props import FloatProperty, PointerProperty


def _property_group_members() -> set[str]:
    return ({n for n in dir(bpy.types.PropertyGroup) if not n.startswith("_")}
            | set(bpy.types.PropertyGroup.bl_rna.properties.keys()))


def test_the_frozen_lists_hold_this_blenders_members_and_the_extensions_names(ext):
    names, props, migrate = ext.core("scene.blender_names"), ext.sub("properties"), ext.sub("migrate")
    assert _property_group_members() <= names.PROPERTY_GROUP_MEMBERS, "a member this Blender added"
    material = bpy.types.Object.bl_rna.properties["sph"].fixed_type.properties["material"].fixed_type
    own = set(material.properties.keys()) - set(props.SOLVERS) - names.PROPERTY_GROUP_MEMBERS
    assert own <= names.MATERIAL_GROUP_NAMES, own - names.MATERIAL_GROUP_NAMES
    assert migrate.RESERVED_NAMES <= names.MATERIAL_GROUP_NAMES
    for model, spec in props.SOLVERS.items():
        group = material.properties[model].fixed_type
        extra = set(group.properties.keys()) - {p.name for p in spec.parameters} - names.PROPERTY_GROUP_MEMBERS
        assert extra <= names.MODEL_GROUP_NAMES, (model, extra)
        assert group.identifier == f"{names.MODEL_CLASS_PREFIX}{model}"
    assert props.stable_number is names.stable_number, "one numbering for the check and for Blender"


def _edge_model(ext):
    """Names at the limits of the rules: a 47-byte model name (a 63-byte class name), a 63-byte
    parameter, names beside reserved ones, a choice parameter and two presets."""
    names, Parameter = ext.core("scene.blender_names"), ext.core("scene.params").Parameter
    base = ext.core("models.base")
    length = Parameter("p" * names.MAX_NAME_BYTES, 0.5, "m", 0.0, 2.0, description="a length")
    return type("EdgeNames", (base.MaterialModel,), {
        "name": "m" * names.MAX_MODEL_NAME_BYTES, "description": "a test model",
        "parameters": (length, Parameter("names", 3, "", 0, 10, description="a count"),
                       Parameter("mode", "b_2", choices=("a", "b_2"), description="a choice"),
                       Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, description="mass per volume")),
        "presets": {"thick": {"names": 7}, "thin": {"mode": "a"}}})


def test_a_model_passing_the_checks_gets_its_settings_in_blender(ext, empty_file):
    props, solvers = ext.sub("properties"), ext.core("models")
    model = solvers.register(_edge_model(ext))
    probe = group_cls = None
    try:
        classes = {cls.__name__: cls for cls in props._make_groups()}
        group_cls = classes[f"SPH_PG_material_{model.name}"]
        material = classes["SPHMaterialSettings"].__annotations__
        # The model's group and, beside the extension's own material group, one holding the
        # selector (with the new model as an item) and the model's pointer under the model's name.
        probe = type("SPH_PG_names_probe", (bpy.types.PropertyGroup,), {"__annotations__": {
            "model": material["model"], "initial_velocity": material["initial_velocity"],
            model.name: material[model.name]}})
        bpy.utils.register_class(group_cls)
        bpy.utils.register_class(probe)
        bpy.types.Object.sph_names_probe = PointerProperty(type=probe)
        ob = bpy.data.objects.new("probe", bpy.data.meshes.new("probe"))
        material = ob.sph_names_probe
        material.model = model.name
        group = getattr(material, model.name)
        assert group.preset == "thick" and group.names == 7, "first use: the default preset's values"
        group.preset = "thin"
        assert (group.names, group.mode) == (3, "a")
        setattr(group, "p" * 63, 1.25)
        assert getattr(group, "p" * 63) == pytest.approx(1.25)
        assert callable(group.get) and callable(group.keys) and group.bl_rna.identifier == group_cls.__name__
    finally:
        if probe is not None and hasattr(bpy.types.Object, "sph_names_probe"):
            del bpy.types.Object.sph_names_probe
        for cls in (probe, group_cls):
            if cls is not None and cls.is_registered:
                bpy.utils.unregister_class(cls)
        solvers.unregister(model.name)


@pytest.mark.parametrize("name", ["_hidden", "p" * 64, "get", "keys", "bl_rna", "name", "rna_type"])
def test_a_name_the_checks_refuse_breaks_in_blender(ext, empty_file, name):
    """Blender refuses it at registration, or registers it and loses the member of that name."""
    names = ext.core("scene.blender_names")
    assert names.property_problem(name) is not None
    cls = type("SPH_PG_names_refused", (bpy.types.PropertyGroup,),
               {"__annotations__": {name: FloatProperty(default=1.5)}})
    try:
        bpy.utils.register_class(cls)
    except ValueError:
        assert name.startswith("_") or len(name) > names.MAX_NAME_BYTES
        return
    try:
        bpy.types.Object.sph_names_refused = PointerProperty(type=cls)
        group = bpy.data.objects.new("probe", None).sph_names_refused
        assert getattr(group, name) == 1.5, "the property replaced the group's member"
    finally:
        del bpy.types.Object.sph_names_refused
        bpy.utils.unregister_class(cls)
