"""Errors that name the Blender object and the setting, from the core's JSON paths.

The core's validation names a field of the scene file (``materials[1].params.kinematic_viscosity:
must be at least 0``); the export records which object each part of the file came from
(``origins``), and :func:`explain` turns the path into the object and the setting's label as the
panel shows it (``Honey: Viscosity: must be at least 0``). Main thread only, like all bpy.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import bpy

from ...core.errors import InputError
from .. import properties as props


class ExportError(InputError):
    """Bad Blender setup; ``where`` is the object name (and the setting, if one)."""


def explain(exc: InputError, origins: dict[str, str], cache_root: Path | None = None,
            domain_name: str = "") -> ExportError:
    """Turn a core InputError (JSON path) into one naming the Blender object and setting."""
    where = exc.where
    if cache_root is not None and where.startswith(str(cache_root)):
        return ExportError(f"{domain_name}: Cache Directory", exc.message)
    parts = re.findall(r"[A-Za-z_$]+(?:\[\d+\])?", where)
    obj = None
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in origins:
            obj = origins[key]
            break
    if obj is None:
        return ExportError(where, exc.message)
    # The last path component names the setting, unless the error is about a whole item.
    last = parts[-1] if parts else ""
    whole_item = re.fullmatch(r"(materials|sources|colliders)\[\d+\]", last) is not None
    in_material = parts[0].startswith("materials[")
    return ExportError(obj if whole_item or not last else f"{obj}: {_label(last, obj if in_material else '')}",
                       exc.message)


def _label(key: str, material_of: str = "") -> str:
    """The UI label of setting ``key``; ``material_of``: the object whose material the error is in.

    Two models may declare the same name with different labels: the object's own model is asked
    first, then every model (material paths) or the other settings first (other paths).
    """
    key = re.sub(r"\[\d+\]$", "", key)
    models = [props.by_name(spec.parameters) for spec in props.SOLVERS.values()]
    others = [props.by_name(props.SURFACE_PARAMETERS), props.by_name(props.SIMULATION_PARAMETERS),
              props.by_name(props.TOP_PARAMETERS), props.by_name(props.COMMON_PARAMETERS),
              props.by_name(props.MESH_PARAMETERS)]
    tables = [*_own_model_table(material_of), *models, *others] if material_of else [*others, *models]
    for table in tables:
        if key in table:
            return table[key].ui_label
    return key


def _own_model_table(name: str) -> list[dict]:
    """The parameters of the model the named object uses, if it still exists (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return []
    ob = bpy.data.objects.get(name)
    model = ob.sph.material.model if ob is not None else ""
    return [props.by_name(props.SOLVERS[model].parameters)] if model in props.SOLVERS else []
