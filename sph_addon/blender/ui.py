"""Physics-tab panels. What each role shows is the list of declared parameters
``properties`` picked for it, so a parameter added in the core appears here.
"""

from __future__ import annotations

import functools
import math

import bpy

from ..core.models.base import MaterialModel
from . import baking, dynamic_colliders, jobs, migrate
from . import properties as props
from .export import snapshot as export
from .export import values as export_values


class _PhysicsPanel:
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "physics"

    @classmethod
    def role_is(cls, context, *roles):
        ob = context.object
        return ob is not None and ob.sph.role in roles


class _RolePanel(_PhysicsPanel):
    """A sub-panel of SPH Fluid shown for the objects whose role is in ``roles``."""

    bl_parent_id = "SPH_PT_main"
    roles: tuple[str, ...] = ()

    @classmethod
    def poll(cls, context):
        return cls.role_is(context, *cls.roles)


def _draw_params(layout, group, params, units: bool = False):
    """Declared parameters as properties; ``units``: the SI unit after the label where Blender shows none
    (Young's modulus in Pa, densities in kg/m³: Blender has units for lengths, angles and times only)."""
    col = layout.column()
    col.use_property_split = True
    col.use_property_decorate = False
    for p in params:
        # Blender shows velocity units only on vectors: a scalar speed (speed of sound, m/s) takes its unit here.
        native = p.unit in props.NATIVE_UNITS or (p.kind == "vector" and p.unit in props.NATIVE_VECTOR_UNITS)
        if units and p.unit and not native:
            col.prop(group, p.name, text=f"{p.ui_label} ({unit_text(p.unit)})")
        else:
            col.prop(group, p.name)


# Roles whose objects can be left out of a bake with the Enabled box in the panel's header.
_TOGGLED = ('FLUID', 'INFLOW', 'COLLIDER', 'SOLID')


class SPH_PT_main(_PhysicsPanel, bpy.types.Panel):
    bl_label = "SPH Fluid"

    @classmethod
    def poll(cls, context):
        return context.object is not None

    def draw_header(self, context):
        ob = context.object
        if ob.sph.role in _TOGGLED:
            self.layout.prop(ob.sph, "enabled", text="")

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(context.object.sph, "role")
        if context.object.sph.role == 'NONE':
            row = layout.row(align=True)
            for preset, text in (("water", "Quick Liquid"), ("honey", "Quick Goo"), ("jelly", "Quick Jelly")):
                row.operator("sph.quick_fluid", text=text).preset = preset
            layout.operator("sph.make_domain", icon='MESH_CUBE')
        if context.object.sph.role in ('NONE', 'COLLIDER') and dynamic_colliders.convertible(context.object):
            layout.operator("sph.convert_rigid_body", icon='PHYSICS')


class SPH_PT_domain(_RolePanel, bpy.types.Panel):
    bl_label = "Domain"
    roles = ('DOMAIN',)

    def draw(self, context):
        layout = self.layout
        ob = context.object
        d = ob.sph.domain
        _draw_params(layout, d, props.DOMAIN_TOP)
        try:
            n, mib = baking.particle_estimate(context.scene, ob)
            layout.label(text=f"About {n:,} particles (fills and inflows), {mib:,.0f} MiB", icon='INFO')
        except Exception as exc:  # a panel must draw whatever the scene holds
            layout.label(text=f"No estimate: {exc}", icon='ERROR')
        col = layout.column()
        col.use_property_split = True
        col.prop(d, "use_scene_gravity")
        sub = col.column()
        sub.active = not d.use_scene_gravity
        sub.prop(d, "gravity")
        col.prop(d, "use_unit_scale")
        _draw_bake(layout, context, ob)


def _draw_bake(layout, context, ob):
    from ..core.cache.cache_dir import CacheDir
    from ..core.errors import InputError

    box = layout.box()
    col = box.column()
    col.use_property_split = True
    col.prop(ob.sph.domain, "cache_directory")
    col.prop(ob.sph.domain, "render_particles")
    job = jobs.current
    if job is not None and job.task.domain_name == ob.name and job.outcome is None:
        status = job.status
        text = status.text() if status else f"Starting {job.task.kind}..."
        fraction = status.fraction if status else 0.0
        if hasattr(box, "progress"):
            box.progress(factor=fraction, type='BAR', text=text)
        else:
            box.label(text=text)
        box.operator("sph.cancel", icon='CANCEL', text="Cancelling..." if job.cancelling else "Cancel (Esc)")
        return
    row = box.row(align=True)
    row.scale_y = 1.4  # the one button a first bake needs
    row.operator("sph.bake", icon='PHYSICS').domain = ob.name
    row.operator("sph.resume", icon='PLAY', text="Resume").domain = ob.name
    row = box.row(align=True)
    row.operator("sph.bake_data", icon='PARTICLES').domain = ob.name
    row.operator("sph.bake_mesh", icon='MOD_FLUIDSIM').domain = ob.name
    row.operator("sph.free_bake", icon='TRASH').domain = ob.name
    box.operator("sph.export_alembic", icon='EXPORT').domain = ob.name
    try:
        root = export.cache_dir(ob)
    except export.ExportError:  # no folder set or the file is unsaved: the Bake button says why
        return
    try:
        state = CacheDir(root).summary()
    except InputError as exc:  # a damaged manifest: say which file, the panel still draws
        box.label(text=str(exc), icon='ERROR')
        return
    if not state.baked:
        return
    text = "Empty bake"
    if state.frames_done:
        text = f"Baked frames {state.first_frame}-{state.last_frame} ({'complete' if state.complete else 'resumable'})"
    if state.frames_meshed:
        text += f", {state.frames_meshed} meshed"
    box.label(text=text, icon='CHECKMARK' if state.complete else 'PAUSE')


def _domain_subpanel(idname: str, label: str, group, params, toggle: str = "") -> type:
    """A collapsed sub-panel of the Domain listing declared parameters of one settings group.

    ``toggle``: a Domain property drawn as the header's checkbox, greying the settings when off.
    """

    def draw(self, context):
        d = context.object.sph.domain
        self.layout.active = not toggle or getattr(d, toggle)
        _draw_params(self.layout, group(d), params)

    def draw_header(self, context):
        self.layout.prop(context.object.sph.domain, toggle, text="")

    return type(idname, (_PhysicsPanel, bpy.types.Panel), {
        "bl_label": label, "bl_parent_id": "SPH_PT_domain", "bl_options": {'DEFAULT_CLOSED'},
        "poll": classmethod(lambda cls, context: cls.role_is(context, 'DOMAIN')), "draw": draw,
        **({"draw_header": draw_header} if toggle else {})})


SPH_PT_domain_simulation = _domain_subpanel("SPH_PT_domain_simulation", "Simulation", lambda d: d,
                                            props.DOMAIN_SIMULATION)
SPH_PT_domain_borders = _domain_subpanel("SPH_PT_domain_borders", "Borders", lambda d: d, props.DOMAIN_BORDERS,
                                         toggle="closed_borders")
SPH_PT_domain_surface = _domain_subpanel("SPH_PT_domain_surface", "Surface", lambda d: d.surface,
                                         props.SURFACE_PARAMETERS, toggle="surface_enabled")


class SPH_PT_material(_RolePanel, bpy.types.Panel):
    bl_label = "Material"
    roles = props.MATERIAL_ROLES

    def draw(self, context):
        ob = context.object
        m = ob.sph.material
        self.layout.active = ob.sph.enabled
        col = self.layout.column()
        col.use_property_split = True
        col.prop(m, "model")
        try:
            group = props.model_group(m)
        except AttributeError:  # a model this version does not have (the enum reads as "")
            self.layout.label(text="Unknown material model: choose one", icon='ERROR')
            return
        if migrate.pending(m):
            # Appended from a file saved before per-model settings: nothing may be written while drawing.
            self.layout.label(text="Settings from an older version: reopen the file, or bake, to use them",
                              icon='INFO')
        if "preset" in group.bl_rna.properties:
            col.prop(group, "preset")
        if ob.sph.role == 'SOLID' and m.model != props.SOLID_MODEL:
            self.layout.label(text=f"A Solid needs the {props.model_label(props.SOLID_MODEL)} model to carry its mesh",
                              icon='ERROR')
            # The model's particles do not carry a mesh: lumps that split and merge are Fluids.
            self.layout.label(text="A material that splits and merges (putty, clay) is a Fluid")
        if ob.sph.role in {'FLUID', 'SOLID'}:
            col.prop(m, "initial_velocity")
            col.prop(m, "initial_angular_velocity")
            if ob.sph.role == 'FLUID':
                col.prop(ob.sph.fluid, "inherit_velocity")
            else:
                col.prop(ob.sph.fluid, "melt_amount")
            _draw_params(self.layout, ob.sph.fluid, props.FLUID_SOURCE)
        else:
            col.prop(ob.sph.inflow, "speed")
            _draw_params(self.layout, ob.sph.inflow, props.INFLOW)
        box = self.layout.box()
        box.label(text=f"{props.model_label(m.model)} parameters (the preset's values; edits override it)")
        _draw_params(box, group, props.SOLVERS[m.model].parameters, units=True)


@functools.lru_cache(maxsize=32)
def _derived(model: str, params, spacing: float, h: float, dt: float) -> tuple:
    """The model's ``derived`` constants, cached: panels redraw often, and a lattice sum is not free."""
    return tuple(props.SOLVERS[model].derived(params, spacing, h, dt))


def derived_constants(scene, ob) -> dict:
    """The method constants a bake derives for ``ob``'s material (its model's ``derived``), for display.

    From the scene's Domain (the active one if it is a Domain, else the first): its particle spacing,
    interaction radius (support factor) and substeps; the declared defaults without a Domain. The
    substep is an estimate: the fixed Substeps, or the automatic count for liquid at rest (gravity
    under the CFL rule, within Min/Max Substeps); a faster flow takes more substeps, and a constant
    that depends on the substep follows it (Clavet's equivalent stiffness k = (k Δt²) / Δt² grows
    with them: the gain k Δt² is what the bake keeps).
    """
    found = export.domains(scene)
    active = bpy.context.view_layer.objects.active if getattr(bpy.context, "view_layer", None) else None
    domain = active if active in found else (found[0] if found else None)
    top = props.by_name(props.TOP_PARAMETERS)
    sim = {p.name: p.default for p in props.SIMULATION_PARAMETERS}
    spacing = top["particle_spacing"].default
    gravity = sim["gravity"]
    if domain is not None:
        d = domain.sph.domain
        spacing = export_values.spacing(domain) * export_values.unit_scale(scene, domain)
        sim.update(export_values.values(d, props.DOMAIN_SIMULATION))
        if not d.use_scene_gravity:
            gravity = tuple(d.gravity)
        else:
            gravity = tuple(scene.gravity) if scene.use_gravity else (0.0, 0.0, 0.0)
    h = sim["support_factor"] * spacing
    frame_dt = sim["time_scale"] * scene.render.fps_base / scene.render.fps  # physical seconds per frame
    automatic = sim["substeps"] <= 0
    if automatic:
        at_rest = math.ceil(math.hypot(*gravity) * frame_dt**2 / (sim["cfl"] * spacing) - 1e-9)
        substeps = int(min(max(at_rest, sim["min_substeps"]), sim["max_substeps"]))
    else:
        substeps = int(sim["substeps"])
    dt = frame_dt / substeps
    model, params = export_values.material_params(ob)
    return {"domain": domain.name if domain is not None else "", "spacing": spacing, "h": h,
            "substeps": substeps, "automatic": automatic, "dt": dt, "model": model,
            "constants": _derived(model, params, float(spacing), float(h), float(dt))}


_UNIT_TEXT = (("^2", "²"), ("^3", "³"), ("^-1", "⁻¹"))


def unit_text(unit: str) -> str:
    """A unit as the panels show it: ``kg/m^3`` -> ``kg/m³``."""
    for plain, shown in _UNIT_TEXT:
        unit = unit.replace(plain, shown)
    return unit


def constant_text(constant) -> str:
    """One line of the Derived panel: the constant's label, value and unit."""
    unit = unit_text(constant.unit)
    return f"{constant.label}: {constant.value:.4g}{f' {unit}' if unit else ''}"


def _derives_constants(model: str) -> bool:
    """Whether a registered model declares derived constants (overrides the contract's empty default)."""
    spec = props.SOLVERS.get(model)
    return spec is not None and spec.derived.__func__ is not MaterialModel.derived.__func__


class SPH_PT_material_derived(_PhysicsPanel, bpy.types.Panel):
    """The method constants the bake derives from the material's physical parameters: read-only.

    Any registered model that declares ``derived`` gets the panel; its constants come from the
    model, the spacing, radius and substep from the Domain.
    """

    bl_label = "Derived"
    bl_parent_id = "SPH_PT_material"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        return cls.role_is(context, *props.MATERIAL_ROLES) and _derives_constants(context.object.sph.material.model)

    def draw(self, context):
        col = self.layout.column(align=True)
        try:
            c = derived_constants(context.scene, context.object)
        except Exception as exc:  # a panel must draw whatever the scene holds
            col.label(text=f"Not available: {exc}", icon='ERROR')
            return
        where = f"Domain {c['domain']}" if c["domain"] else "no Domain: default spacing"
        when = "estimate for liquid at rest" if c["automatic"] else "fixed"
        col.label(text=f"{props.model_label(c['model'])}, spacing {c['spacing']:.4g} m, radius h {c['h']:.4g} m "
                       f"({where})")
        col.label(text=f"{c['substeps']} substeps per frame ({when}): Δt {1000 * c['dt']:.3g} ms")
        for constant in c["constants"]:
            col.label(text=constant_text(constant))
        if not c["constants"]:
            col.label(text="None at these settings")


class SPH_PT_collider(_RolePanel, bpy.types.Panel):
    bl_label = "Collider"
    roles = ('COLLIDER',)

    def draw(self, context):
        c = context.object.sph.collider
        self.layout.active = context.object.sph.enabled
        col = self.layout.column()
        col.use_property_split = True
        col.prop(c, "motion")
        _draw_params(self.layout, c, props.COLLIDER_COMMON + props.COLLIDER_MESH)
        if c.motion == 'DYNAMIC':
            box = self.layout.box()
            box.label(text="Rigid Body", icon='PHYSICS')
            _draw_params(box, c, props.COLLIDER_DYNAMIC, units=True)
            if c.rest_saved:
                box.label(text="Keyframed by the bake; Free Bake restores its transform", icon='KEYTYPE_KEYFRAME_VEC')


class SPH_PT_outflow(_RolePanel, bpy.types.Panel):
    bl_label = "Outflow"
    roles = ('OUTFLOW',)

    def draw(self, context):
        col = self.layout.column(align=True)
        col.label(text="Particles entering this object's volume are removed", icon='INFO')
        col.label(text="(placed where it stands at the first frame; a closed mesh)")


_classes = (SPH_PT_main, SPH_PT_domain, SPH_PT_domain_simulation, SPH_PT_domain_borders, SPH_PT_domain_surface,
            SPH_PT_material, SPH_PT_material_derived, SPH_PT_collider, SPH_PT_outflow)


register, unregister = bpy.utils.register_classes_factory(_classes)
