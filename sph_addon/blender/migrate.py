"""Upgrade settings saved by older versions: material layout 1 to layout 2, enums by position.

Layout 1 (up to commit 37ca900) stored every material parameter and the preset
directly on ``ob.sph.material``, as ID properties named after the parameters;
the preset was an enum index into the one list of presets. Layout 2 keeps only
the model selector and the initial velocity there and gives each model its own
group (``ob.sph.material.viscoelastic``) with its parameters and its presets.
Blender still loads the old ID properties; nothing reads them any more: they
are moved into the group of the model layout 1 had, and the material is marked
``_layout = 2``.

Blender stores an enum as its item's number. Up to now the items were numbered
by position (the model selector, the presets, ``choice`` parameters such as
``springs``, a Collider's ``mode``, an Inflow's ``shape``, the surface
``field``); now each item has a stable number derived from its identifier
(``core.blender_names.stable_number``, always >= 2**30), so a stored number that is a
valid position is one: :data:`POSITIONAL` says, frozen, which item each
position meant, and it is rewritten as that item's stable number. The value
itself tells old from new, so files saved with layout 2 (never released) and
objects with no material stamp (Colliders, Domains) are translated the same
way, with no new stamp.

Parameters a model no longer declares (its ``removed_parameters``, the one list the scene file
reads too: the viscoelastic model's ``stiffness``, ``repulsion_factor``, ``rest_density``,
``viscosity``, ``viscous_stretching`` and ``spring_stiffness``, replaced by physical units in scene
format 2) may still be stored, on the material (layout 1) or in the model's group. Their values
cannot be converted (the new parameters measure something else); they are dropped, with one console
note (a logged warning) per object naming them and what replaced them, in the panel's words
(:func:`removed`). The scene file refuses them instead: only the add-on drops values silently enough
to need the note.

Presets a model gave to another (its ``moved_presets``: the viscoelastic model's
jelly and rubber are the elastic model's soft solids now) may still be stored in
the old model's group, as the stable number of an identifier that is no longer
one of its items. The material then takes the model that has the preset now, with
that preset chosen in its group (its values filled as choosing it does), and keeps
its role; one console note per object says so. An Inflow keeps the old model where
the new one's particles keep their shape (``keeps_shape``: an Inflow cannot emit
them): its values stay, under the old model's default preset. A group that is not
the material's model only loses the preset it no longer has.

Domains saved before *Render Particles* existed rendered their particle object
unless the artist hid it by hand. Such a Domain stores no value for the setting;
:func:`upgrade_render_particles` stores what its particle object does, so the file
renders what it rendered (and a particle object the artist hid stays hidden). A
Domain of this version with the setting untouched reads the same value back from
its particle object (hidden), so the rule is safe to apply to any file.

On file load (a persistent ``load_post`` handler) every object is upgraded;
before every export each object of the Domain is (the farm command and
appended objects may skip the handler). An object with nothing old is skipped at the
cost of a few lookups, so calling :func:`upgrade` twice changes nothing. Main
thread only, like all bpy.
"""

from __future__ import annotations

import logging

import bpy
from bpy.app.handlers import persistent

from ..core.models import SOLVERS
from ..core.scene.blender_names import stable_number
from .model_presets import model_label, preset_of, preset_values
from .replay import objects as replay

log = logging.getLogger(__name__)

LAYOUT = 2
MARK = "_layout"

# Frozen on purpose: this is what layout-1 files hold, whatever the model declares today. Layout 1
# existed only with this model, so these values belong to it.
_LAYOUT1_MODEL = "viscoelastic"
# The model selector's default in every version so far: files that never changed it store nothing.
DEFAULT_MODEL = _LAYOUT1_MODEL
_LAYOUT1_PARAMETERS = ("stiffness", "repulsion_factor", "rest_density", "viscosity", "stiff_viscosity",
                       "viscous_stretching", "springs", "spring_stiffness", "plasticity", "yield_ratio")
_LAYOUT1_KEYS = (*_LAYOUT1_PARAMETERS, "preset")
# Layout 1 stored no "preset" while the preset was its default.
_LAYOUT1_DEFAULT_PRESET = "water"
# Set on the material when layout 1 first filled it from a preset; layout 2 keeps it per model group.
INITIALISED = "_initialised"

# Names a model must not take: its pointer on ob.sph.material would clash with an old value. The
# check at registration reads them from core.blender_names.MATERIAL_GROUP_NAMES (no bpy there);
# tests/blender/test_blender_names.py holds the two lists together.
RESERVED_NAMES = frozenset((*_LAYOUT1_KEYS, MARK, INITIALISED))

# Frozen on purpose: the items in the order the versions up to layout 2 numbered them (their
# positions are what those files hold), whatever the declarations say today. Keyed by the path
# of the group under ``ob.sph`` and the property name. Only add entries; never edit one.
_OLD_PRESETS = ("honey", "jelly", "mud", "plasticine", "slime", "water")  # sorted, as the menu was
_OLD_SPRINGS = ("none", "dynamic", "mould")  # Parameter("springs", choices=...) at 37ca900
POSITIONAL: dict[tuple[str, str], tuple[str, ...]] = {
    ("material", "model"): (_LAYOUT1_MODEL,),
    (f"material.{_LAYOUT1_MODEL}", "preset"): _OLD_PRESETS,
    (f"material.{_LAYOUT1_MODEL}", "springs"): _OLD_SPRINGS,
    ("collider", "mode"): ("solid", "shell"),
    ("inflow", "shape"): ("disc", "rectangle"),
    ("domain.surface", "field"): ("clavet", "density"),
}
# Layout 1 kept the model's enums on ob.sph.material itself, numbered the same way.
_LAYOUT1_ENUMS = {"preset": _OLD_PRESETS, "springs": _OLD_SPRINGS}


def removed(model: str) -> dict[str, str]:
    """Parameters ``model`` no longer declares (its ``removed_parameters``): name -> what replaced it, in
    the panel's words (a ``Removed``'s ``panel``; a plain advice serves as it is). Empty for a model that
    is not registered."""
    spec = SOLVERS.get(model)
    return {name: getattr(advice, "panel", advice) for name, advice in getattr(spec, "removed_parameters", {}).items()}


def _plain(value):
    """An ID property value as a plain Python value that can be stored again elsewhere."""
    if hasattr(value, "to_list"):
        return value.to_list()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def is_current(material) -> bool:
    """True when ``ob.sph.material`` is marked as layout 2 (or newer): no layout-1 values left on it."""
    return material.get(MARK, 1) >= LAYOUT


def mark_current(material) -> None:
    """Mark a material as layout 2: a new Fluid or Inflow has no old values to move."""
    if not is_current(material):
        material[MARK] = LAYOUT


def _holds_layout1(material) -> bool:
    return not is_current(material) and any(k in material for k in (*_LAYOUT1_KEYS, INITIALISED))


def _group(settings, path: str):
    """The group at ``path`` under ``ob.sph``; None when this version has no such group (a removed model)."""
    group = settings
    for name in path.split("."):
        group = getattr(group, name, None)
        if group is None:
            return None
    return group


def _is_position(value, table) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(table)


def _moved_from(path: str, name: str):
    """The presets the model of the group at ``path`` moved to other models (``moved_presets``)."""
    model = path.removeprefix("material.")
    if name != "preset" or model == path or model not in SOLVERS:
        return {}
    return getattr(SOLVERS[model], "moved_presets", {})


def _positions(settings) -> list[tuple[object, str, tuple[str, ...]]]:
    """The enums under ``ob.sph`` that still hold a position: (group, property name, old items)."""
    found = []
    for (path, name), table in POSITIONAL.items():
        group = _group(settings, path)
        if group is not None and _is_position(group.get(name), table):
            found.append((group, name, table))
    return found


def _set_by_identifier(group, name: str, identifier: str, ob, moved=()) -> None:
    """Store enum ``name`` as the item ``identifier`` (its stable number), raw: no update runs.

    An item this version no longer has is dropped with a warning (the property reads its default),
    unless it is in ``moved`` (a preset another model has now): its stable number is stored, and
    :func:`upgrade` gives the material that model (:func:`_moved_presets`).
    """
    items = group.bl_rna.properties[name].enum_items
    if identifier in items:
        group[name] = items[identifier].value
    elif identifier in moved:
        group[name] = stable_number(identifier)
    else:
        log.warning("%s: old setting %s=%r is not a choice of this version; the default is used",
                    ob.name, name, identifier)
        if name in group:
            del group[name]


def pending(material) -> bool:
    """True when the object of ``ob.sph.material`` still holds old values: layout-1 values on the
    material (e.g. an object appended from an old file), enums stored by position or a preset its
    model gave to another."""
    return (_holds_layout1(material) or bool(_positions(material.id_data.sph))
            or bool(_moved_presets(material)))


def _move_layout1(material, keep_model: bool, dropped: dict[str, object]) -> None:
    """Move layout-1 values into the model's group; removed parameters go to ``dropped`` (name -> value)."""
    ob = material.id_data
    keys = set(material.keys())
    removed_here = removed(_LAYOUT1_MODEL)
    spec = SOLVERS.get(_LAYOUT1_MODEL)
    if spec is None:
        log.warning("%s: the %s model is gone; its old settings are dropped", ob.name, _LAYOUT1_MODEL)
        group, declared = None, set()
    else:
        group = getattr(material, _LAYOUT1_MODEL)
        declared = {p.name for p in spec.parameters} | ({"preset"} if spec.presets else set())
    for key in (k for k in _LAYOUT1_KEYS if k in keys):
        value = _plain(material[key])
        del material[key]
        if key in removed_here and key not in declared:
            dropped[key] = value
        elif key not in declared:
            log.warning("%s: old material setting %s=%r has no place in the %s model; dropped",
                        ob.name, key, value, _LAYOUT1_MODEL)
        elif key in group:
            # Already set in the new panel (an object appended from an old file and edited before
            # any load or bake): the newer edit wins.
            pass
        elif key in _LAYOUT1_ENUMS:
            # Stored by position in the old list: set as the item it meant.
            if _is_position(value, _LAYOUT1_ENUMS[key]):
                _set_by_identifier(group, key, _LAYOUT1_ENUMS[key][value], ob,
                                   spec.moved_presets if key == "preset" else ())
            else:
                log.warning("%s: old material setting %s=%r is no known choice; dropped", ob.name, key, value)
        else:
            # Raw ID properties, not attributes: setting ``preset`` as an attribute would re-apply
            # the preset over the overrides.
            group[key] = value
    if group is not None:
        if "preset" in declared and "preset" not in keys and "preset" not in group:
            _set_by_identifier(group, "preset", _LAYOUT1_DEFAULT_PRESET, ob)
        # Layout 1 had filled the values from a preset already: do not fill them again.
        group[INITIALISED] = True
        if not keep_model:
            # Raw: assigning the attribute would run the model's update.
            _set_by_identifier(material, "model", _LAYOUT1_MODEL, ob)
    if INITIALISED in keys:
        del material[INITIALISED]
    material[MARK] = LAYOUT


def upgrade(material, keep_model: bool = False) -> bool:
    """Bring the object of ``ob.sph.material`` to the current layout; True if anything changed.

    Moves layout-1 values of the material into its model's group, and rewrites every enum of the
    object's settings stored by position as its item's stable number. Cheap and idempotent: an
    object holding neither is left as it is. Linked (library) objects cannot be written and are
    left too. The model selector is set to the model layout-1 values belong to, unless
    ``keep_model`` (the artist has just chosen one).
    """
    settings = material.id_data.sph
    legacy = _holds_layout1(material)
    if (not legacy and not _positions(settings) and not _moved_presets(material) and not _removed_values(material)
            and not _new_parameters(material)):
        return False
    ob = material.id_data
    if getattr(ob, "library", None) is not None:
        if legacy or _positions(settings) or _moved_presets(material):
            log.warning("%s is linked from %s and keeps its old settings until upgraded there",
                        ob.name, ob.library.filepath)
        # Removed parameters alone are harmless: nothing reads them (the export reads declared ones).
        return False
    dropped: dict[str, dict[str, object]] = {}  # model -> removed parameter -> value
    if legacy:
        _move_layout1(material, keep_model, dropped.setdefault(_LAYOUT1_MODEL, {}))
    for (path, name), table in POSITIONAL.items():
        group = _group(settings, path)
        if group is not None and _is_position(group.get(name), table):
            _set_by_identifier(group, name, table[group[name]], ob, _moved_from(path, name))
    for group, model, preset, target in _moved_presets(material):
        _move_preset(material, group, model, preset, target, keep_model)
    for group, model, name in _removed_values(material):
        dropped.setdefault(model, {}).setdefault(name, _plain(group[name]))
        del group[name]
    for group, model, name in _new_parameters(material):
        setattr(group, name, _preset_value(group, model, name))
    if any(dropped.values()):
        _note_dropped(ob, dropped)
    return True


def _moved_presets(material) -> list[tuple[object, str, str, str]]:
    """Model groups storing a preset their model gave to another: (group, model, preset, new model).

    The group stores the preset's stable number, no longer an item of its menu (it reads ``""``).
    """
    found = []
    for model, spec in SOLVERS.items():
        moved = getattr(spec, "moved_presets", {})
        group = getattr(material, model, None) if moved else None
        stored = group.get("preset") if group is not None else None
        if stored is None:
            continue
        found += [(group, model, preset, target) for preset, target in moved.items()
                  if preset not in spec.presets and stored == stable_number(preset)]
    return found


def _move_preset(material, group, model: str, preset: str, target: str, keep_model: bool) -> None:
    """Give the material the model ``preset`` moved to, with that preset chosen there; one note.

    The old group loses the preset (its menu reads its default); its values stay, unused unless
    the artist chooses that model again. The material keeps its model where it is not ``model``
    (another model was chosen), ``keep_model`` (the artist has just chosen it), the new model or
    preset is not registered, or the object is an Inflow and the new model's particles keep their
    shape (an Inflow cannot emit them): the old values then stay the material's, under the
    default preset.
    """
    ob = material.id_data
    del group["preset"]
    spec = SOLVERS.get(target)
    where = (f"preset {preset!r} of the {model_label(model)} model is now the "
             f"{model_label(target) if spec is not None else target} model's")
    if material.model != model:
        log.warning("%s: %s; the %s settings (not the material's model) keep their values under preset %r",
                    ob.name, where, model_label(model), group.preset)
        return
    why = ("the model was just chosen" if keep_model
           else "this version does not have it" if spec is None or preset not in spec.presets
           else "an Inflow cannot emit it" if ob.sph.role == 'INFLOW' and getattr(spec, "keeps_shape", False)
           else "")
    if why:
        log.warning("%s: %s (%s); the material stays %s with the values the preset had, under preset %r",
                    ob.name, where, why, model_label(model), group.preset)
        return
    _set_by_identifier(material, "model", target, ob)  # raw: the selector's update would upgrade again
    new = getattr(material, target)
    new[INITIALISED] = True
    new.preset = preset  # its update fills the values, as choosing the preset does
    log.warning("%s: %s: the material now uses the %s model with preset %r (the %s settings are kept in "
                "their own group)", ob.name, where, model_label(target), preset, model_label(model))


def _new_parameters(material) -> list[tuple[object, str, str]]:
    """Parameters declared since a model's group was filled from its preset: (group, model, name).

    A filled group stores every parameter it had (``apply_preset`` writes them all); one it lacks
    was added by a later version and reads as the declared default, which is not the preset's value
    (honey saved before ``kinematic_viscosity`` existed would export as inviscid). They take the
    preset's value, as if the preset had been applied with them.
    """
    found = []
    for model, spec in SOLVERS.items():
        group = getattr(material, model, None)
        if group is None or not group.get(INITIALISED):
            continue
        found += [(group, model, p.name) for p in spec.parameters if p.name not in group]
    return found


def _preset_value(group, model: str, name: str):
    return preset_values(model, preset_of(group))[name]


def _removed_values(material) -> list[tuple[object, str, str]]:
    """Values of removed parameters stored in a model's group: (group, model, name)."""
    found = []
    for model in SOLVERS:
        group = getattr(material, model, None)
        if group is None:
            continue
        declared = group.bl_rna.properties
        found += [(group, model, name) for name in removed(model) if name in group and name not in declared]
    return found


def _show(value) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)


def _note_dropped(ob, dropped: dict[str, dict[str, object]]) -> None:
    """One console note for the object: which saved settings were dropped and what replaced each."""
    several = sum(1 for values in dropped.values() if values) > 1
    parts = [f"{f'{model} ' if several else ''}{name}={_show(value)}: {removed(model)[name]}"
             for model, values in dropped.items() for name, value in values.items()]
    log.warning("%s: material settings of an older version were dropped (they cannot be converted): %s",
                ob.name, "; ".join(parts))


RENDER_PARTICLES = "render_particles"


def upgrade_render_particles(ob) -> bool:
    """Store a Domain's *Render Particles* from its particle object when the file predates it.

    Raw ID property: the setting's update would touch the object it was read from. True if stored.
    """
    if ob.sph.role != 'DOMAIN' or ob.library is not None or RENDER_PARTICLES in ob.sph.domain:
        return False
    particles, _ = replay.find_replay(ob)
    if particles is None:
        return False  # never baked: the new default applies
    ob.sph.domain[RENDER_PARTICLES] = not particles.hide_render
    return True


USE_UNIT_SCALE = "use_unit_scale"


def upgrade_unit_scale(ob) -> bool:
    """Keep a Domain baked before *Use Unit Scale* existed in Blender units = metres.

    Until then the scene's unit scale was ignored. A baked Domain (it has replay objects) that
    stores no value for the setting predates it (every export of this version stores it), and
    in a scene whose unit scale is not 1 it gets the setting off: it bakes what it baked. Never
    baked, or at scale 1 (where the setting changes nothing), the new default applies. True if stored.
    """
    if ob.sph.role != 'DOMAIN' or ob.library is not None or USE_UNIT_SCALE in ob.sph.domain:
        return False
    particles, surface = replay.find_replay(ob)
    if particles is None and surface is None:
        return False
    scaled = [sc for sc in ob.users_scene
              if sc.unit_settings.system != 'NONE' and sc.unit_settings.scale_length != 1.0]
    if not scaled:
        return False
    ob.sph.domain[USE_UNIT_SCALE] = False
    return True


NORMALS = "normals"


def upgrade_surface_normals(ob) -> bool:
    """Keep normals in the surface files of a Domain baked before they were off by default.

    Until then every surface file carried ``nx ny nz``; without them the replay shades the mesh
    smooth itself, ~30 % faster per frame. A baked Domain (it has replay objects) that stores no
    value predates the change (every export of this version stores it) and keeps them; never
    baked, the new default applies. True if stored.
    """
    if ob.sph.role != 'DOMAIN' or ob.library is not None or NORMALS in ob.sph.domain.surface:
        return False
    particles, surface = replay.find_replay(ob)
    if particles is None and surface is None:
        return False
    ob.sph.domain.surface[NORMALS] = True
    return True


def upgrade_all() -> int:
    """Upgrade every local object of the open file (any role); the number of objects changed."""
    changed = 0
    for ob in bpy.data.objects:
        if ob.library is None and (upgrade(ob.sph.material) | upgrade_render_particles(ob)
                                   | upgrade_unit_scale(ob) | upgrade_surface_normals(ob)):
            changed += 1
    return changed


@persistent
def _upgrade_on_load(*_args) -> None:
    changed = upgrade_all()
    if changed:
        log.info("upgraded the settings of %d objects saved by an older version", changed)


def register() -> None:
    if _upgrade_on_load not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(_upgrade_on_load)


def unregister() -> None:
    while _upgrade_on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_upgrade_on_load)
