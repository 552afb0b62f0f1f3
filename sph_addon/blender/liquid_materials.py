"""The replay's default look: a shader material per material preset, picked per point by ``material``.

A bake's particles and surface vertices carry the integer attribute ``material``: the index
of the particle's material in the baked scene's ``materials`` list (the Fluid objects by name,
then the Inflows; ``export.build_scene``). The material made here reads that attribute and
gives each index the look of its preset, so water and honey in one bake shade as water and
honey. Looks were chosen from what each substance does to light:

- water: clear, refractive (IOR 1.333), barely tinted, almost mirror smooth;
- honey: amber, refractive (IOR 1.49, about that of honey), light through thin parts and a
  deep amber through thick ones (the tint is applied at each surface crossing);
- mud: opaque dark brown with a thin glossy wet film (a clear coat);
- slime: green, mostly transmissive and glossy;
- plasticine: opaque, matte, with a little subsurface softness;
- oil: golden and clear, refractive (IOR 1.47, olive oil's), smooth;
- chocolate: opaque dark brown, glossy (a clear coat on a fat surface);
- toothpaste: opaque white, a soft sheen, a touch of subsurface (a paste scatters light);
- dough: pale beige, matte, soft subsurface scattering (flour and water);

and the soft solids of the elastic model:

- jelly: red, translucent by subsurface scattering (light enters, scatters, comes out
  reddened), with a glossy skin;
- gummy: orange, translucent (mostly transmissive, IOR 1.47 of a sugar gel) with a frosted
  surface and some scattering inside;
- silicone: off-white, matte, translucent by wide subsurface scattering (IOR 1.41, silicone's);
- rubber: opaque charcoal, a satin sheen;
- flesh: a skin tone, subsurface scattering that reaches farthest in red (as skin's does);

and the lumps and liquid of the sph model:

- classic_water: water's look (it is water);
- putty: off-white cream (chalk in linseed oil), matte, a trace of subsurface scattering;
- clay: terracotta brown, a faint wet sheen (a thin clear coat);
- mashed_potato: pale yellow, matte, soft subsurface scattering;
- wet_snow: white with a blue cast, translucent by wide subsurface scattering (IOR 1.31, ice's);

and the melting presets (elastic) with their liquids (sph): a tempered bar's satin gloss for dark chocolate,
the viscoelastic model's melted chocolate for the sph one (the same substance); butter,
wax, ice cream and cheese opaque-to-translucent by subsurface scattering, their liquids glossier; lava and
basalt dark rock that glows by its ``temperature`` attribute (a black body at that temperature, brightening
from 600 to 1200 °C), so the crust darkens as it cools.

Presets belong to a model (two models may each have a ``water``), so a look is keyed by the
model and the preset. A preset with no look here (a model added later) gets the neutral
light-blue glossy look the replay used before. The material is built once per list of
(model, preset) pairs and shared; the replay uses it only where the artist set no material of
their own (``replay.ensure_replay``). Materials made up to commit 45ad05e are keyed by their
presets alone (every bake was viscoelastic then), and jelly and rubber were viscoelastic presets
until they moved to the elastic model (``moved_presets``): :func:`material_for` finds a material
under those older keys and re-keys it, so a file saved then keeps its material, and a bake made
then (its cache names the old model) still gets the preset's look. Main thread only, like all bpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import bpy

from ..core.cache.jsonfile import read_json
from ..core.errors import InputError
from ..core.models import SOLVERS
from .replay.frames import SHADER_TEMPERATURE

# On materials we make (the replay may replace them; never one the artist made): the looks' key.
TAG = "sph_replay_material"
ATTRIBUTE = "material"
# The model of a scene file's material that names none (core/scene/scene_file.py).
SCENE_DEFAULT_MODEL = "viscoelastic"
# The only model of the versions whose materials are keyed by their presets alone (up to 45ad05e).
_PRESET_KEYED_MODEL = "viscoelastic"


@dataclass(frozen=True)
class Look:
    """Principled BSDF settings of one preset (linear RGB; lengths in metres)."""

    color: tuple[float, float, float]
    roughness: float
    ior: float = 1.45
    transmission: float = 0.0
    subsurface: float = 0.0
    subsurface_radius: tuple[float, float, float] = (1.0, 1.0, 1.0)
    subsurface_scale: float = 0.05
    coat: float = 0.0
    coat_roughness: float = 0.03
    specular: float = 0.5
    # Glows by its ``temperature`` attribute (°C): black-body colour, brightness rising from ``glow[0]`` to
    # ``glow[1]`` °C (0 to ``glow[2]``); None: no emission.
    glow: tuple[float, float, float] | None = None


# model -> preset -> look.
LOOKS: dict[str, dict[str, Look]] = {"viscoelastic": {
    "water": Look(color=(0.85, 0.95, 1.0), roughness=0.01, ior=1.333, transmission=1.0),
    "honey": Look(color=(1.0, 0.42, 0.03), roughness=0.05, ior=1.49, transmission=1.0),
    "mud": Look(color=(0.09, 0.055, 0.03), roughness=0.55, coat=0.35, coat_roughness=0.12),
    "slime": Look(color=(0.35, 0.9, 0.08), roughness=0.08, ior=1.4, transmission=0.85, coat=0.2),
    "plasticine": Look(color=(0.7, 0.25, 0.09), roughness=0.8, specular=0.25, subsurface=0.1,
                       subsurface_radius=(1.0, 0.5, 0.3), subsurface_scale=0.005),
    "oil": Look(color=(0.95, 0.72, 0.12), roughness=0.02, ior=1.47, transmission=1.0),
    "chocolate": Look(color=(0.09, 0.035, 0.015), roughness=0.2, coat=0.8, coat_roughness=0.05),
    "toothpaste": Look(color=(0.92, 0.93, 0.94), roughness=0.35, subsurface=0.3,
                       subsurface_radius=(1.0, 1.0, 1.0), subsurface_scale=0.005),
    "dough": Look(color=(0.86, 0.74, 0.55), roughness=0.85, specular=0.3, subsurface=0.4,
                  subsurface_radius=(1.0, 0.8, 0.6), subsurface_scale=0.01),
}, "elastic": {
    "jelly": Look(color=(0.9, 0.08, 0.12), roughness=0.12, ior=1.4, subsurface=1.0,
                  subsurface_radius=(1.0, 0.2, 0.2), subsurface_scale=0.08, coat=0.6),
    "gummy": Look(color=(1.0, 0.3, 0.01), roughness=0.3, ior=1.47, transmission=0.8, subsurface=0.3,
                  subsurface_radius=(1.0, 0.4, 0.1), subsurface_scale=0.02),
    "silicone": Look(color=(0.88, 0.87, 0.83), roughness=0.6, ior=1.41, subsurface=1.0,
                     subsurface_radius=(1.0, 0.95, 0.85), subsurface_scale=0.03, specular=0.4),
    "rubber": Look(color=(0.04, 0.04, 0.045), roughness=0.45, specular=0.4),
    "flesh": Look(color=(0.8, 0.5, 0.4), roughness=0.45, ior=1.4, subsurface=1.0,
                  subsurface_radius=(1.0, 0.2, 0.1), subsurface_scale=0.01),
}, "sph": {
    "putty": Look(color=(0.78, 0.74, 0.62), roughness=0.7, specular=0.3, subsurface=0.05,
                  subsurface_radius=(1.0, 0.9, 0.7), subsurface_scale=0.003),
    "clay": Look(color=(0.42, 0.2, 0.11), roughness=0.6, specular=0.35, coat=0.15, coat_roughness=0.2),
    "mashed_potato": Look(color=(0.93, 0.82, 0.52), roughness=0.75, specular=0.35, subsurface=0.3,
                          subsurface_radius=(1.0, 0.85, 0.5), subsurface_scale=0.005),
    "wet_snow": Look(color=(0.9, 0.93, 0.97), roughness=0.5, ior=1.31, subsurface=1.0,
                     subsurface_radius=(0.8, 0.9, 1.0), subsurface_scale=0.02),
}}
# The sph model's classic water is water: it looks like the viscoelastic model's.
LOOKS["sph"]["classic_water"] = LOOKS["viscoelastic"]["water"]
# The melting presets and their liquids (heat: ``core/passes/phase.py``). Lava and basalt glow where hot: dull red
# from ~600 °C to yellow-white at 1200 °C, as cooling lava's crust darkens.
_LAVA_GLOW = (600.0, 1200.0, 12.0)
LOOKS["elastic"].update({
    "dark_chocolate": Look(color=(0.08, 0.03, 0.013), roughness=0.3, coat=0.5, coat_roughness=0.1),
    "butter": Look(color=(0.95, 0.8, 0.35), roughness=0.45, subsurface=0.4, subsurface_radius=(1.0, 0.9, 0.5),
                   subsurface_scale=0.01),
    "candle_wax": Look(color=(0.93, 0.9, 0.85), roughness=0.4, subsurface=1.0, subsurface_radius=(1.0, 0.8, 0.6),
                       subsurface_scale=0.02),
    "ice_cream": Look(color=(0.98, 0.9, 0.78), roughness=0.7, subsurface=0.6, subsurface_radius=(1.0, 0.9, 0.8),
                      subsurface_scale=0.01, specular=0.3),
    "cheese": Look(color=(0.95, 0.78, 0.3), roughness=0.5, subsurface=0.5, subsurface_radius=(1.0, 0.8, 0.4),
                   subsurface_scale=0.01),
    "basalt": Look(color=(0.03, 0.028, 0.026), roughness=0.85, specular=0.3, glow=_LAVA_GLOW),
})
LOOKS["sph"].update({
    "melted_chocolate": LOOKS["viscoelastic"]["chocolate"],
    "melted_butter": Look(color=(1.0, 0.78, 0.2), roughness=0.05, ior=1.47, transmission=0.9),
    "molten_wax": Look(color=(0.95, 0.92, 0.85), roughness=0.05, ior=1.44, transmission=0.7, subsurface=0.3,
                       subsurface_scale=0.01),
    "melted_ice_cream": Look(color=(0.98, 0.9, 0.78), roughness=0.2, subsurface=0.6,
                             subsurface_radius=(1.0, 0.9, 0.8), subsurface_scale=0.01),
    "melted_cheese": Look(color=(1.0, 0.75, 0.2), roughness=0.25, subsurface=0.5, subsurface_radius=(1.0, 0.7, 0.3),
                          subsurface_scale=0.01, coat=0.3),
    "lava": Look(color=(0.03, 0.025, 0.02), roughness=0.6, specular=0.3, glow=_LAVA_GLOW),
})
FALLBACK = Look(color=(0.30, 0.58, 0.95), roughness=0.15)


def look(model: str, preset: str) -> Look:
    """The look of ``model``'s ``preset`` (of the model it moved to, for a preset ``model`` gave away);
    the neutral one for a preset (or model) without a look."""
    found = LOOKS.get(model, {}).get(preset)
    if found is None:
        moved = getattr(SOLVERS.get(model), "moved_presets", {}).get(preset)
        found = LOOKS.get(moved, {}).get(preset) if moved else None
    return found or FALLBACK


def cache_looks(cache_root: Path) -> list[tuple[str, str]] | None:
    """``(model, preset)`` of each material index of the bake in ``cache_root`` (its stored scene.json).

    None when there is no readable stored scene (nothing baked yet). A material without a
    preset reads as ``""`` (the fallback look), one without a model as the scene file's default.
    """
    try:
        scene = read_json(Path(cache_root) / "scene.json", "stored scene")
    except InputError:
        return None
    materials = scene.get("materials") if isinstance(scene, dict) else None
    if not isinstance(materials, list):
        return None
    return [(str(m.get("model") or SCENE_DEFAULT_MODEL), str(m.get("preset") or "")) if isinstance(m, dict)
            else (SCENE_DEFAULT_MODEL, "") for m in materials]


def looks_key(looks: list[tuple[str, str]]) -> str:
    """The tag of the material made for ``looks``: ``model/preset`` per material index.

    Model and preset names are identifiers (``core.blender_names``): no ``/`` or ``,`` in them.
    """
    return ",".join(f"{model}/{preset}" for model, preset in looks) or "-"


def _preset_key(looks: list[tuple[str, str]]) -> str | None:
    """The tag the same material had up to commit 45ad05e (presets alone), where it can have had one."""
    if any(model != _PRESET_KEYED_MODEL for model, _ in looks):
        return None
    return ",".join(preset for _, preset in looks) or "-"


def _moved_from(model: str, preset: str) -> str:
    """The model that had ``preset`` before it moved to ``model`` (``moved_presets``); else ``model``."""
    return next((name for name, spec in SOLVERS.items()
                 if getattr(spec, "moved_presets", {}).get(preset) == model), model)


def _old_keys(looks: list[tuple[str, str]]) -> list[str]:
    """The tags the same material can have had in older versions, newest first: each moved preset
    under the model it moved from, then presets alone (up to commit 45ad05e)."""
    before = [(_moved_from(model, preset), preset) for model, preset in looks]
    keys = [looks_key(before)] if before != looks else []
    keys += [key for key in (_preset_key(looks), _preset_key(before)) if key]
    return list(dict.fromkeys(keys))


def material_for(looks: list[tuple[str, str]]) -> bpy.types.Material:
    """The shared material giving material index ``i`` the look of ``looks[i]`` (model, preset), built once."""
    key = looks_key(looks)
    local = [mat for mat in bpy.data.materials if mat.library is None and mat.get(TAG)]
    for wanted in (key, *_old_keys(looks)):
        mat = next((mat for mat in local if mat.get(TAG) == wanted), None)
        if mat is not None:
            mat[TAG] = key
            return mat
    mat = bpy.data.materials.new("SPH " + " + ".join(_names(looks)))
    mat[TAG] = key
    _build(mat, [look(model, preset) for model, preset in looks] or [FALLBACK])
    return mat


def _names(looks: list[tuple[str, str]]) -> list[str]:
    """The presets' names for the material's name; the model's too where two models share a preset name."""
    models_of: dict[str, set[str]] = {}
    for model, preset in looks:
        models_of.setdefault(preset, set()).add(model)
    names = []
    for model, preset in looks:
        name = preset.title() or "Liquid"
        if len(models_of[preset]) > 1:
            name += f" ({getattr(SOLVERS.get(model), 'label', '') or model.title()})"
        names.append(name)
    return list(dict.fromkeys(names)) or ["Liquid"]


def _build(mat: bpy.types.Material, looks: list[Look]) -> None:
    """One Principled BSDF per distinct look; Mix Shaders pick the look of the point's ``material``."""
    if bpy.app.version < (5, 0, 0):  # 5.0 always uses nodes and deprecates the flag
        mat.use_nodes = True
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    nodes.clear()
    out = nodes.new("ShaderNodeOutputMaterial")
    distinct = list(dict.fromkeys(looks))
    shaders = []
    for k, lk in enumerate(distinct):
        bsdf = nodes.new("ShaderNodeBsdfPrincipled")
        bsdf.location = (-600, 400 - 700 * k)
        bsdf.label = ", ".join(str(i) for i, other in enumerate(looks) if other == lk)
        _set_look(bsdf, lk)
        if lk.glow is not None:
            _glow(mat.node_tree, bsdf, lk.glow)
        shaders.append(bsdf.outputs["BSDF"])
    shader = shaders[0]
    if len(distinct) > 1:
        attr = nodes.new("ShaderNodeAttribute")
        attr.attribute_type = 'GEOMETRY'
        attr.attribute_name = ATTRIBUTE
        attr.location = (-1200, 0)
        fac_out = next(o for o in attr.outputs if o.name in ("Fac", "Factor"))  # renamed in 5.0
        for k, lk in enumerate(distinct[1:], start=1):
            mix = nodes.new("ShaderNodeMixShader")
            mix.location = (-300 + 200 * k, 0)
            links.new(_selects(mat.node_tree, fac_out, [i for i, other in enumerate(looks) if other == lk], k),
                      mix.inputs["Fac"])
            links.new(shader, mix.inputs[1])
            links.new(shaders[k], mix.inputs[2])
            shader = mix.outputs["Shader"]
    out.location = (-100 + 200 * len(distinct), 0)
    links.new(shader, out.inputs["Surface"])
    first = looks[0]
    mat.diffuse_color = (*first.color, 1.0)  # the Solid-mode viewport colour
    mat.roughness = first.roughness
    if any(lk.transmission > 0 for lk in looks) and hasattr(mat, "use_raytrace_refraction"):
        mat.use_raytrace_refraction = True  # EEVEE refracts only with it


def _selects(tree: bpy.types.NodeTree, value: bpy.types.NodeSocket, indices: list[int], row: int):
    """A 0/1 socket: 1 where ``value`` is one of ``indices`` (integers; Compare with epsilon 0.5, summed)."""
    total = None
    for j, index in enumerate(indices):
        eq = tree.nodes.new("ShaderNodeMath")
        eq.operation = 'COMPARE'
        eq.location = (-900 + 150 * j, -300 * row)
        tree.links.new(value, eq.inputs[0])
        eq.inputs[1].default_value = float(index)
        eq.inputs[2].default_value = 0.5
        if total is None:
            total = eq.outputs[0]
        else:
            add = tree.nodes.new("ShaderNodeMath")
            add.operation = 'ADD'
            add.location = (-900 + 150 * j, -300 * row - 150)
            tree.links.new(total, add.inputs[0])
            tree.links.new(eq.outputs[0], add.inputs[1])
            total = add.outputs[0]
    return total


def _glow(tree: bpy.types.NodeTree, bsdf: bpy.types.Node, glow: tuple[float, float, float]) -> None:
    """``bsdf`` emits by the point's temperature (°C, the replay's ``SHADER_TEMPERATURE``): Blackbody at
    T + 273.15 K, strength mapped from
    glow[0]..glow[1] °C to 0..glow[2] (clamped)."""
    nodes, links = tree.nodes, tree.links
    x, y = bsdf.location
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_type = 'GEOMETRY'
    attr.attribute_name = SHADER_TEMPERATURE
    attr.location = (x - 800, y - 300)
    fac = next(o for o in attr.outputs if o.name in ("Fac", "Factor"))  # renamed in 5.0
    kelvin = nodes.new("ShaderNodeMath")
    kelvin.operation = 'ADD'
    kelvin.inputs[1].default_value = 273.15
    kelvin.location = (x - 600, y - 250)
    links.new(fac, kelvin.inputs[0])
    body = nodes.new("ShaderNodeBlackbody")
    body.location = (x - 400, y - 250)
    links.new(kelvin.outputs[0], body.inputs["Temperature"])
    links.new(body.outputs["Color"], bsdf.inputs["Emission Color"])
    strength = nodes.new("ShaderNodeMapRange")
    strength.clamp = True
    strength.location = (x - 400, y - 450)
    for name, value in zip(("From Min", "From Max", "To Min", "To Max"), (glow[0], glow[1], 0.0, glow[2])):
        strength.inputs[name].default_value = value
    links.new(fac, strength.inputs["Value"])
    links.new(strength.outputs["Result"], bsdf.inputs["Emission Strength"])


def _set_look(bsdf: bpy.types.Node, lk: Look) -> None:
    i = bsdf.inputs
    i["Base Color"].default_value = (*lk.color, 1.0)
    i["Roughness"].default_value = lk.roughness
    i["IOR"].default_value = lk.ior
    i["Transmission Weight"].default_value = lk.transmission
    i["Subsurface Weight"].default_value = lk.subsurface
    i["Subsurface Radius"].default_value = lk.subsurface_radius
    i["Subsurface Scale"].default_value = lk.subsurface_scale
    i["Coat Weight"].default_value = lk.coat
    i["Coat Roughness"].default_value = lk.coat_roughness
    i["Specular IOR Level"].default_value = lk.specular
