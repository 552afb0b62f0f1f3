"""The *SPH Replay* modifier of a replay object: finding it, its node group and its inputs by name.

Modifier inputs are keyed by their socket's identifier ("Socket_2"), which a new node group
changes; everything here addresses them by the socket's name ("Radius", "First Frame"), so the
replay (:mod:`.replay`) and the tests never see identifiers. Values go through
:mod:`.compat` (the inputs became RNA structs in Blender 5.2). The frame range an object reads
(First / Last Frame, and Render First / Last Frame for renders only) is a pair of such inputs.
Main thread only, like all bpy.
"""

from __future__ import annotations

import bpy

from .. import compat
from .nodes import FIRST, LAST, RENDER_FIRST, RENDER_LAST, TAG_GROUP, TIME_SCALE

MODIFIER_NAME = "SPH Replay"


def find_modifier(ob: bpy.types.Object) -> bpy.types.Modifier | None:
    """Our modifier: by name, or by its node group's tag if the user renamed it."""
    mod = ob.modifiers.get(MODIFIER_NAME)
    if mod is not None and mod.type == 'NODES':
        return mod
    return next((m for m in ob.modifiers if m.type == 'NODES' and m.node_group is not None
                 and m.node_group.get(TAG_GROUP)), None)


def use_group(ob: bpy.types.Object, mod: bpy.types.Modifier, group: bpy.types.NodeTree) -> None:
    """Point the modifier at ``group``; a new group means new socket identifiers: carry the user's values by name."""
    if mod.node_group is group:
        return
    kept = {name: get_input(ob, name) for name in ("Path", "Radius", "Material", TIME_SCALE)}
    old = mod.node_group
    mod.node_group = group
    if old is not None and old.get(TAG_GROUP) and old.users == 0:
        bpy.data.node_groups.remove(old)
    for name, value in kept.items():
        if value is not None and socket_identifier(group, name):
            set_input(ob, name, value)


def socket_identifier(group: bpy.types.NodeTree, name: str) -> str | None:
    """Modifier inputs are keyed by the socket identifier ("Socket_2"), not the name."""
    for item in group.interface.items_tree:
        if item.item_type == 'SOCKET' and item.in_out == 'INPUT' and item.name == name:
            return item.identifier
    return None


def set_input(ob: bpy.types.Object, name: str, value) -> None:
    mod = find_modifier(ob)
    compat.set_modifier_input(mod, socket_identifier(mod.node_group, name), value)


def get_input(ob: bpy.types.Object, name: str):
    mod = find_modifier(ob)
    if mod is None or mod.node_group is None:
        return None
    ident = socket_identifier(mod.node_group, name)
    return compat.get_modifier_input(mod, ident) if ident else None


def frame_range(ob: bpy.types.Object, render: bool = False) -> tuple[int, int] | None:
    """(first, last) frame the replay object reads, first > last when it reads nothing; None when
    its node group predates frame ranges (it reads every frame). ``render``: what a render reads
    (the Render First/Last Frame a farm's bake set, when set)."""
    mod = find_modifier(ob)
    if mod is None or mod.node_group is None or socket_identifier(mod.node_group, FIRST) is None:
        return None
    if render and socket_identifier(mod.node_group, RENDER_FIRST) is not None:
        first, last = get_input(ob, RENDER_FIRST), get_input(ob, RENDER_LAST)
        if first is not None and last is not None and first <= last:
            return int(first), int(last)
    first, last = get_input(ob, FIRST), get_input(ob, LAST)
    # An input never set reads its socket's default: nothing.
    return (1, 0) if first is None or last is None else (int(first), int(last))


def set_frame_range(ob: bpy.types.Object, first: int, last: int) -> bool:
    """Set the frames the replay object reads, renders included (only files there must exist); True if
    it changed."""
    current = frame_range(ob)
    if current is None or (current == (first, last) and frame_range(ob, render=True) == current):
        return False
    set_input(ob, FIRST, int(first))
    set_input(ob, LAST, int(last))
    set_render_range(ob, 1, 0)
    ob.update_tag()
    return True


def set_render_range(ob: bpy.types.Object, first: int, last: int) -> None:
    if socket_identifier(find_modifier(ob).node_group, RENDER_FIRST) is not None:
        set_input(ob, RENDER_FIRST, int(first))
        set_input(ob, RENDER_LAST, int(last))
