"""The replay's default look: a shader material per material preset, picked per point by ``material``.

A bake's particles and surface vertices carry the integer attribute ``material``: the index
of the particle's material in the baked scene's ``materials`` list (the Fluid objects by name,
then the Inflows; ``export.build_scene``). The material made here reads that attribute and
gives each index the look of its preset, so water and honey in one bake shade as water and
honey. The looks are the models' declarations (a model's ``looks``, bpy-free data beside its presets
in ``core/models/presets.py``, where what each look is chosen for is written down); this module only
turns them into node trees.

Presets belong to a model (two models may each have a ``water``), so a look is keyed by the
model and the preset. A preset whose model declares no look for it (a model added later, a
plug-in's) gets the neutral light-blue glossy look the replay used before (``NEUTRAL_LOOK``),
never an error. The material is built once per list of (model, preset) pairs and shared; the
replay uses it only where the artist set no material of their own (``replay.ensure_replay``).
Materials made up to commit 45ad05e are keyed by their presets alone (every bake was viscoelastic
then), and jelly and rubber were viscoelastic presets until they moved to the elastic model
(``moved_presets``): :func:`material_for` finds a material under those older keys and re-keys it,
so a file saved then keeps its material, and a bake made then (its cache names the old model)
still gets the preset's look. Main thread only, like all bpy.
"""

from __future__ import annotations

from pathlib import Path

import bpy

from ..core.cache.jsonfile import read_json
from ..core.errors import InputError
from ..core.models import SOLVERS
from ..core.models.base import NEUTRAL_LOOK, Look
from .replay.frames import SHADER_TEMPERATURE

# On materials we make (the replay may replace them; never one the artist made): the looks' key.
TAG = "sph_replay_material"
ATTRIBUTE = "material"
# The model of a scene file's material that names none (core/scene/scene_file.py).
SCENE_DEFAULT_MODEL = "viscoelastic"
# The only model of the versions whose materials are keyed by their presets alone (up to 45ad05e).
_PRESET_KEYED_MODEL = "viscoelastic"


def _declared(model: str, preset: str) -> Look | None:
    """The look registered model ``model`` declares for ``preset``; None without one."""
    return getattr(SOLVERS.get(model), "looks", {}).get(preset)


def look(model: str, preset: str) -> Look:
    """The look of ``model``'s ``preset`` (of the model it moved to, for a preset ``model`` gave away);
    the neutral one for a preset (or model) without a look."""
    found = _declared(model, preset)
    if found is None:
        moved = getattr(SOLVERS.get(model), "moved_presets", {}).get(preset)
        found = _declared(moved, preset) if moved else None
    return found or NEUTRAL_LOOK


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
    _build(mat, [look(model, preset) for model, preset in looks] or [NEUTRAL_LOOK])
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
