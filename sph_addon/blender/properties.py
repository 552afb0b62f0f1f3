"""Settings on ``Object.sph``, generated from the core's declared parameters.

The core declares every user-facing setting once (``core.params.Parameter``:
name, unit, range, default, description citing the paper); the scene-file
validation and ``docs/scene_format.md`` come from the same declarations. Here
they become Blender properties, so the tooltips, limits and defaults in the
Physics tab cannot drift from what the engine accepts. Each material model gets
its own group on ``ob.sph.material`` (``ob.sph.material.viscoelastic``), with
its parameters and a menu of its own presets, so two models declaring the same
name keep their own units and limits; ``ob.sph.material.model`` selects one. A
new material model added to ``core.solvers.SOLVERS`` shows up in the UI with no
change here. Files saved before the per-model groups are upgraded by ``migrate``.

Blender saves an enum as its item's number. Every enum whose items come from the
core (the model selector, each model's presets, ``choice`` parameters) numbers
them by ``core.blender_names.stable_number`` of the identifier, not by position, so adding a
preset, a model or a choice leaves every saved file meaning what it meant.
Files that stored positions (saved before this numbering) are translated by
``migrate``.

Roles follow Mantaflow's vocabulary: a Domain holds the simulation, cache and
surface settings; Fluid objects are filled with particles; Inflow objects emit
them; Colliders push them; a Solid is filled with particles of an elastic
material (Becker 2009) and its own mesh is carried by them (``replay_solid``).
The model selector is one property shared by every role that carries a material,
so each of them lists every registered model. A Solid's mesh is carried by the
rotations of its particles, which only :data:`SOLID_MODEL` keeps (the core's
``bind_mesh`` check): a Solid set to another model is refused at export with
the advice to make the object a Fluid (the ``sph`` model's lumps, which split
and merge, have no rest shape to carry a mesh).
"""

from __future__ import annotations

import dataclasses

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..core.colliders import COMMON_PARAMETERS, DYNAMIC_PARAMETERS, OPEN_SIDE_PARAMETERS
from ..core.colliders.shapes.mesh_files import MESH_PARAMETERS
from ..core.models import SOLVERS
from ..core.passes.heat_parameters import MELT_KEY_PARAMETERS
from ..core.scene.blender_names import MODEL_CLASS_PREFIX, check_model, stable_number
from ..core.scene.params import Parameter
from ..core.scene.scene_file import SIMULATION_PARAMETERS, TOP_PARAMETERS
from ..core.sources.emission import SOURCES
from ..core.surface.settings import SURFACE_PARAMETERS
from . import compat, migrate
from .model_presets import model_label, preset_of, preset_values  # noqa: F401 (the export and the panel read them here)
from .replay import objects as replay

ROLES = (
    ("NONE", "None", "Not part of the simulation"),
    ("DOMAIN", "Domain", "The box the simulation lives in; holds the simulation, cache and surface settings"),
    ("FLUID", "Fluid", "Filled with particles at the first frame (the mesh must enclose a volume)"),
    ("INFLOW", "Inflow", "Emits particles every frame along the object's -Z axis"),
    ("COLLIDER", "Collider", "A mesh particles collide with; may move or deform"),
    # Appended: Blender stores this enum by position, so existing roles keep their numbers.
    ("OUTFLOW", "Outflow", "Particles entering its volume are removed (a drain, the end of a channel); the mesh "
                           "must enclose a volume"),
    ("SOLID", "Solid", "A soft solid: filled with particles of an elastic material at the first frame, and the "
                       "object's own mesh deforms with them (the mesh must enclose a volume)"),
)
# Roles whose objects carry a material (and make particles).
MATERIAL_ROLES = ('FLUID', 'INFLOW', 'SOLID')
# The material model a Solid starts with: the one whose particles carry a mesh (scene.py: bind_mesh).
SOLID_MODEL = "elastic"

_PATH_KW = compat.PATH_PROPERTY_OPTIONS

_FLOAT_UNITS = {"m": 'LENGTH', "rad": 'ROTATION', "s": 'TIME'}
NATIVE_UNITS = tuple(_FLOAT_UNITS)  # units Blender shows itself (the panels add the others to the label)
_VECTOR_SUBTYPES = {"m/s": 'VELOCITY', "m/s^2": 'ACCELERATION', "m": 'TRANSLATION', "rad": 'EULER'}
NATIVE_VECTOR_UNITS = tuple(_VECTOR_SUBTYPES)  # vectors whose subtype Blender shows in units


def numbered(items, what: str) -> list[tuple[str, str, str, str, int]]:
    """``(identifier, name, description)`` enum items with their stable numbers, in the same order.

    Raises ValueError when two identifiers of one enum get the same number (Blender needs them
    unique per enum); rename one of them.
    """
    out, seen = [], {}
    for identifier, name, description in items:
        number = stable_number(identifier)
        if number in seen:
            raise ValueError(f"{what}: items {seen[number]!r} and {identifier!r} get the same stored number "
                             f"{number}; rename one of them")
        seen[number] = identifier
        out.append((identifier, name, description, 'NONE', number))
    return out


def _description(p: Parameter) -> str:
    unit = f" [{p.unit}]" if p.unit and p.unit not in _FLOAT_UNITS else ""
    return p.description + unit


def bpy_property(p: Parameter, update=None):
    """The Blender property for a declared parameter (same default, limits, label, tooltip)."""
    kw = {"name": p.ui_label, "description": _description(p)}
    if update is not None:
        kw["update"] = update
    kind = p.kind
    if kind == "bool":
        return BoolProperty(default=p.default, **kw)
    if kind == "choice":
        items = numbered([(c, c.replace("_", " ").title(), "") for c in p.choices], f"parameter {p.name!r}")
        return EnumProperty(items=items, default=p.default, **kw)
    if kind == "str":
        return StringProperty(default=p.default, **kw)
    if kind == "vector":
        subtype = _VECTOR_SUBTYPES.get(p.unit, 'XYZ')
        return FloatVectorProperty(size=3, default=p.default, subtype=subtype, **kw)
    limits = {}
    if p.minimum is not None:
        limits["min"] = p.minimum
    if p.maximum is not None:
        limits["max"] = p.maximum
    if kind == "int":
        return IntProperty(default=p.default, **{k: int(max(min(v, 2**31 - 1), -2**31)) for k, v in limits.items()},
                           **kw)
    unit = _FLOAT_UNITS.get(p.unit)
    extra = {"unit": unit} if unit else {}
    # Spacings and radii go down to 0.1 mm: show enough digits to see them.
    return FloatProperty(default=p.default, precision=4 if p.unit == "m" else 3, **limits, **extra, **kw)


def _annotations(params, update=None) -> dict:
    return {p.name: bpy_property(p, update) for p in params}


def by_name(params) -> dict[str, Parameter]:
    return {p.name: p for p in params}


def _pick(params, names) -> tuple[Parameter, ...]:
    table = by_name(params)
    return tuple(table[n] for n in names)


# ---- which declared parameters each role shows -------------------------------------------------

DOMAIN_TOP = _pick(TOP_PARAMETERS, ("particle_spacing", "frame_start", "frame_end"))
DOMAIN_SIMULATION = tuple(p for p in SIMULATION_PARAMETERS if p.name != "gravity")
GRAVITY = by_name(SIMULATION_PARAMETERS)["gravity"]
COLLIDER_COMMON = _pick(COMMON_PARAMETERS, ("friction", "stickiness", "stick_distance", "continuous", "heat_contact",
                                           "temperature"))
# Shown and exported for Motion Dynamic only: other colliders' scene files stay as they were.
COLLIDER_DYNAMIC = _pick(DYNAMIC_PARAMETERS, ("density", "body_friction", "restitution", "linear_velocity",
                                              "angular_velocity", "animated_until", "hinge_axis"))
COLLIDER_MESH = _pick(MESH_PARAMETERS, ("mode", "thickness", "cell_size", "padding", "flip_normals",
                                        "hole_closing"))
# nozzle_length defaults to 0 (no pipe): what files saved before it existed baked with.
# inherit_velocity defaults to 0 (the object's motion ignored), as files saved before it baked.
INFLOW = _pick(SOURCES["inflow"], ("shape", "radius", "size", "rate", "frame_start", "frame_end",
                                   "nozzle_length", "inherit_velocity", "temperature"))
FLUID_SOURCE = _pick(SOURCES["mesh"], ("jitter", "seed", "temperature"))
MELT_AMOUNT = by_name(MELT_KEY_PARAMETERS)["amount"]
# The Domain's walls (Closed Borders) are a box_container: its open faces, and its friction under
# the Domain's own name. Defaults (every side closed, no friction) are what files saved before
# these settings baked with.
BORDER_SIDES = OPEN_SIDE_PARAMETERS
WALL_FRICTION = dataclasses.replace(
    by_name(COMMON_PARAMETERS)["friction"], name="wall_friction", label="Wall Friction",
    description="μ of the Domain's closed sides (Clavet eq. 6.3): 0 lets liquid slide along them, 1 makes "
                "it stick tangentially.")
DOMAIN_BORDERS = (*BORDER_SIDES, WALL_FRICTION)


def default_preset(model: str) -> str:
    """Water where a model has it (the default before models had their own presets), else its first."""
    presets = sorted(SOLVERS[model].presets)
    return "water" if "water" in presets else (presets[0] if presets else "")


def default_model() -> str:
    """Viscoelastic where registered, else the first model.

    Blender does not store a selector left at its default, so every file saved so far reads its
    model from here: viscoelastic was the default (and the only model) when they were saved. The
    first model would change with the order of ``SOLVERS``.
    """
    return migrate.DEFAULT_MODEL if migrate.DEFAULT_MODEL in SOLVERS else next(iter(SOLVERS))


def model_group(material, model: str = ""):
    """The settings group of ``model`` (default: the selected one) on ``ob.sph.material``.

    Raises AttributeError for a model that is not registered (a file from a build with more models).
    """
    return getattr(material, model or material.model)


def apply_preset(group, model: str, preset: str) -> None:
    """Write ``preset``'s values into a model's group; edits after that are overrides of it."""
    if preset and preset not in SOLVERS[model].presets:
        return
    for name, value in preset_values(model, preset).items():
        setattr(group, name, value)


def initialise_model(material, model: str = "") -> None:
    """Fill a model's group from its preset the first time the model is used (later: no change)."""
    model = model or material.model
    group = model_group(material, model)
    if group.get(migrate.INITIALISED):
        return
    group[migrate.INITIALISED] = True
    apply_preset(group, model, preset_of(group))


def choose_preset(material, preset: str, model: str = "") -> str:
    """Select the model that has ``preset`` (``model`` first, when given) and choose it there (Quick Liquid
    etc.); the model's name."""
    if not (model in SOLVERS and preset in SOLVERS[model].presets):
        model = next((name for name, spec in SOLVERS.items() if preset in spec.presets), None)
    if model is None:
        raise KeyError(f"no material model has a preset {preset!r}")
    material.model = model
    initialise_model(material, model)
    model_group(material, model).preset = preset
    return model


def _preset_updater(model: str):
    def update(self, context):
        apply_preset(self, model, self.preset)

    return update


def _model_changed(self, context):
    """A model chosen for the first time starts from its preset, like a new Fluid."""
    migrate.upgrade(self, keep_model=True)
    if self.model in SOLVERS:
        initialise_model(self)


def _model_items() -> list[tuple[str, str, str, str, int]]:
    return numbered([(name, model_label(name), spec.description) for name, spec in SOLVERS.items()],
                    "material models")


def _model_group_class(name: str, spec) -> type:
    """The settings group of one model: its declared parameters and a menu of its own presets.

    A model put into ``SOLVERS`` without ``solvers.register`` is checked here, with the same
    message, before Blender refuses (or silently shadows) one of its names.
    """
    check_model(spec, [other for other in SOLVERS if other != name])
    ann = _annotations(spec.parameters)
    label = model_label(name)
    if spec.presets:
        # Shown sorted by name; stored by stable number, so a new preset changes no saved file.
        items = numbered([(p, p.replace("_", " ").title(), f"Material preset '{p}' of the {name} model")
                          for p in sorted(spec.presets)], f"presets of material model {name!r}")
        ann["preset"] = EnumProperty(name="Preset", items=items, default=default_preset(name),
                                     update=_preset_updater(name),
                                     description="Material preset; choosing one sets every parameter below, "
                                                 "and any change afterwards overrides it")
    return type(f"{MODEL_CLASS_PREFIX}{name}", (bpy.types.PropertyGroup,),
                {"__annotations__": ann, "__doc__": f"Settings of the {label} material model"})


# ---- property groups ----------------------------------------------------------------------------

def _material_class(models: dict[str, type]) -> type:
    """``ob.sph.material``: the model selector, the initial velocity and one group per model."""
    material_ann = {
        "model": EnumProperty(name="Model", items=_model_items(), default=default_model(),
                              update=_model_changed,
                              description="Material model: how the particles behave (each model has its "
                                          "own presets and parameters)"),
        "initial_velocity": FloatVectorProperty(name="Initial Velocity", size=3, subtype='VELOCITY',
                                                description="Velocity of the particles when they appear"),
        "initial_angular_velocity": FloatVectorProperty(
            name="Angular Velocity", size=3, subtype='XYZ',
            description="Spin of the particles when they appear, rad/s about the world axes through their centroid: "
                        "each starts at Initial Velocity + ω × (its position - the centroid)"),
        **{name: PointerProperty(type=cls, name=model_label(name), description=SOLVERS[name].description)
           for name, cls in models.items()},
    }
    return type("SPHMaterialSettings", (bpy.types.PropertyGroup,),
                {"__annotations__": material_ann, "__doc__": "Material of a Fluid or Inflow"})


def _make_groups() -> list[type]:
    models = {name: _model_group_class(name, spec) for name, spec in SOLVERS.items()}
    SPHMaterialSettings = _material_class(models)
    inflow_ann = {
        "speed": FloatProperty(name="Speed", default=1.0, min=0.0, max=1000.0, unit='VELOCITY',
                               description="Speed of emitted particles, along the object's local -Z axis"),
        **_annotations(INFLOW),
    }
    SPHInflowSettings = type("SPHInflowSettings", (bpy.types.PropertyGroup,),
                             {"__annotations__": inflow_ann, "__doc__": "Inflow emitter settings"})

    fluid_ann = {
        **_annotations(FLUID_SOURCE),
        # Blender-side only: the export adds it to the source's velocity (the core never sees the object).
        "inherit_velocity": FloatProperty(name="Inherit Velocity", default=0.0, min=-10.0, max=10.0,
                                          description="Fraction of the object's own velocity at the first frame "
                                                      "(its origin's move to the next frame) added to the "
                                                      "Initial Velocity: 1 throws the liquid as the object moves"),
    }
    # A Solid's: keyed on the timeline and sampled at export (``export._melt_keys``) into melt_keyframes.
    fluid_ann["melt_amount"] = FloatProperty(
        name=MELT_AMOUNT.label, default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description=MELT_AMOUNT.description + " Key it to melt on cue (needs the material's Melts Into).")
    SPHFluidSettings = type("SPHFluidSettings", (bpy.types.PropertyGroup,),
                            {"__annotations__": fluid_ann, "__doc__": "Volume fill settings"})

    collider_ann = {
        "motion": EnumProperty(
            name="Motion", default='STATIC',
            items=[('STATIC', "Static", "The collider does not move during the bake"),
                   ('ANIMATED', "Animated", "Moves and rotates as a rigid body (its transform is sampled "
                                            "every frame and interpolated per substep)"),
                   ('DEFORMING', "Deforming", "Changes shape (armature, shape keys, modifiers): its mesh "
                                              "is exported and its distance field rebuilt every frame"),
                   # Appended: Blender stores this enum by position, so saved motions keep their meaning.
                   ('DYNAMIC', "Dynamic", "A rigid body the fluid moves and that pushes the fluid back (a crate, "
                                          "a ball, a boat): the bake keyframes its motion; Free Bake restores "
                                          "its transform")],
            description="How the collider changes over the bake"),
        **_annotations(COLLIDER_COMMON),
        **_annotations(COLLIDER_MESH),
        **_annotations(COLLIDER_DYNAMIC),
        **_rest_annotations(),
    }
    SPHColliderSettings = type("SPHColliderSettings", (bpy.types.PropertyGroup,),
                               {"__annotations__": collider_ann, "__doc__": "Collider settings"})

    SPHSurfaceSettings, SPHDomainSettings = _domain_classes()
    object_ann = {
        "role": EnumProperty(name="Type", items=ROLES, default='NONE', update=_role_changed,
                             description="What this object is in the SPH simulation"),
        # Default on: files saved before the toggle existed store nothing and bake every object, as before.
        "enabled": BoolProperty(name="Enabled", default=True,
                                description="Take part in the simulation: a disabled Fluid or Inflow makes no "
                                            "particles and a disabled Collider does not collide (the Domain "
                                            "always bakes)"),
        "domain": PointerProperty(type=SPHDomainSettings),
        "material": PointerProperty(type=SPHMaterialSettings),
        "fluid": PointerProperty(type=SPHFluidSettings),
        "inflow": PointerProperty(type=SPHInflowSettings),
        "collider": PointerProperty(type=SPHColliderSettings),
    }
    SPHObjectSettings = type("SPHObjectSettings", (bpy.types.PropertyGroup,),
                             {"__annotations__": object_ann, "__doc__": "SPH settings of an object"})
    return [*models.values(), SPHMaterialSettings, SPHInflowSettings, SPHFluidSettings, SPHColliderSettings,
            SPHSurfaceSettings, SPHDomainSettings, SPHObjectSettings]


def _rest_annotations() -> dict:
    """What a bake's keyframes replaced on a Dynamic collider, for Free Bake (``dynamic_colliders``)."""
    hidden = {"options": {'HIDDEN'}}
    return {
        "rest_saved": BoolProperty(default=False, **hidden),
        "rest_matrix": FloatVectorProperty(size=16, **hidden),
        "rest_rotation_mode": StringProperty(default="", **hidden),
        "rest_action": PointerProperty(type=bpy.types.Action, **hidden),
        "rest_domain": StringProperty(default="", **hidden),
        "baked_action": PointerProperty(type=bpy.types.Action, **hidden),
    }


def _domain_classes() -> tuple[type, type]:
    """``ob.sph.domain`` (simulation, borders, cache, replay) and its ``surface`` settings."""
    domain_ann = {
        **_annotations(DOMAIN_TOP),
        **_annotations(DOMAIN_SIMULATION),
        "use_scene_gravity": BoolProperty(name="Use Scene Gravity", default=True,
                                          description="Take gravity from the scene's Gravity setting"),
        "gravity": bpy_property(GRAVITY),
        "use_unit_scale": BoolProperty(name="Use Unit Scale", default=True,
                                       description="Read lengths and speeds in the scene's units (Scene > Units > "
                                                   "Unit Scale) and bake in metres; the replay shows the result "
                                                   "in scene units. Off: one Blender unit is one metre (files "
                                                   "baked before this setting with a unit scale other than 1)"),
        "closed_borders": BoolProperty(name="Closed Borders", default=True,
                                       description="The domain box is a tank whose sides are walls, except "
                                                   "those set open below; off: every side is open (particles "
                                                   "leaving the box are removed)"),
        **_annotations(DOMAIN_BORDERS),
        "cache_directory": StringProperty(name="Cache Directory", subtype='DIR_PATH', default="//sph_cache",
                                          description="Where the bake is stored; '//' is relative to the "
                                                      ".blend file (keep it beside the file on farms)",
                                          **_PATH_KW),
        "render_particles": BoolProperty(name="Render Particles", default=False, update=_render_particles_changed,
                                         description="Render the particles as spheres beside the surface (they "
                                                     "always show in the viewport; rendered, they bead every "
                                                     "edge of the surface)"),
        "surface_enabled": BoolProperty(name="Surface", default=True,
                                        description="Bake also meshes the surface of the baked frames "
                                                    "(Bake Data only simulates; Bake Mesh meshes at any time)"),
    }
    SPHSurfaceSettings = type("SPHSurfaceSettings", (bpy.types.PropertyGroup,),
                              {"__annotations__": _annotations(SURFACE_PARAMETERS),
                               "__doc__": "Surface meshing settings"})
    domain_ann["surface"] = PointerProperty(type=SPHSurfaceSettings)
    SPHDomainSettings = type("SPHDomainSettings", (bpy.types.PropertyGroup,),
                             {"__annotations__": domain_ann, "__doc__": "Domain settings"})
    return SPHSurfaceSettings, SPHDomainSettings


def _render_particles_changed(self, context):
    particles, _ = replay.find_replay(self.id_data)
    replay.show_particles_in_render(particles, self.render_particles)


def _role_changed(self, context):
    """A new Fluid or Inflow starts from its model's preset (water unless chosen otherwise); a Solid
    from the elastic model's (only its particles carry a mesh)."""
    if self.role in MATERIAL_ROLES:
        m = self.material
        migrate.upgrade(m)
        migrate.mark_current(m)
        if self.role == 'SOLID' and SOLID_MODEL in SOLVERS and m.model != SOLID_MODEL:
            m.model = SOLID_MODEL  # its update initialises the model
        if m.model in SOLVERS:
            initialise_model(m)


_classes: list[type] = []


def register():
    _classes[:] = _make_groups()
    for cls in _classes:
        bpy.utils.register_class(cls)
    bpy.types.Object.sph = PointerProperty(type=_classes[-1])


def unregister():
    del bpy.types.Object.sph
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
    _classes.clear()
