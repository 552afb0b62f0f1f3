"""Upgrade material settings saved before per-model groups (layout 1) to layout 2.

Layout 1 (up to commit 37ca900) stored every material parameter and the preset
directly on ``ob.sph.material``, as ID properties named after the parameters;
the preset was an enum index into the one list of presets. Layout 2 keeps only
the model selector and the initial velocity there and gives each model its own
group (``ob.sph.material.viscoelastic``) with its parameters and its presets.

Blender still loads the old ID properties; nothing reads them any more. On
file load (a persistent ``load_post`` handler) and again before every export
(the farm command and appended objects may skip the handler) they are moved
into the group of the model layout 1 had, and the material is marked
``_layout = 2``. Marked materials are skipped at the cost of one lookup, so
calling :func:`upgrade` twice changes nothing. Main thread only, like all bpy.
"""

from __future__ import annotations

import logging

import bpy
from bpy.app.handlers import persistent

from ..core.solvers import SOLVERS

log = logging.getLogger(__name__)

LAYOUT = 2
MARK = "_layout"

# Frozen on purpose: this is what layout-1 files hold, whatever the model declares today. Layout 1
# existed only with this model, so these values belong to it.
_LAYOUT1_MODEL = "viscoelastic"
_LAYOUT1_PARAMETERS = ("stiffness", "repulsion_factor", "rest_density", "viscosity", "stiff_viscosity",
                       "viscous_stretching", "springs", "spring_stiffness", "plasticity", "yield_ratio")
_LAYOUT1_KEYS = (*_LAYOUT1_PARAMETERS, "preset")
# Layout 1 stored no "preset" while the preset was its default.
_LAYOUT1_DEFAULT_PRESET = "water"
# Set on the material when layout 1 first filled it from a preset; layout 2 keeps it per model group.
INITIALISED = "_initialised"

# Names a model must not take: its pointer on ob.sph.material would clash with an old value.
RESERVED_NAMES = frozenset((*_LAYOUT1_KEYS, MARK, INITIALISED))


def _plain(value):
    """An ID property value as a plain Python value that can be stored again elsewhere."""
    if hasattr(value, "to_list"):
        return value.to_list()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def is_current(material) -> bool:
    """True when ``ob.sph.material`` is marked as layout 2 (or newer)."""
    return material.get(MARK, 1) >= LAYOUT


def mark_current(material) -> None:
    """Mark a material as layout 2: a new Fluid or Inflow has no old values to move."""
    if not is_current(material):
        material[MARK] = LAYOUT


def pending(material) -> bool:
    """True when ``ob.sph.material`` still holds layout-1 values (e.g. an object appended from an old file)."""
    return not is_current(material) and any(k in material for k in (*_LAYOUT1_KEYS, INITIALISED))


def upgrade(material, keep_model: bool = False) -> bool:
    """Move layout-1 values of ``ob.sph.material`` into its model's group; True if anything moved.

    Cheap and idempotent: a marked material, or one that layout 1 never filled, is left as it is.
    Linked (library) objects cannot be written and are left too. The model selector is set to
    the model the values belong to, unless ``keep_model`` (the artist has just chosen one).
    """
    if is_current(material):
        return False
    keys = set(material.keys())
    legacy = [k for k in _LAYOUT1_KEYS if k in keys]
    if not legacy and INITIALISED not in keys:
        return False
    ob = material.id_data
    if getattr(ob, "library", None) is not None:
        log.warning("%s is linked from %s and keeps its old material settings until upgraded there",
                    ob.name, ob.library.filepath)
        return False
    spec = SOLVERS.get(_LAYOUT1_MODEL)
    if spec is None:
        log.warning("%s: the %s model is gone; its old settings are dropped", ob.name, _LAYOUT1_MODEL)
        group, declared = None, set()
    else:
        group = getattr(material, _LAYOUT1_MODEL)
        declared = {p.name for p in spec.parameters} | ({"preset"} if spec.presets else set())
    for key in legacy:
        value = _plain(material[key])
        del material[key]
        if key in declared:
            # A value already in the group was set in the new panel (an object appended from an old
            # file and edited before any load or bake): the newer edit wins.
            if key not in group:
                # Raw ID properties, not attributes: an enum is stored as its index (the same lists
                # in both layouts) and setting ``preset`` as an attribute would re-apply the preset.
                group[key] = value
        else:
            log.warning("%s: old material setting %s=%r has no place in the %s model; dropped",
                        ob.name, key, value, _LAYOUT1_MODEL)
    if group is not None:
        if "preset" in declared and "preset" not in keys and "preset" not in group \
                and _LAYOUT1_DEFAULT_PRESET in spec.presets:
            group["preset"] = sorted(spec.presets).index(_LAYOUT1_DEFAULT_PRESET)
        # Layout 1 had filled the values from a preset already: do not fill them again.
        group[INITIALISED] = True
        if not keep_model:
            # Raw: a stored enum index; assigning the attribute would run the model's update.
            material["model"] = list(SOLVERS).index(_LAYOUT1_MODEL)
    if INITIALISED in keys:
        del material[INITIALISED]
    material[MARK] = LAYOUT
    return True


def upgrade_all() -> int:
    """Upgrade every local object of the open file; the number of objects changed."""
    changed = 0
    for ob in bpy.data.objects:
        if ob.library is None and upgrade(ob.sph.material):
            changed += 1
    return changed


@persistent
def _upgrade_on_load(*_args) -> None:
    changed = upgrade_all()
    if changed:
        log.info("moved the material settings of %d objects into their model's settings", changed)


def register() -> None:
    if _upgrade_on_load not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(_upgrade_on_load)


def unregister() -> None:
    while _upgrade_on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_upgrade_on_load)
