"""What differs between the Blender versions we support (4.2 LTS to 5.3), in one place.

Each helper uses the newer API where it exists and the older one where it does not, by
looking for the API itself rather than comparing version numbers, so a backport or a
point release that moves an API is followed without an edit here. The rest of the
Blender layer calls these helpers and never tests ``bpy.app.version``.

- Geometry Nodes modifier inputs: ID properties keyed by the socket identifier
  (``mod["Socket_2"]``) up to 5.1; from 5.2 an RNA struct per input
  (``mod.properties.inputs.Socket_2.value``), and ``mod[...]`` raises ``TypeError``.
- Keyframes: since 5.0 an Action's F-curves live in a channelbag of the slot the animated ID
  uses (``Action.fcurves`` is gone); before 4.4 only ``Action.fcurves`` exists.
- ``PATH_SUPPORTS_BLEND_RELATIVE``: 4.5+; 4.2 fails registering a property that asks for it.
"""

from __future__ import annotations

import bpy

# ---------------------------------------------------------------------------- modifier inputs


def _inputs(mod: bpy.types.Modifier):
    """The 5.2+ RNA struct holding one member per input, or None where inputs are ID properties."""
    return getattr(getattr(mod, "properties", None), "inputs", None)


def set_modifier_input(mod: bpy.types.Modifier, identifier: str, value) -> None:
    """Set a Geometry Nodes modifier input (by socket identifier) to a constant value."""
    inputs = _inputs(mod)
    if inputs is not None:
        getattr(inputs, identifier).value = value
    else:
        mod[identifier] = value


def get_modifier_input(mod: bpy.types.Modifier, identifier: str):
    """A Geometry Nodes modifier input's value, or None when the modifier has no such input."""
    inputs = _inputs(mod)
    if inputs is not None:
        member = getattr(inputs, identifier, None)
        return member.value if member is not None else None
    return mod.get(identifier)


# ---------------------------------------------------------------------------- keyframes


def action_fcurves(id_data: bpy.types.ID, *, create: bool = False):
    """The F-curves that animate ``id_data`` (a collection with ``find``/``new``), or None.

    5.0+: the channelbag of the slot ``id_data``'s animation uses (made with ``create``);
    earlier: ``Action.fcurves``. With ``create`` an action (and slot) is made when missing.
    """
    ad = id_data.animation_data
    if ad is None:
        if not create:
            return None
        ad = id_data.animation_data_create()
    action = ad.action
    if action is None:
        if not create:
            return None
        action = ad.action = bpy.data.actions.new(f"{id_data.name}Action")
    if not hasattr(action, "layers") or not hasattr(ad, "action_slot"):
        return action.fcurves  # 4.2-4.3: no slots
    slot = ad.action_slot
    if slot is None:
        if not create:
            return None
        slot = action.slots.new(id_type=id_data.id_type, name=id_data.name)
        ad.action_slot = slot
    layer = action.layers[0] if action.layers else (action.layers.new("Layer") if create else None)
    if layer is None:
        return None
    strip = layer.strips[0] if layer.strips else (layer.strips.new(type='KEYFRAME') if create else None)
    if strip is None:
        return None
    bag = strip.channelbag(slot, ensure=create)
    return bag.fcurves if bag is not None else None


# ---------------------------------------------------------------------------- properties

# Keyword arguments for a StringProperty holding a file or folder path: `//` paths survive
# "Make Paths Relative/Absolute" on 4.5+. The option cannot be probed: 4.2 accepts it in
# StringProperty() and fails only when the class registers (BLENDER_NOTES.md section 7).
PATH_PROPERTY_OPTIONS: dict = {"options": {'PATH_SUPPORTS_BLEND_RELATIVE'}} if bpy.app.version >= (4, 5, 0) else {}
