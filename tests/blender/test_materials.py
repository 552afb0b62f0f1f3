"""The material-model contract in Blender: one settings group per model, presets scoped to their
model, and files saved with the old single group (layout 1) keeping their settings.

The fixtures in tests/data/exported/ were recorded by ``record_exports.py`` with the add-on as it
was before per-model groups, from the committed samples and ``old_layout.blend`` (all saved with
that add-on): opening them now must export exactly the same materials, less the parameters removed
since (scene format 2: ``stiffness``, ``repulsion_factor``, ``rest_density``), which are dropped
with one console note per object.
"""

import dataclasses
import json
import shutil
import types

import bpy
import pytest
import record_exports

FILES = record_exports.blend_files()
LAYOUT1_KEYS = ("stiffness", "viscosity", "springs", "preset")


def _fixture(name: str, ext) -> dict:
    """What the old add-on exported, less the parameters this version no longer has (dropped on load),
    plus the values the old presets stored that today's presets changed: an upgrade keeps a file's
    settings, so they are now the file's own overrides. A preset that moved to another model exports
    that model and preset with no overrides."""
    data = json.loads((record_exports.OUT / f"{name}.json").read_text(encoding="utf-8"))
    solvers = ext.core("models").SOLVERS
    for m in data["materials"]:
        if m != record_exports.with_moved_presets(m, solvers):
            # A preset another model has now (jelly): that model with the preset's own values; the old
            # model's values stay in its group, unused.
            m.update(record_exports.with_moved_presets(m, solvers))
            continue
        m["params"] = {k: v for k, v in m["params"].items() if k not in REMOVED.get(m["model"], {})}
        today = ext.sub("properties").preset_values(m["model"], m["preset"])
        kept = {k: v for k, v in OLD_PRESETS.get(m["preset"], {}).items() if today[k] != v}
        m["params"] = {**kept, **m["params"]}
    return data


# What the presets stored, for the parameters still declared, when the fixtures were recorded.
OLD_PRESETS = {
    "honey": {"stiff_viscosity": 1.0},
    "mud": {"stiff_viscosity": 0.3, "springs": "dynamic", "plasticity": 1.0, "yield_ratio": 0.15},
    "slime": {"stiff_viscosity": 0.3, "springs": "dynamic", "plasticity": 2.0, "yield_ratio": 0.2},
    "plasticine": {"stiff_viscosity": 0.3, "springs": "mould", "plasticity": 8.0, "yield_ratio": 0.02},
}


# Removed from the viscoelastic model by scene format 2; still in the fixtures and the old files.
REMOVED = {"viscoelastic": ("stiffness", "repulsion_factor", "rest_density", "viscosity", "viscous_stretching",
                            "spring_stiffness")}


def _open_copy(name: str, tmp_path):
    path = tmp_path / f"{name}.blend"
    shutil.copy(FILES[name], path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    return path


def _domain():
    return next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')


def _emitters():
    return [ob for ob in bpy.data.objects if ob.sph.role in {'FLUID', 'INFLOW'}]


def _exported(ext, tmp_path) -> dict:
    data, _ = ext.sub("export.snapshot").build_scene(bpy.context.scene, _domain(), tmp_path / "input", (1, 1))
    velocities = {s["material"]: s["velocity"] for s in data["sources"] if s["type"] == "mesh"}
    return {"materials": data["materials"], "initial_velocities": velocities}


# ---------------------------------------------------------------------------- old files

@pytest.mark.smoke
@pytest.mark.parametrize("name", sorted(FILES))
def test_old_layout_file_exports_the_same_materials(ext, tmp_path, empty_file, name):
    """Upgraded on load: the same model, preset and overrides as the old add-on exported."""
    migrate = ext.sub("migrate")
    _open_copy(name, tmp_path)
    for ob in _emitters():
        m = ob.sph.material
        assert migrate.is_current(m) and not migrate.pending(m), ob.name
        assert not set(LAYOUT1_KEYS) & set(m.keys()), f"{ob.name}: old values left on ob.sph.material"
    for ob in bpy.data.objects:
        assert not migrate.pending(ob.sph.material), f"{ob.name}: an enum still stored by position"
        if ob.sph.role == 'COLLIDER':
            assert ob.sph.collider.mode == 'solid', "stored as position 0 by the old add-on"
    want = _fixture(name, ext)
    first = _exported(ext, tmp_path)
    assert first["materials"] == want["materials"]
    assert first["initial_velocities"] == want["initial_velocities"]
    assert not any(migrate.upgrade(ob.sph.material) for ob in _emitters()), "upgrading twice changes nothing"
    assert _exported(ext, tmp_path) == first


def test_old_layout_is_upgraded_at_export_without_the_load_handler(ext, tmp_path, empty_file):
    """The farm command and appended objects may miss load_post: the export upgrades them itself."""
    migrate = ext.sub("migrate")
    assert bpy.app.handlers.load_post.count(migrate._upgrade_on_load) == 1, "registered once"
    migrate.unregister()
    try:
        assert migrate._upgrade_on_load not in bpy.app.handlers.load_post
        _open_copy("old_layout", tmp_path)
    finally:
        migrate.register()
    goo = bpy.data.objects["Goo"]
    assert migrate.pending(goo.sph.material) and goo.sph.material.get("viscosity") == pytest.approx(123.0)
    assert _exported(ext, tmp_path) == {k: v for k, v in _fixture("old_layout", ext).items() if k != "recorded_with"}
    group = goo.sph.material.viscoelastic
    assert (group.preset, group.springs) == ("honey", "dynamic")
    assert not {"viscosity", "viscous_stretching"} & set(group.keys()), "Clavet's σ is dropped, not converted"
    assert not migrate.pending(goo.sph.material)


def test_appended_old_object_is_upgraded_at_export_and_panel_edits_win(ext, tmp_path, saved_file):
    """Appending skips load_post: the old values reach the export, except one edited in the new panel."""
    migrate, export_values = ext.sub("migrate"), ext.sub("export.values")
    with bpy.data.libraries.load(str(FILES["old_layout"]), link=False) as (_src, dst):
        dst.objects = ["Goo"]
    goo = dst.objects[0]
    bpy.context.scene.collection.objects.link(goo)
    assert migrate.pending(goo.sph.material)
    goo.sph.material.viscoelastic.density_error = 0.02
    assert export_values.material_item(goo) == {"name": "Goo", "model": "viscoelastic", "preset": "honey",
                                     "params": {"density_error": 0.02, "springs": "dynamic"}}
    assert not migrate.pending(goo.sph.material)


def test_linked_old_object_is_refused_not_exported_with_defaults(ext, tmp_path, saved_file):
    migrate, export_values = ext.sub("migrate"), ext.sub("export.values")
    with bpy.data.libraries.load(str(FILES["old_layout"]), link=True) as (_src, dst):
        dst.objects = ["Goo"]
    goo = dst.objects[0]
    bpy.context.scene.collection.objects.link(goo)
    assert not migrate.upgrade(goo.sph.material) and migrate.pending(goo.sph.material)
    with pytest.raises(export_values.ExportError, match="Goo: is linked from a file saved by an older version"):
        export_values.material_item(goo)


# ---------------------------------------------------------------------------- removed parameters

def _drop_notes(caplog) -> dict[str, str]:
    """The migration's notes about dropped settings: object name -> message (one each, checked)."""
    notes = {}
    for record in caplog.records:
        text = record.getMessage()
        if record.name.endswith(".migrate") and "were dropped" in text:
            name = text.split(":", 1)[0]
            assert name not in notes, f"two notes for {name}: {notes[name]!r} and {text!r}"
            notes[name] = text
    return notes


def test_removed_parameters_in_old_files_are_dropped_with_one_note_per_object(ext, tmp_path, empty_file, caplog):
    """old_layout.blend stored stiffness=500 on the Spout (and the presets' stiffness and repulsion_factor on
    every emitter): the file opens, they are dropped with one note per object naming them and their
    replacement, and the export holds only current parameters."""
    migrate = ext.sub("migrate")
    caplog.set_level("WARNING")
    _open_copy("old_layout", tmp_path)
    notes = _drop_notes(caplog)
    assert set(notes) == {ob.name for ob in _emitters()} == {"Goo", "Plain", "Spout"}
    spout = notes["Spout"]
    assert "stiffness=500:" in spout and "derived from Density Error" in spout, spout
    assert "repulsion_factor=2:" in spout and "Interaction Radius" in spout, spout
    for ob in _emitters():
        group = ob.sph.material.viscoelastic
        assert not set(REMOVED["viscoelastic"]) & set(group.keys()), f"{ob.name}: removed values kept"
    caplog.clear()
    data = _exported(ext, tmp_path)
    assert not _drop_notes(caplog), "noted once: the values are gone after the first upgrade"
    assert data == {k: v for k, v in _fixture("old_layout", ext).items() if k != "recorded_with"}
    assert not any(migrate.upgrade(ob.sph.material) for ob in _emitters())


def test_removed_values_in_a_model_group_are_dropped_at_export(ext, saved_file, caplog):
    """A file saved with per-model groups before format 2 holds the removed values in the group itself."""
    migrate, export_values = ext.sub("migrate"), ext.sub("export.values")
    ob = bpy.data.objects.new("Slime", bpy.data.meshes.new("Slime"))
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = 'FLUID'
    group = ob.sph.material.viscoelastic
    group.preset, group.kinematic_viscosity = "slime", 0.5
    group["stiffness"], group["repulsion_factor"], group["rest_density"] = 300.0, 2.0, 1.1
    caplog.set_level("WARNING")
    assert migrate.upgrade(ob.sph.material)
    note = _drop_notes(caplog)["Slime"]
    assert "rest_density=1.1: cohesion is now Surface Tension in N/m" in note
    assert "stiffness=300:" in note and "repulsion_factor=2:" in note
    assert not set(REMOVED["viscoelastic"]) & set(group.keys())
    assert group.kinematic_viscosity == pytest.approx(0.5) and group.preset == "slime", "current values are kept"
    caplog.clear()
    group["stiffness"] = 450.0  # e.g. appended after the load handler ran: the export drops it itself
    assert export_values.material_item(ob) == {"name": "Slime", "model": "viscoelastic", "preset": "slime",
                                    "params": {"kinematic_viscosity": 0.5}}
    assert "stiffness=450:" in _drop_notes(caplog)["Slime"]
    assert not migrate.upgrade(ob.sph.material)


def test_linked_object_with_removed_values_still_exports(ext, tmp_path, saved_file):
    """Removed values cannot be deleted from a linked object, and need not be: nothing reads them."""
    export_values = ext.sub("export.values")
    ob = bpy.data.objects.new("Water", bpy.data.meshes.new("Water"))
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = 'FLUID'
    ob.sph.material.viscoelastic["stiffness"] = 300.0
    library = tmp_path / "library.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_src, dst):
        dst.objects = ["Water"]
    water = dst.objects[0]
    bpy.context.scene.collection.objects.link(water)
    assert water.library is not None and "stiffness" in water.sph.material.viscoelastic
    assert export_values.material_item(water) == {"name": "Water", "model": "viscoelastic", "preset": "water",
                                                  "params": {}}


# ---------------------------------------------------------------------------- one group per model

_BLENDER_UNITS = {"m": 'LENGTH', "rad": 'ROTATION', "s": 'TIME'}  # shown by Blender, not in the tooltip


def _check_group_matches_declarations(rna, spec):
    """Every declared parameter is a property with the declaration's label, tooltip, unit, default, limits."""
    for p in spec.parameters:
        prop = rna[p.name]
        assert prop.name == p.ui_label, p.name
        assert prop.description.startswith(p.description), p.name
        if p.unit in _BLENDER_UNITS and p.kind == "float":
            assert prop.unit == _BLENDER_UNITS[p.unit], p.name
        elif p.unit:
            assert prop.description.endswith(f"[{p.unit}]"), p.name
        if p.kind in {"float", "int"}:
            assert prop.default == pytest.approx(p.default), p.name
            if p.minimum is not None:
                assert prop.hard_min == pytest.approx(p.minimum), p.name
            if p.maximum is not None:
                assert prop.hard_max == pytest.approx(min(p.maximum, 2**31 - 1)), p.name
        if p.kind == "choice":
            assert [item.identifier for item in prop.enum_items] == list(p.choices), p.name
            assert prop.default == p.default, p.name
    presets = [item.identifier for item in rna["preset"].enum_items] if spec.presets else []
    assert presets == sorted(spec.presets), "the preset menu lists exactly the model's presets, by name"


def test_each_model_has_its_own_group_from_its_declarations(ext, empty_file):
    props = ext.sub("properties")
    material_rna = bpy.types.Object.bl_rna.properties["sph"].fixed_type.properties["material"].fixed_type
    models = [item.identifier for item in material_rna.properties["model"].enum_items]
    assert models == list(props.SOLVERS)
    for name, spec in props.SOLVERS.items():
        group_rna = material_rna.properties[name].fixed_type
        assert group_rna.identifier == f"SPH_PG_material_{name}"
        _check_group_matches_declarations(group_rna.properties, spec)
        own = {p.name for p in spec.parameters} | {"preset", "rna_type", "name"}
        assert set(group_rna.properties.keys()) <= own, "no other model's parameters"
    assert not {p.name for spec in props.SOLVERS.values() for p in spec.parameters} & set(
        material_rna.properties.keys()), "no parameter is merged onto ob.sph.material"


def test_a_preset_writes_its_model_group_only(ext, empty_file):
    presets = ext.core("models").SOLVERS["viscoelastic"].presets
    ob = bpy.data.objects.new("probe", bpy.data.meshes.new("probe"))
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = 'FLUID'
    group = ob.sph.material.viscoelastic
    assert group.preset == "water"
    assert group.kinematic_viscosity == pytest.approx(presets["water"]["kinematic_viscosity"])
    group.preset = "honey"
    assert group.kinematic_viscosity == pytest.approx(presets["honey"]["kinematic_viscosity"])
    assert group.density == pytest.approx(presets["honey"]["density"])
    assert not {"kinematic_viscosity", "preset"} & set(ob.sph.material.keys())


def test_an_sph_material_is_saved_by_stable_numbers_and_exports_its_preset_and_overrides(ext, saved_file):
    """The sph model and its presets are stored by the stable numbers of their names: a Fluid of putty with
    one override reopens as it was saved and exports the model, the preset and the override."""
    props, export_values = ext.sub("properties"), ext.sub("export.values")
    ob = bpy.data.objects.new("Putty", bpy.data.meshes.new("Putty"))
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = 'FLUID'
    m = ob.sph.material
    m.model = "sph"
    m.sph.preset = "putty"
    assert m.sph.tensile_strength == pytest.approx(props.SOLVERS["sph"].presets["putty"]["tensile_strength"])
    m.sph.tensile_strength = 5000.0
    assert (m["model"], m.sph["preset"]) == (props.stable_number("sph"), props.stable_number("putty"))
    want = {"name": "Putty", "model": "sph", "preset": "putty", "params": {"tensile_strength": 5000.0}}
    assert export_values.material_item(ob) == want
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.open_mainfile(filepath=bpy.data.filepath)
    ob = bpy.data.objects["Putty"]
    assert (ob.sph.material.model, ob.sph.material.sph.preset) == ("sph", "putty")
    assert export_values.material_item(ob) == want


def _second_model(ext):
    """A stand-in second model declaring ``viscosity`` with its own unit, limits, label and presets."""
    Parameter = ext.core("scene.params").Parameter
    viscosity = Parameter("viscosity", 1.5, "Pa s", 0.001, 50.0, label="Dynamic Viscosity",
                          description="Dynamic viscosity mu of a Newtonian liquid")
    density = Parameter("density", 1000.0, "kg/m^3", 1.0, 20000.0, label="Mass Density",
                        description="Rest density rho0")
    return types.SimpleNamespace(name="newtonian_test", parameters=(viscosity, density),
                                 presets={"oil": {"viscosity": 0.1}, "glycerol": {"viscosity": 1.4}},
                                 description="A test model")


def test_a_second_model_gets_its_own_group_units_limits_and_presets(ext, empty_file):
    """Registering a model needs no change in the Blender layer, and a shared parameter name keeps
    each model's own declaration (the models' parameter contract)."""
    props, solvers = ext.sub("properties"), ext.core("models")
    saved = dict(solvers.SOLVERS)
    second = _second_model(ext)
    solvers.SOLVERS.clear()
    solvers.SOLVERS.update({**saved, second.name: second})
    try:
        classes = props._make_groups()
    finally:
        solvers.SOLVERS.clear()
        solvers.SOLVERS.update(saved)
    by_name = {cls.__name__: cls for cls in classes}
    group_cls = by_name["SPH_PG_material_newtonian_test"]
    material_ann = by_name["SPHMaterialSettings"].__annotations__
    assert {"viscoelastic", "newtonian_test"} <= set(material_ann)
    model_items = material_ann["model"].keywords["items"]
    assert [i[0] for i in model_items] == [*saved, "newtonian_test"]
    assert model_items[-1][1] == "Newtonian_Test", "no label attribute: the name in title case"
    bpy.utils.register_class(group_cls)  # alone: enough to read its properties as Blender sees them
    try:
        rna = group_cls.bl_rna.properties
        _check_group_matches_declarations(rna, second)
        assert rna["viscosity"].hard_max == pytest.approx(50.0) and "[Pa s]" in rna["viscosity"].description
        assert rna["viscosity"].name == "Dynamic Viscosity"
        assert [i.identifier for i in rna["preset"].enum_items] == ["glycerol", "oil"]
    finally:
        bpy.utils.unregister_class(group_cls)
    visco = bpy.types.Object.bl_rna.properties["sph"].fixed_type.properties["material"].fixed_type.properties
    clavet = visco["viscoelastic"].fixed_type.properties["kinematic_viscosity"]
    assert clavet.name == "Viscosity" and clavet.hard_max == pytest.approx(1e3) and "[m^2/s]" in clavet.description


# ---------------------------------------------------------------------------- enums stored by stable numbers

def _is_id(rna_struct) -> bool:
    cls = getattr(bpy.types, rna_struct.identifier, None)
    return cls is not None and issubclass(cls, bpy.types.ID)


def _enums(rna_struct, path=""):
    """Every enum property under ``rna_struct`` (following pointers to settings, not to data-blocks such
    as the Action a Dynamic collider keeps for Free Bake): dotted path -> property."""
    out = {}
    for prop in rna_struct.properties:
        if prop.type == 'ENUM':
            out[path + prop.identifier] = prop
        elif prop.type == 'POINTER' and prop.identifier != "rna_type" and not _is_id(prop.fixed_type):
            out.update(_enums(prop.fixed_type, f"{path}{prop.identifier}."))
    return out


def test_enums_from_declarations_store_the_stable_number_of_their_identifier(ext, empty_file, monkeypatch):
    """Blender saves an enum as its item's number: each item's is derived from its identifier,
    never from its position, so a new item cannot change what a saved number means."""
    props = ext.sub("properties")
    enums = _enums(bpy.types.Object.bl_rna.properties["sph"].fixed_type)
    fixed = {"role", "collider.motion"}  # lists of the Blender layer itself, stored by position
    declared = {"material.model", "material.viscoelastic.preset", "material.viscoelastic.springs",
                "material.viscoelastic.pressure_projection", "collider.mode", "inflow.shape", "domain.surface.field",
                "domain.time_steps"}
    per_model = {f"material.{name}.{k}" for name, spec in props.SOLVERS.items()
                 for k in ["preset"] * bool(spec.presets) + [p.name for p in spec.parameters if p.kind == "choice"]}
    assert declared <= set(enums) - fixed and set(enums) - fixed - declared == per_model - declared, \
        "every model's presets and choice parameters, nothing else"
    for path in set(enums) - fixed:
        items = enums[path].enum_items
        assert [i.value for i in items] == [props.stable_number(i.identifier) for i in items], path
        assert all(2**30 <= i.value < 2**31 for i in items), f"{path}: never a position, fits an int"
    ob = bpy.data.objects.new("probe", bpy.data.meshes.new("probe"))
    ob.sph.material.viscoelastic.preset = "honey"
    assert ob.sph.material.viscoelastic["preset"] == props.stable_number("honey")
    monkeypatch.setattr(props, "stable_number", lambda identifier: 2**30)
    with pytest.raises(ValueError, match="'a' and 'b' get the same stored number"):
        props.numbered([("a", "A", ""), ("b", "B", "")], "test enum")


def test_enums_stored_by_position_are_translated_once(ext, empty_file):
    """Files saved with per-model groups before stable numbers (layout 2, never released) hold
    positions there too: translated through the same frozen tables, idempotently."""
    migrate = ext.sub("migrate")
    ob = bpy.data.objects.new("probe", bpy.data.meshes.new("probe"))
    m = ob.sph.material
    m["model"], m["_layout"], m.viscoelastic["preset"], m.viscoelastic["springs"] = 0, 2, 0, 1
    ob.sph.collider["mode"], ob.sph.inflow["shape"], ob.sph.domain.surface["field"] = 1, 1, 1
    assert migrate.pending(m) and migrate.upgrade(m)
    assert (m.model, m.viscoelastic.preset, m.viscoelastic.springs) == ("viscoelastic", "honey", "dynamic")
    assert (ob.sph.collider.mode, ob.sph.inflow.shape, ob.sph.domain.surface.field) == ("shell", "rectangle",
                                                                                         "density")
    assert not migrate.pending(m) and not migrate.upgrade(m)


def _moved_notes(caplog, name: str) -> list[str]:
    texts = [r.getMessage() for r in caplog.records if r.name.endswith(".migrate")]
    return [text for text in texts if text.startswith(f"{name}:") and "model is now" in text]


def _probe(role: str, name: str = "probe"):
    ob = bpy.data.objects.new(name, bpy.data.meshes.new(name))
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = role
    return ob


@pytest.mark.parametrize("stored", ["position", "layout 1"])
def test_a_moved_preset_stored_by_position_takes_the_model_that_has_it(ext, empty_file, caplog, stored):
    """jelly was position 1 of the viscoelastic presets (in the group, or on the material in layout 1): it
    is translated to the elastic model's jelly, not dropped."""
    migrate, props = ext.sub("migrate"), ext.sub("properties")
    ob = bpy.data.objects.new("Blob", bpy.data.meshes.new("Blob"))
    bpy.context.scene.collection.objects.link(ob)
    m = ob.sph.material
    ob.sph["role"] = 2  # FLUID, raw: its update would stamp the material current
    if stored == "position":
        m["model"], m["_layout"], m.viscoelastic["preset"] = 0, 2, migrate._OLD_PRESETS.index("jelly")
        m.viscoelastic["springs"], m.viscoelastic["_initialised"] = 2, True
    else:
        m["preset"], m["springs"], m["_initialised"] = migrate._OLD_PRESETS.index("jelly"), 2, True
    caplog.set_level("WARNING")
    assert migrate.pending(m) and migrate.upgrade(m)
    assert (ob.sph.role, m.model, m.elastic.preset) == ('FLUID', "elastic", "jelly")
    want = props.preset_values("elastic", "jelly")
    assert {k: getattr(m.elastic, k) for k in want} == pytest.approx(want)
    assert m.viscoelastic.springs == "mould" and m.viscoelastic.preset == "water", "the old group keeps its values"
    assert len(_moved_notes(caplog, "Blob")) == 1
    assert not migrate.pending(m) and not migrate.upgrade(m)
    assert ext.sub("export.values").material_item(ob) == {"name": "Blob", "model": "elastic", "preset": "jelly",
                                                          "params": {}}


def test_a_moved_preset_in_a_group_not_in_use_only_leaves_its_menu(ext, empty_file, caplog):
    """The artist had chosen another model: it stays; the unused group's menu reads its default."""
    migrate, props = ext.sub("migrate"), ext.sub("properties")
    ob = _probe('FLUID', "Slab")
    m = ob.sph.material
    m.model, m.elastic.preset, m.elastic.youngs_modulus = "elastic", "gummy", 3e5
    m.viscoelastic["preset"] = props.stable_number("rubber")
    caplog.set_level("WARNING")
    assert migrate.pending(m) and migrate.upgrade(m)
    assert (m.model, m.elastic.preset, m.elastic.youngs_modulus) == ("elastic", "gummy", pytest.approx(3e5))
    assert "preset" not in m.viscoelastic and m.viscoelastic.preset == "water"
    assert len(_moved_notes(caplog, "Slab")) == 1
    assert not migrate.pending(m) and not migrate.upgrade(m)


def test_an_inflow_with_a_moved_preset_keeps_its_model_when_it_cannot_emit_the_new_one(ext, empty_file, caplog):
    """An Inflow cannot emit the elastic model (its particles keep their shape): it stays viscoelastic with
    the values the old preset had written, now overrides of the default preset."""
    migrate, props, solvers = ext.sub("migrate"), ext.sub("properties"), ext.core("models").SOLVERS
    assert solvers["elastic"].keeps_shape
    ob = _probe('INFLOW', "Spout")
    m = ob.sph.material
    m.viscoelastic.preset, m.viscoelastic.springs = "honey", "mould"
    m.viscoelastic["preset"] = props.stable_number("jelly")
    caplog.set_level("WARNING")
    assert migrate.upgrade(m)
    assert (ob.sph.role, m.model, m.viscoelastic.preset, m.viscoelastic.springs) == ('INFLOW', "viscoelastic",
                                                                                     "water", "mould")
    notes = _moved_notes(caplog, "Spout")
    assert len(notes) == 1 and "Inflow cannot emit" in notes[0], notes
    item = ext.sub("export.values").material_item(ob)
    assert (item["model"], item["preset"], item["params"]["springs"]) == ("viscoelastic", "water", "mould")
    assert not migrate.pending(m) and not migrate.upgrade(m)


def test_a_linked_object_with_a_moved_preset_is_refused(ext, tmp_path, saved_file):
    """It cannot be upgraded here: exporting it would bake the old model's default preset."""
    props, export_values = ext.sub("properties"), ext.sub("export.values")
    _probe('FLUID', "Jelly").sph.material.viscoelastic["preset"] = props.stable_number("jelly")
    library = tmp_path / "library.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_src, dst):
        dst.objects = ["Jelly"]
    jelly = dst.objects[0]
    bpy.context.scene.collection.objects.link(jelly)
    assert jelly.library is not None and ext.sub("migrate").pending(jelly.sph.material)
    with pytest.raises(export_values.ExportError, match="Jelly: is linked from a file saved by an older version"):
        export_values.material_item(jelly)


def _register_properties(props, solvers, models: dict) -> None:
    props.unregister()
    solvers.SOLVERS.clear()
    solvers.SOLVERS.update(models)
    props.register()


def test_new_models_presets_and_choices_leave_saved_files_unchanged(ext, saved_file):
    """A version adding a model before viscoelastic, a preset sorting before honey and a springs
    choice before dynamic still reads a saved object as the same model, preset and choice."""
    props, solvers, export_values = ext.sub("properties"), ext.core("models"), ext.sub("export.values")
    ob = bpy.data.objects.new("Goo", bpy.data.meshes.new("Goo"))
    bpy.context.scene.collection.objects.link(ob)
    ob.sph.role = 'FLUID'  # the model left at its default: not stored
    group = ob.sph.material.viscoelastic
    group.preset, group.springs, group.kinematic_viscosity = "honey", "dynamic", 0.25
    want = {"name": "Goo", "model": "viscoelastic", "preset": "honey",
            "params": {"springs": "dynamic", "kinematic_viscosity": 0.25}}
    assert export_values.material_item(ob) == want
    bpy.ops.wm.save_mainfile()

    saved = dict(solvers.SOLVERS)
    visco = saved["viscoelastic"]
    grown = type(visco.__name__, (visco,), {
        "presets": {"caramel": visco.presets["honey"], **visco.presets},
        "parameters": tuple(dataclasses.replace(p, choices=("bouncy", *p.choices)) if p.name == "springs" else p
                            for p in visco.parameters)})
    first = _second_model(ext)
    try:
        _register_properties(props, solvers, {first.name: first, "viscoelastic": grown})
        bpy.ops.wm.open_mainfile(filepath=str(saved_file))
        material_rna = bpy.types.Object.bl_rna.properties["sph"].fixed_type.properties["material"].fixed_type
        group_rna = material_rna.properties["viscoelastic"].fixed_type.properties
        positions = {name: [i.identifier for i in rna.enum_items].index(value) for rna, name, value in (
            (material_rna.properties["model"], "model", "viscoelastic"), (group_rna["preset"], "preset", "honey"),
            (group_rna["springs"], "springs", "dynamic"))}
        # Presets are listed in their declared order (water, oil, honey, ...): caramel goes first.
        assert positions == {"model": 1, "preset": 1 + list(visco.presets).index("honey"), "springs": 2}, \
            "every item moved down one place"
        goo = bpy.data.objects["Goo"]
        assert (goo.sph.material.model, goo.sph.material.viscoelastic.preset) == ("viscoelastic", "honey")
        assert export_values.material_item(goo) == want
    finally:
        _register_properties(props, solvers, saved)


def test_error_labels_come_from_the_material_model_of_the_object(ext, tmp_path, empty_file):
    export, solvers = ext.sub("export.snapshot"), ext.core("models")
    errors = ext.core("errors")
    bpy.ops.mesh.primitive_cube_add()
    bpy.context.object.name = "Water"
    bpy.context.object.sph.role = 'FLUID'
    exc = errors.InputError("materials[0].params.density", "must be at least 1")
    saved = dict(solvers.SOLVERS)
    second = _second_model(ext)
    solvers.SOLVERS.clear()
    solvers.SOLVERS.update({second.name: second, **saved})  # first, so "any model" would pick it
    try:
        assert str(export.explain(exc, {"materials[0]": "Water"})).startswith("Water: Density:")
        # The object is gone: the first model that declares the name.
        assert str(export.explain(errors.InputError("materials[0].params.density", "x"),
                                  {"materials[0]": "Gone"})).startswith("Gone: Mass Density:")
    finally:
        solvers.SOLVERS.clear()
        solvers.SOLVERS.update(saved)
