"""The names Blender accepts for what a material model declares, checked without Blender.

The extension builds its settings from the model registry when it registers
(``blender/properties.py``): each model becomes a pointer property named after
it on ``ob.sph.material`` and a property group class ``SPH_PG_material_<model>``;
each of its parameters becomes a property of that group; the model names, each
model's presets and each ``choice`` parameter's choices become enum items.
Blender refuses some of these names only there, inside ``register()`` of the
extension, where one bad plug-in model leaves the whole extension unregistered;
others it accepts but then shadows: a parameter named ``get`` or ``bl_rna``
registers and replaces the group's own method or type (measured with bpy 4.2.23,
4.5.4, 5.0.1, 5.1.0, 5.2.3 and 5.3.0). :func:`check_model` refuses them when the
model is registered (``models.register``), with the model, the parameter and
the rule in the message.

The rules:

* identifiers (model, parameter, preset and choice names) are ASCII letters,
  digits and underscores starting with a letter, and no Python keyword: the rule
  Blender applies to its own RNA identifiers (``rna_validate_identifier`` in
  ``makesrna``). A property starting with ``_`` is refused at registration, and
  the others are attributes scripts type (``ob.sph.material.viscoelastic.density``)
  or enum identifiers they compare with;
* a property name is at most 63 bytes (``MAX_IDPROP_NAME`` less its terminator:
  ``bpy.props`` raises "too long, max length is 63"), and so is a property group
  class name: a model name at most ``63 - len("SPH_PG_material_")`` bytes;
* no property name may be a member of Blender's ``PropertyGroup``
  (:data:`PROPERTY_GROUP_MEMBERS`) or a name the extension keeps on the same group
  (:data:`MATERIAL_GROUP_NAMES` for model names, :data:`MODEL_GROUP_NAMES` for
  parameter names);
* every enum stores its items by :func:`stable_number`: two items of one enum
  (two models, two presets of a model, two choices of a parameter) must not get
  the same number;
* an enum's default must be one of its items (a ``choice`` parameter's default
  among its choices), and an ``int`` parameter's default must fit Blender's
  32-bit signed integer: Blender refuses either at registration.
"""

from __future__ import annotations

import keyword
import re
import zlib
from collections.abc import Iterable

# Blender's largest ID property name and RNA class identifier, in bytes (MAX_IDPROP_NAME - 1).
MAX_NAME_BYTES = 63
# The class name of a model's settings group is this prefix and the model's name.
MODEL_CLASS_PREFIX = "SPH_PG_material_"
MAX_MODEL_NAME_BYTES = MAX_NAME_BYTES - len(MODEL_CLASS_PREFIX)

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

# Public members of bpy.types.PropertyGroup in every supported Blender (dir() without the
# underscore names, and its RNA properties name and rna_type), 4.2.23 to 5.3.0. A property of the
# same name replaces the member on the group. tests/blender/test_blender_names.py checks the
# running Blender against this list: a newer Blender's new member fails there first.
PROPERTY_GROUP_MEMBERS = frozenset((
    "as_pointer", "bl_rna", "bl_rna_get_subclass", "bl_rna_get_subclass_py", "driver_add", "driver_remove",
    "get", "id_data", "id_properties_clear", "id_properties_ensure", "id_properties_ui", "is_property_hidden",
    "is_property_overridable_library", "is_property_readonly", "is_property_set", "items", "keyframe_delete",
    "keyframe_insert", "keys", "name", "path_from_id", "path_from_module", "path_resolve", "pop",
    "property_overridable_library_set", "property_unset", "rna_ancestors", "rna_type", "type_recast", "values",
))

# What ``ob.sph.material`` holds besides one pointer per model: its own properties
# (blender/properties.py) and the ID properties files saved by add-on 0.1.0 up to commit 37ca900
# kept there (blender/migrate.py, layout 1: its parameters, its preset, the layout stamp).
MATERIAL_GROUP_NAMES = frozenset((
    "model", "initial_velocity", "initial_angular_velocity",
    "stiffness", "repulsion_factor", "rest_density", "viscosity", "stiff_viscosity", "viscous_stretching",
    "springs", "spring_stiffness", "plasticity", "yield_ratio", "preset", "_layout", "_initialised",
))
# What a model's own group holds besides its parameters: the menu of its presets.
MODEL_GROUP_NAMES = frozenset(("preset",))

_INT_MIN, _INT_MAX = -2**31, 2**31 - 1


def stable_number(identifier: str) -> int:
    """The number Blender stores for the enum item ``identifier``: the same in every version.

    A CRC-32 of the identifier folded into [2**30, 2**31): it fits Blender's signed int, and it
    never equals a small position, so ``blender/migrate.py`` can tell a number saved by position
    (older files) from a stable one by its value alone.
    """
    return (zlib.crc32(identifier.encode("utf-8")) & 0x3FFFFFFF) | 0x40000000


def identifier_problem(name: object) -> str | None:
    """Why ``name`` cannot be a Blender-facing identifier, or None."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        return ("must be ASCII letters, digits and underscores starting with a letter (Blender's rule for RNA "
                f"identifiers), got {name!r}")
    if keyword.iskeyword(name):
        return f"{name!r} is a Python keyword"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is {len(name.encode('utf-8'))} bytes long; Blender's property names hold at most {MAX_NAME_BYTES}"
    return None


def property_problem(name: object, taken: Iterable[str] = ()) -> str | None:
    """Why ``name`` cannot name a property of a property group holding ``taken`` too, or None."""
    problem = identifier_problem(name)
    if problem is not None:
        return problem
    if name in PROPERTY_GROUP_MEMBERS:
        return (f"{name!r} is a member of Blender's PropertyGroup ({', '.join(sorted(PROPERTY_GROUP_MEMBERS))}); "
                "a property of that name would replace it")
    if name in taken:
        return f"{name!r} is already used by the extension on the same group ({', '.join(sorted(taken))})"
    return None


def collisions(identifiers: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of ``identifiers`` that :func:`stable_number` maps to one number (Blender needs them unique)."""
    seen: dict[int, str] = {}
    found = []
    for identifier in identifiers:
        number = stable_number(identifier)
        if number in seen and seen[number] != identifier:
            found.append((seen[number], identifier))
        seen.setdefault(number, identifier)
    return found


def model_problems(model, others: Iterable[str] = ()) -> list[str]:
    """Every reason the extension cannot build Blender settings for ``model`` (a ``MaterialModel``
    class) beside the registered models named ``others``; empty when it can. Each names the
    parameter, preset or choice at fault and the rule it breaks."""
    name = model.name
    found = []
    problem = property_problem(name, MATERIAL_GROUP_NAMES)
    if problem is not None:
        found.append(f"its name {problem}")
    elif len(name.encode("utf-8")) > MAX_MODEL_NAME_BYTES:
        found.append(f"its name is {len(name.encode('utf-8'))} bytes long; Blender's class names hold at most "
                     f"{MAX_NAME_BYTES} bytes, {MAX_MODEL_NAME_BYTES} after {MODEL_CLASS_PREFIX!r}")
    found += [f"its name and the model {other!r} get the same stored number {stable_number(name)}; rename one"
              for other, new in collisions([*(o for o in others if o != name), name]) if new == name]
    for p in model.parameters:
        problem = property_problem(p.name, MODEL_GROUP_NAMES)
        if problem is not None:
            found.append(f"parameter {p.name!r}: {problem}")
            continue
        found += _parameter_problems(p)
    for preset in model.presets:
        problem = identifier_problem(preset)
        if problem is not None:
            found.append(f"preset {preset!r}: its name {problem}")
    found += [f"presets {a!r} and {b!r} get the same stored number {stable_number(a)}; rename one"
              for a, b in collisions(model.presets)]
    return found


def _parameter_problems(p) -> list[str]:
    kind = p.kind
    found = []
    if kind == "choice":
        for choice in p.choices:
            problem = identifier_problem(choice)
            if problem is not None:
                found.append(f"parameter {p.name!r}: choice {choice!r}: {problem}")
        found += [f"parameter {p.name!r}: choices {a!r} and {b!r} get the same stored number "
                  f"{stable_number(a)}; rename one" for a, b in collisions(p.choices)]
        if p.default not in p.choices:
            found.append(f"parameter {p.name!r}: its default {p.default!r} is not one of its choices "
                         f"({', '.join(p.choices)}); Blender refuses an enum whose default is not an item")
    elif kind == "int" and not _INT_MIN <= p.default <= _INT_MAX:
        found.append(f"parameter {p.name!r}: its default {p.default} does not fit Blender's 32-bit integer")
    return found


def check_model(model, others: Iterable[str] = ()) -> None:
    """Raise ValueError naming ``model`` and every name of it Blender would refuse (:func:`model_problems`)."""
    found = model_problems(model, others)
    if found:
        raise ValueError(f"material model {model.name!r} cannot be shown in Blender: " + "; ".join(found))
