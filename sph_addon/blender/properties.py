"""Settings on ``Object.sph``, generated from the core's declared parameters.

The core declares every user-facing setting once (``core.params.Parameter``:
name, unit, range, default, description citing the paper); the scene-file
validation and ``docs/scene_format.md`` come from the same declarations. Here
they become Blender properties, so the tooltips, limits and defaults in the
Physics tab cannot drift from what the engine accepts. A new material model
added to ``core.solvers.SOLVERS`` shows up in the UI with no change here.

Roles follow Mantaflow's vocabulary: a Domain holds the simulation, cache and
surface settings; Fluid objects are filled with particles; Inflow objects emit
them; Colliders push them. (``SOLID`` is reserved for Becker's corotated
solids and two-way rigid coupling, which come later.)
"""

from __future__ import annotations

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

from ..core.colliders import COMMON_PARAMETERS
from ..core.colliders.mesh_files import MESH_PARAMETERS
from ..core.params import Parameter
from ..core.scene import SIMULATION_PARAMETERS, TOP_PARAMETERS
from ..core.solvers import SOLVERS
from ..core.sources import SOURCES
from ..core.surface.settings import SURFACE_PARAMETERS

ROLES = (
    ("NONE", "None", "Not part of the simulation"),
    ("DOMAIN", "Domain", "The box the simulation lives in; holds the simulation, cache and surface settings"),
    ("FLUID", "Fluid", "Filled with particles at the first frame (the mesh must enclose a volume)"),
    ("INFLOW", "Inflow", "Emits particles every frame along the object's -Z axis"),
    ("COLLIDER", "Collider", "A mesh particles collide with; may move or deform"),
)

# 4.2 fails registration on this option (BLENDER_NOTES.md section 7); 4.5+ lets `//` paths
# survive "Make Paths Relative/Absolute".
_PATH_KW = {"options": {'PATH_SUPPORTS_BLEND_RELATIVE'}} if bpy.app.version >= (4, 5, 0) else {}

_FLOAT_UNITS = {"m": 'LENGTH', "rad": 'ROTATION', "s": 'TIME'}
_VECTOR_SUBTYPES = {"m/s": 'VELOCITY', "m/s^2": 'ACCELERATION', "m": 'TRANSLATION', "rad": 'EULER'}


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
        items = [(c, c.replace("_", " ").title(), "") for c in p.choices]
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
COLLIDER_COMMON = _pick(COMMON_PARAMETERS, ("friction", "stickiness", "stick_distance", "continuous"))
COLLIDER_MESH = _pick(MESH_PARAMETERS, ("mode", "thickness", "cell_size", "padding", "flip_normals",
                                        "hole_closing"))
INFLOW = _pick(SOURCES["inflow"], ("shape", "radius", "size", "rate", "frame_start", "frame_end"))
FLUID_SOURCE = _pick(SOURCES["mesh"], ("jitter", "seed"))


def model_parameters() -> dict[str, Parameter]:
    """Every material parameter of every model, by name (one Blender property each)."""
    out: dict[str, Parameter] = {}
    for spec in SOLVERS.values():
        for p in spec.parameters:
            if p.name in out and out[p.name].kind != p.kind:
                raise TypeError(f"models declare parameter {p.name!r} with different kinds")
            out.setdefault(p.name, p)
    return out


def preset_values(model: str, preset: str) -> dict:
    spec = SOLVERS[model]
    values = {p.name: p.default for p in spec.parameters}
    values.update(spec.presets.get(preset, {}))
    return values


def _preset_items() -> list[tuple[str, str, str]]:
    return [(name, name.title(), f"Material preset '{name}' of the {spec.name} model")
            for spec in SOLVERS.values() for name in sorted(spec.presets)]


def _apply_preset(self, context):
    """Choosing a preset writes its values into the settings; edits after that are overrides."""
    if self.preset not in SOLVERS[self.model].presets:
        return
    for name, value in preset_values(self.model, self.preset).items():
        setattr(self, name, value)


def _model_items() -> list[tuple[str, str, str]]:
    return [(name, name.title(), spec.description) for name, spec in SOLVERS.items()]


# ---- property groups ----------------------------------------------------------------------------

def _make_groups() -> list[type]:
    material_ann = {
        "model": EnumProperty(name="Model", items=_model_items(), default="viscoelastic",
                              description="Material model"),
        "preset": EnumProperty(name="Preset", items=_preset_items(), default="water", update=_apply_preset,
                               description="Material preset; choosing one sets every parameter below, "
                                           "and any change afterwards overrides it"),
        "initial_velocity": FloatVectorProperty(name="Initial Velocity", size=3, subtype='VELOCITY',
                                                description="Velocity of the particles when they appear"),
        **_annotations(model_parameters().values()),
    }
    SPHMaterialSettings = type("SPHMaterialSettings", (bpy.types.PropertyGroup,),
                               {"__annotations__": material_ann, "__doc__": "Material of a Fluid or Inflow"})

    inflow_ann = {
        "speed": FloatProperty(name="Speed", default=1.0, min=0.0, max=1000.0, unit='VELOCITY',
                               description="Speed of emitted particles, along the object's local -Z axis"),
        **_annotations(INFLOW),
    }
    SPHInflowSettings = type("SPHInflowSettings", (bpy.types.PropertyGroup,),
                             {"__annotations__": inflow_ann, "__doc__": "Inflow emitter settings"})

    fluid_ann = _annotations(FLUID_SOURCE)
    SPHFluidSettings = type("SPHFluidSettings", (bpy.types.PropertyGroup,),
                            {"__annotations__": fluid_ann, "__doc__": "Volume fill settings"})

    collider_ann = {
        "motion": EnumProperty(
            name="Motion", default='STATIC',
            items=[('STATIC', "Static", "The collider does not move during the bake"),
                   ('ANIMATED', "Animated", "Moves and rotates as a rigid body (its transform is sampled "
                                            "every frame and interpolated per substep)"),
                   ('DEFORMING', "Deforming", "Changes shape (armature, shape keys, modifiers): its mesh "
                                              "is exported and its distance field rebuilt every frame")],
            description="How the collider changes over the bake"),
        **_annotations(COLLIDER_COMMON),
        **_annotations(COLLIDER_MESH),
    }
    SPHColliderSettings = type("SPHColliderSettings", (bpy.types.PropertyGroup,),
                               {"__annotations__": collider_ann, "__doc__": "Collider settings"})

    domain_ann = {
        **_annotations(DOMAIN_TOP),
        **_annotations(DOMAIN_SIMULATION),
        "use_scene_gravity": BoolProperty(name="Use Scene Gravity", default=True,
                                          description="Take gravity from the scene's Gravity setting"),
        "gravity": bpy_property(GRAVITY),
        "closed_borders": BoolProperty(name="Closed Borders", default=True,
                                       description="The domain box is a closed tank; otherwise particles "
                                                   "leaving it are removed"),
        "cache_directory": StringProperty(name="Cache Directory", subtype='DIR_PATH', default="//sph_cache",
                                          description="Where the bake is stored; '//' is relative to the "
                                                      ".blend file (keep it beside the file on farms)",
                                          **_PATH_KW),
        "surface_enabled": BoolProperty(name="Surface", default=True,
                                        description="Mesh a surface from the particles (Bake Mesh)"),
    }
    SPHSurfaceSettings = type("SPHSurfaceSettings", (bpy.types.PropertyGroup,),
                              {"__annotations__": _annotations(SURFACE_PARAMETERS),
                               "__doc__": "Surface meshing settings"})
    domain_ann["surface"] = PointerProperty(type=SPHSurfaceSettings)
    SPHDomainSettings = type("SPHDomainSettings", (bpy.types.PropertyGroup,),
                             {"__annotations__": domain_ann, "__doc__": "Domain settings"})

    object_ann = {
        "role": EnumProperty(name="Type", items=ROLES, default='NONE', update=_role_changed,
                             description="What this object is in the SPH simulation"),
        "domain": PointerProperty(type=SPHDomainSettings),
        "material": PointerProperty(type=SPHMaterialSettings),
        "fluid": PointerProperty(type=SPHFluidSettings),
        "inflow": PointerProperty(type=SPHInflowSettings),
        "collider": PointerProperty(type=SPHColliderSettings),
    }
    SPHObjectSettings = type("SPHObjectSettings", (bpy.types.PropertyGroup,),
                             {"__annotations__": object_ann, "__doc__": "SPH settings of an object"})
    return [SPHMaterialSettings, SPHInflowSettings, SPHFluidSettings, SPHColliderSettings, SPHSurfaceSettings,
            SPHDomainSettings, SPHObjectSettings]


def _role_changed(self, context):
    """A new Fluid or Inflow starts from its preset's values (water unless chosen otherwise)."""
    if self.role in {'FLUID', 'INFLOW'} and not self.material.get("_initialised"):
        self.material["_initialised"] = True
        _apply_preset(self.material, context)


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
