"""Property values as the scene file stores them: as typed, in metres, materials as preset and overrides.

Blender stores floats as float32 (0.05 reads back as 0.0500000007): :func:`typed_value` rounds
them to what was typed, so the scene file and the stored cache compare equal across exports.
Lengths and speeds Blender shows in scene units are scaled to metres (:func:`to_metres`). A
material is its model, its preset and the values that differ from the preset; the panel's
Derived constants read the same values as the model's typed ``Params``
(:func:`material_params`). Main thread only, like all bpy.
"""

from __future__ import annotations

from ...core.colliders import COLLIDERS
from ...core.scene.params import resolve, typed
from ...core.scene.scene_file import DOMAIN_PARAMETERS
from ...core.sources.emission import INFLOW_KEY_PARAMETERS, SOURCES
from .. import migrate
from .. import properties as props
from .errors import ExportError


def typed_value(value):
    """Blender stores floats as float32: 0.05 reads back as 0.0500000007. Round to what was typed."""
    if isinstance(value, float):
        return float(f"{value:.7g}")
    if hasattr(value, "__len__") and not isinstance(value, str):
        return [typed_value(float(v)) for v in value]
    return value


def spacing(domain) -> float:
    """The Domain's particle spacing as typed (metres)."""
    return typed_value(domain.sph.domain.particle_spacing)


def unit_scale(scene, domain) -> float:
    """Metres per Blender unit for the bake: the scene's Unit Scale (Scene > Units) when the Domain's
    Use Unit Scale is on and the scene has a unit system (Blender applies no scale without one), else 1."""
    u = scene.unit_settings
    if not domain.sph.domain.use_unit_scale or u.system == 'NONE':
        return 1.0
    return typed_value(float(u.scale_length))  # as typed: float32 0.01 reads 0.00999999978


def _scaled(p) -> bool:
    """Whether Blender shows ``p`` in scene units: lengths, and velocity vectors (VELOCITY subtype).

    Gravity (m/s²) is not scaled: -9.81 is the Earth's in every unit scale (Blender shows it in scene
    units, but an artist modelling in centimetres means real gravity). Rates (m³/s), speeds like
    max_speed (plain numbers in the panel) and material parameters are typed in SI.
    """
    return p.unit == "m" or (p.kind == "vector" and p.unit == "m/s")


def _scale_fields(item: dict, params, u: float) -> None:
    for p in params:
        if _scaled(p) and p.name in item:
            v = item[p.name]
            item[p.name] = typed_value([float(x) * u for x in v] if isinstance(v, list) else float(v) * u)


def to_metres(data: dict, u: float) -> None:
    """Scale the lengths and speeds of an exported scene dict from scene units to metres, in place.

    The mesh files are scaled when written (``write_mesh``); materials have no length parameter.
    """
    from ...core.colliders import COMMON_PARAMETERS

    _scale_fields(data, props.TOP_PARAMETERS, u)
    _scale_fields(data["domain"], DOMAIN_PARAMETERS, u)
    _scale_fields(data["surface"], props.SURFACE_PARAMETERS, u)
    for item in data["sources"]:
        _scale_fields(item, SOURCES[item["type"]], u)
        for key in item.get("keyframes", []):
            _scale_fields(key, INFLOW_KEY_PARAMETERS, u)
    for item in data["colliders"] + data.get("outflows", []):
        params = COMMON_PARAMETERS + COLLIDERS[item["type"]].parameters
        _scale_fields(item, params, u)
        for key in item.get("keyframes", []):
            _scale_fields(key, params, u)


def values(group, params) -> dict:
    return {p.name: typed_value(getattr(group, p.name)) for p in params}


def material_item(ob) -> dict:
    """The scene file's material of a Fluid or Inflow: its name, model, preset and the values that
    differ from the preset. Upgrades settings of older versions first; raises ExportError."""
    m = ob.sph.material
    # Files from before per-model groups: the farm command and appended objects may have missed
    # the load handler. A no-op for current files.
    migrate.upgrade(m)
    if migrate.pending(m):  # linked from an old file: its values cannot be moved here
        raise ExportError(ob.name, "is linked from a file saved by an older version of the add-on; open and save "
                                   "that file with this version first")
    model = m.model
    if model not in props.SOLVERS:
        raise ExportError(f"{ob.name}: Model", f"{model or 'the stored model'!r} is not a material model of this "
                                               f"version; choose one of {', '.join(props.SOLVERS)}")
    return {"name": ob.name, "model": model, **_preset_and_overrides(props.model_group(m, model), model)}


def _preset_and_overrides(group, model: str) -> dict:
    """A model group's preset and the values that differ from it (the scene file stores only those)."""
    preset = props.preset_of(group)
    current = values(group, props.SOLVERS[model].parameters)
    base = {k: typed_value(v) for k, v in props.preset_values(model, preset).items()}
    return {"preset": preset, "params": {k: v for k, v in current.items() if v != typed_value(base.get(k))}}


def material_params(ob) -> tuple[str, object]:
    """``ob``'s material model and its typed ``Params``, as a bake would read them from the scene file.

    Reads only (a panel calls it while drawing): an object still holding settings of an older
    version gives the values its group holds now. Raises ExportError for a model this version
    does not have, InputError for a value the model refuses.
    """
    m = ob.sph.material
    model = m.model
    if model not in props.SOLVERS:
        raise ExportError(f"{ob.name}: Model", f"{model or 'the stored model'!r} is not a material model of this "
                                               "version")
    spec = props.SOLVERS[model]
    item = _preset_and_overrides(props.model_group(m, model), model)
    resolved = resolve(spec.parameters, item["params"], f"{ob.name}: {props.model_label(model)}",
                       base=props.preset_values(model, item["preset"]))
    return model, typed(spec.Params, resolved)
