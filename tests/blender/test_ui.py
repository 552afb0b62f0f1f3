"""The Physics-tab panels draw every role without errors and show every declared parameter.

Headless Blender draws no interface, so each panel's ``draw`` runs against a recording layout:
every ``prop(group, name)`` must name an existing property, and the lists of declared parameters
must all be shown.
"""

import types

import bpy
import pytest
from conftest import ROOT


class RecordingLayout:
    """Stands in for ``UILayout``: records ``prop``/``operator`` calls, accepts everything else."""

    def __init__(self, log):
        self._log = log
        self.use_property_split = self.use_property_decorate = self.active = False

    def prop(self, group, name, **kw):
        assert name in group.bl_rna.properties, f"{group.bl_rna.identifier} has no property {name!r}"
        self._log.append(("prop", name))
        self._log.append(("prop_of", f"{group.bl_rna.identifier}.{name}"))
        if "text" in kw:
            self._log.append(("prop_text", f"{name}: {kw['text']}"))

    def operator(self, idname, **kw):
        module, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, module), name), idname
        self._log.append(("operator", idname))
        return types.SimpleNamespace()

    def label(self, **kw):
        self._log.append(("label", kw.get("text", "")))

    def progress(self, **kw):
        self._log.append(("progress", kw.get("text", "")))

    def __getattr__(self, name):  # row(), column(), box(), ... return a nested layout
        return lambda *a, **kw: RecordingLayout(self._log)


def _draw_all(ext, ob):
    ui = ext.sub("ui")
    log = []
    context = types.SimpleNamespace(object=ob, scene=bpy.context.scene)
    for cls in ui._classes:
        if cls.poll(context):
            panel = types.SimpleNamespace(layout=RecordingLayout(log))
            if hasattr(cls, "draw_header"):
                cls.draw_header(panel, context)
            cls.draw(panel, context)
    return log


@pytest.mark.parametrize("role", ["NONE", "DOMAIN", "FLUID", "INFLOW", "COLLIDER", "OUTFLOW", "SOLID"])
def test_panels_draw_every_role(ext, saved_file, role):
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.object
    ob.sph.role = role
    log = _draw_all(ext, ob)
    shown = {name for kind, name in log if kind == "prop"}
    props = ext.sub("properties")
    expected = {
        "NONE": set(),
        "DOMAIN": {p.name for p in props.DOMAIN_TOP + props.DOMAIN_SIMULATION + props.SURFACE_PARAMETERS
                   + props.DOMAIN_BORDERS} | {"render_particles", "cache_directory", "surface_enabled",
                                              "closed_borders"},
        "FLUID": {p.name for p in props.SOLVERS["viscoelastic"].parameters + props.FLUID_SOURCE},
        "INFLOW": {p.name for p in props.SOLVERS["viscoelastic"].parameters + props.INFLOW},
        "COLLIDER": {p.name for p in props.COLLIDER_COMMON + props.COLLIDER_MESH},
        "OUTFLOW": set(),
        "SOLID": {p.name for p in props.SOLVERS["elastic"].parameters + props.FLUID_SOURCE} | {"initial_velocity"},
    }[role]
    assert expected <= shown, expected - shown
    if role == "SOLID":
        # An elastic material from the start, its moduli shown with their units.
        assert ob.sph.material.model == "elastic"
        texts = {text for kind, text in log if kind == "prop_text"}
        assert {"youngs_modulus: Young's Modulus (Pa)", "density: Density (kg/m³)"} <= texts, texts
    if role in {"FLUID", "INFLOW", "SOLID"}:
        # The model selector, then the selected model's own preset menu and parameters.
        owners = {name for kind, name in log if kind == "prop_of"}
        group = f"SPH_PG_material_{ob.sph.material.model}"
        assert "SPHMaterialSettings.model" in owners
        model_params = props.SOLVERS[ob.sph.material.model].parameters
        assert {f"{group}.{p.name}" for p in model_params} | {f"{group}.preset"} <= owners
    if role == "DOMAIN":
        assert any(kind == "label" and "particles" in text for kind, text in log), "the particle estimate"
        assert {("operator", f"sph.{op}") for op in ("bake", "bake_data", "bake_mesh", "free_bake")} <= set(log)
    if role == "NONE":
        assert ("operator", "sph.quick_fluid") in log


@pytest.mark.parametrize("role", ["FLUID", "INFLOW", "SOLID"])
def test_every_material_role_offers_the_sph_model_and_draws_its_settings(ext, saved_file, role):
    """The one model selector lists every registered model on every material role; the sph model's presets
    (shown without underscores), parameters and units are drawn from its declarations. A Solid, whose mesh
    only the elastic model's particles carry, says so and points lumps that split and merge to the Fluid."""
    props = ext.sub("properties")
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.object
    ob.sph.role = role
    m = ob.sph.material
    assert [i.identifier for i in m.bl_rna.properties["model"].enum_items] == list(props.SOLVERS)
    m.model = "sph"
    presets = m.sph.bl_rna.properties["preset"].enum_items
    assert {i.identifier: i.name for i in presets}["mashed_potato"] == "Mashed Potato"
    assert m.sph.preset == "classic_water", "a model used for the first time starts from its default preset"
    assert m.sph.speed_of_sound == pytest.approx(props.SOLVERS["sph"].presets["classic_water"]["speed_of_sound"])
    log = _draw_all(ext, ob)
    owners = {name for kind, name in log if kind == "prop_of"}
    assert {f"SPH_PG_material_sph.{p.name}" for p in props.SOLVERS["sph"].parameters} | {
        "SPH_PG_material_sph.preset"} <= owners
    texts = {text for kind, text in log if kind == "prop_text"}
    assert {"speed_of_sound: Speed of Sound (m/s)", "tensile_strength: Cohesion (Pa)",
            "kinematic_viscosity: Viscosity (m²/s)"} <= texts, texts
    labels = [text for kind, text in log if kind == "label"]
    assert any("needs the Elastic model" in text for text in labels) == (role == "SOLID"), labels
    assert any("is a Fluid" in text for text in labels) == (role == "SOLID"), labels


def test_domain_offers_the_time_steps_of_the_leapfrog(ext, saved_file):
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.object
    ob.sph.role = 'DOMAIN'
    assert ob.sph.domain.time_steps == "individual"
    assert [i.identifier for i in ob.sph.domain.bl_rna.properties["time_steps"].enum_items] == ["individual", "global"]
    assert ("prop_of", "SPHDomainSettings.time_steps") in _draw_all(ext, ob)


def test_a_dynamic_collider_shows_its_rigid_body_and_a_rigid_body_offers_conversion(ext, saved_file):
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.object
    bpy.ops.rigidbody.object_add(type='ACTIVE')
    assert ("operator", "sph.convert_rigid_body") in _draw_all(ext, ob)
    bpy.ops.rigidbody.object_remove()
    ob.sph.role, ob.sph.collider.motion = 'COLLIDER', 'DYNAMIC'
    log = _draw_all(ext, ob)
    shown = {name for kind, name in log if kind == "prop"}
    assert {p.name for p in ext.sub("properties").COLLIDER_DYNAMIC} <= shown
    assert ("prop_text", "density: Density (kg/m³)") in log
    assert ("operator", "sph.convert_rigid_body") not in log


def test_material_panel_says_when_an_appended_object_has_old_settings(ext, saved_file):
    with bpy.data.libraries.load(str(ROOT / "tests" / "data" / "exported" / "old_layout.blend")) as (_src, dst):
        dst.objects = ["Spout"]
    bpy.context.scene.collection.objects.link(dst.objects[0])
    labels = [text for kind, text in _draw_all(ext, dst.objects[0]) if kind == "label"]
    assert any("older version" in text for text in labels), labels


def test_domain_panel_shows_the_cache_state(ext, saved_file):
    """The bake box reads the cache through the core's summary: frames done, or the damaged file by name."""
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.object
    ob.sph.role = 'DOMAIN'
    cache = ext.core("cache.cache_dir").CacheDir(ext.sub("export.snapshot").cache_dir(ob))
    cache.root.mkdir(parents=True)
    manifest = cache.new_manifest("test", 1, 5)
    manifest.update(frames_done=[1, 2, 3], checkpoint=3)
    cache.write_manifest(manifest)
    labels = [text for kind, text in _draw_all(ext, ob) if kind == "label"]
    assert "Baked frames 1-3 (resumable)" in labels, labels
    cache.manifest_path.write_text("{damaged")
    labels = [text for kind, text in _draw_all(ext, ob) if kind == "label"]
    assert any(str(cache.manifest_path) in text and "unreadable manifest" in text for text in labels), labels


def test_derived_constants_are_shown_read_only(ext, saved_file):
    """The collapsed "Derived" sub-panel lists what the material's model derives (its ``derived``,
    through the registry) at the Domain's spacing, radius and substep."""
    ui, solvers = ext.sub("ui"), ext.core("models")
    assert ui.SPH_PT_material_derived.bl_options == {'DEFAULT_CLOSED'}
    assert ui.SPH_PT_material_derived.bl_parent_id == "SPH_PT_material"
    bpy.ops.mesh.primitive_cube_add(size=4.0)
    domain = bpy.context.object
    domain.name, domain.sph.role = "Tank", 'DOMAIN'
    d = domain.sph.domain
    d.particle_spacing, d.support_factor, d.substeps = 0.04, 2.5, 8
    bpy.ops.mesh.primitive_cube_add(size=0.5)
    ob = bpy.context.object
    ob.sph.role = 'FLUID'
    ob.sph.material.viscoelastic.surface_tension = 0.05
    log = _draw_all(ext, ob)
    assert ("prop", "rest_density") not in log and ("prop", "stiffness") not in log, "nothing editable"
    labels = [text for kind, text in log if kind == "label"]
    c = ui.derived_constants(bpy.context.scene, ob)
    s, h = 0.04, 0.1
    dt = 1.0 / (bpy.context.scene.render.fps * 8)
    assert (c["domain"], c["substeps"], c["automatic"], c["model"]) == ("Tank", 8, False, "viscoelastic")
    assert c["spacing"] == pytest.approx(s) and c["h"] == pytest.approx(h) and c["dt"] == pytest.approx(dt)
    # The model's own constants for the material's parameters (the water preset, one override).
    spec = solvers.SOLVERS["viscoelastic"]
    values = {p.name: p.default for p in spec.parameters} | dict(spec.presets["water"]) | {"surface_tension": 0.05}
    params = spec.Params(**values)
    expected = spec.derived(params, s, h, dt)
    assert [k.name for k in c["constants"]] == [k.name for k in expected]
    assert {"stiffness_near", "tension_dt"} <= {k.name for k in expected}, "with a substep, with surface tension"
    for shown, wanted in zip(c["constants"], expected):
        assert (shown.label, shown.unit) == (wanted.label, wanted.unit)
        assert shown.value == pytest.approx(wanted.value, rel=1e-6), shown.name
        assert ui.constant_text(shown) in labels, labels
    # The same numbers the bake's model reports.
    base = ext.core("models.base")
    reported = spec(base.ModelSetup(s, h, 1, {0: params})).derived_constants(dt)
    for k in c["constants"]:
        assert k.value == pytest.approx(reported[k.name], rel=1e-5), k.name
    stiffness = next(k for k in c["constants"] if k.name == "stiffness_near")
    assert f"Stiffness k_near: {stiffness.value:.4g} m/s²" in labels, labels
    assert any(text.startswith("8 substeps per frame (fixed)") for text in labels), labels
    # Automatic substeps: liquid at rest needs Min Substeps.
    d.substeps, d.min_substeps = 0, 3
    c = ui.derived_constants(bpy.context.scene, ob)
    assert (c["substeps"], c["automatic"]) == (3, True)
    # k_near = (k_near Δt²) / Δt²: three substeps instead of eight make it (3/8)² as stiff.
    assert next(k for k in c["constants"] if k.name == "stiffness_near").value == pytest.approx(
        stiffness.value * (3 / 8) ** 2, rel=1e-6)
    # A model this version does not have: no sub-panel.
    ob.sph.material["model"] = 12345  # (reads as "")
    context = types.SimpleNamespace(object=ob, scene=bpy.context.scene)
    assert not ui.SPH_PT_material_derived.poll(context)
