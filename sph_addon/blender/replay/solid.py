"""Replay of a Solid: the artist's own object, deformed by its particles, frame by frame.

The bake writes the Solid's mesh as its particles carry it, ``DIR/deformed/source_<k>_####.ply``
(vertices only, world frame, metres, in the mesh's vertex order: ``core.deformed_meshes``). The
object itself shows it: a Geometry Nodes modifier "SPH Deform", first in its stack, sets every
vertex's position by index from the frame's file. The mesh datablock is never written (its
topology, UVs, attributes and materials stay the artist's, and the rest shape is kept for the next
bake), and the modifiers after it (Subdivision Surface, Bevel) apply to the deformed mesh.

Why Geometry Nodes reading the per-frame PLY rather than a Mesh Cache modifier (MDD/PC2): the
cache's contract is one atomically written file per frame (a killed bake leaves complete frames, a
resumed one rewrites them byte for byte, ``free`` deletes them by name); a PC2 file holds every
frame in one file that would be rewritten whole, or appended to in place, every frame. The frame
clamping and the farm's Python-free render are the particle replay's own (``replay_nodes``).

The group's positions are world metres: the node divides them by the Unit Scale input (metres per
Blender unit) and takes them into the object's frame with the inverse of its world transform
(Object Info of Self Object), so the object may be moved or parented after the bake and still
shows the bake where it happened. A file whose vertex count is not the mesh's (the mesh edited
after the bake) leaves the mesh as it is.

Mechanisms as in :mod:`.replay`: ``import_ply`` (4.5+: Import PLY, no Python at render time) and
``handler`` (4.2: a frame handler reads the file into the point attribute ``sph_deformed`` of the
object's mesh, which the group reads; the attribute is removed before saving).
"""

from __future__ import annotations

import logging
from pathlib import Path

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ...core.cache.cache_dir import CacheDir
from ...core.cache.jsonfile import read_json
from ...core.errors import InputError
from . import frames as replay_frames
from .inputs import find_modifier, frame_range, get_input, set_frame_range, set_input, use_group
from .nodes import FIRST, LAST, MODE_HANDLER, MODE_IMPORT, RENDER_FIRST, RENDER_LAST, TAG_GROUP, _import_chain

log = logging.getLogger(__name__)

MODIFIER_NAME = "SPH Deform"
KIND = "deformed"
GROUP_VERSION = 1
UNIT_SCALE = "Unit Scale"
ATTRIBUTE = "sph_deformed"           # handler mode: the frame's positions on the object's mesh (world, m)
TAG_DOMAIN = "sph_solid_domain"      # on a replayed Solid: its Domain's name
TAG_CACHE = "sph_solid_cache"        # Blender path of the cache
TAG_SOURCE = "sph_solid_source"      # its source's index in the baked scene
TAG_MODE = "sph_solid_mode"          # MODE_IMPORT | MODE_HANDLER
_TAG_LOADED = "sph_solid_loaded"     # handler mode: the file (path, mtime, size) the attribute holds


def ensure_group(mode: str) -> bpy.types.NodeTree:
    """The shared node group of one mechanism (per-object settings are modifier inputs)."""
    key = f"{KIND}/{mode}/{GROUP_VERSION}"
    for ng in bpy.data.node_groups:
        if ng.get(TAG_GROUP) == key and ng.library is None:
            return ng
    ng = bpy.data.node_groups.new("SPH Deform" + (" (Handler)" if mode == MODE_HANDLER else ""), "GeometryNodeTree")
    ng[TAG_GROUP] = key
    iface = ng.interface
    iface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    if mode == MODE_IMPORT:
        path = iface.new_socket("Path", in_out="INPUT", socket_type="NodeSocketString")
        path.description = "PLY file of each frame: Format String pattern, {frame:04} = frame, // = beside the .blend"
    for name, default in ((FIRST, 1), (LAST, 0), (RENDER_FIRST, 1), (RENDER_LAST, 0)):
        frames = iface.new_socket(name, in_out="INPUT", socket_type="NodeSocketInt")
        frames.default_value = default
        frames.description = "Frames with a deformed mesh in the cache (kept by the add-on): none outside them"
        frames.hide_in_modifier = True
    unit = iface.new_socket(UNIT_SCALE, in_out="INPUT", socket_type="NodeSocketFloat")
    unit.default_value, unit.min_value = 1.0, 1e-9
    unit.description = "Metres per Blender unit of the bake (the cache is in metres)"
    unit.hide_in_modifier = True
    iface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    _build(ng, mode)
    return ng


def _build(ng: bpy.types.NodeTree, mode: str) -> None:
    """Group Input -> Set Position (world metres -> the object's frame), selected when the frame has the mesh's
    vertex count (import) or the mesh has the attribute (handler)."""
    nodes, links = ng.nodes, ng.links
    group_in = nodes.new("NodeGroupInput")
    group_in.location = (-1300, 0)
    own = group_in.outputs["Geometry"]
    if mode == MODE_IMPORT:
        frame = _import_chain(ng, group_in)
        sample = nodes.new("GeometryNodeSampleIndex")
        sample.data_type, sample.domain = 'FLOAT_VECTOR', 'POINT'
        sample.location = (100, 200)
        links.new(frame, sample.inputs["Geometry"])
        links.new(nodes.new("GeometryNodeInputPosition").outputs[0], sample.inputs["Value"])
        links.new(nodes.new("GeometryNodeInputIndex").outputs[0], sample.inputs["Index"])
        world, counts = sample.outputs[0], []
        for geometry in (frame, own):
            size = nodes.new("GeometryNodeAttributeDomainSize")
            size.component = 'MESH'
            links.new(geometry, size.inputs["Geometry"])
            counts.append(size.outputs["Point Count"])
        same = nodes.new("ShaderNodeMath")  # the Compare node's sockets differ between versions
        same.operation = 'COMPARE'
        same.inputs[2].default_value = 0.5  # counts are whole numbers
        links.new(counts[0], same.inputs[0])
        links.new(counts[1], same.inputs[1])
        selected = same.outputs[0]
    else:
        named = nodes.new("GeometryNodeInputNamedAttribute")
        named.data_type = 'FLOAT_VECTOR'
        named.inputs["Name"].default_value = ATTRIBUTE
        world, selected = named.outputs["Attribute"], named.outputs["Exists"]
    to_units = nodes.new("ShaderNodeVectorMath")
    to_units.operation = 'DIVIDE'
    links.new(world, to_units.inputs[0])
    combine = nodes.new("ShaderNodeCombineXYZ")
    for k in range(3):
        links.new(group_in.outputs[UNIT_SCALE], combine.inputs[k])
    links.new(combine.outputs[0], to_units.inputs[1])
    info = nodes.new("GeometryNodeObjectInfo")
    info.transform_space = 'ORIGINAL'
    links.new(nodes.new("GeometryNodeSelfObject").outputs[0], info.inputs["Object"])
    invert = nodes.new("FunctionNodeInvertMatrix")
    links.new(info.outputs["Transform"], invert.inputs[0])
    local = nodes.new("FunctionNodeTransformPoint")
    links.new(to_units.outputs[0], local.inputs["Vector"])
    links.new(invert.outputs["Matrix"], local.inputs["Transform"])
    set_pos = nodes.new("GeometryNodeSetPosition")
    set_pos.location = (600, 0)
    links.new(own, set_pos.inputs["Geometry"])
    links.new(selected, set_pos.inputs["Selection"])
    links.new(local.outputs[0], set_pos.inputs["Position"])
    group_out = nodes.new("NodeGroupOutput")
    group_out.location = (800, 0)
    links.new(set_pos.outputs[0], group_out.inputs["Geometry"])


# ---------------------------------------------------------------------------- the objects

def bound_objects(cache_root: Path) -> dict[int, str]:
    """{source index: object name} of the Solids the cache's stored scene binds (empty when none or unreadable)."""
    try:
        stored = read_json(cache_root / "scene.json", "stored scene")
        sources = stored.get("sources") or []
        return {k: s["material"] for k, s in enumerate(sources)
                if isinstance(s, dict) and s.get("bind_mesh") and isinstance(s.get("material"), str)}
    except (InputError, AttributeError, TypeError):
        return {}


def solids_of(domain_ob: bpy.types.Object) -> list[bpy.types.Object]:
    """The objects replayed as Solids of this Domain's cache."""
    return [ob for ob in bpy.data.objects if ob.get(TAG_DOMAIN) == domain_ob.name and ob.library is None]


def ensure_solids(domain_ob: bpy.types.Object, cache_dir: str, root: Path, unit: float) -> list[bpy.types.Object]:
    """Give every Solid the cache binds its "SPH Deform" modifier (first in its stack); return them.

    Objects replayed before but no longer in the cache (freed, or no longer Solids) read no frame
    and show their own mesh.
    """
    mode = MODE_IMPORT if hasattr(bpy.types, "GeometryNodeImportPLY") else MODE_HANDLER
    shown = []
    for k, name in sorted(bound_objects(root).items()):
        ob = bpy.data.objects.get(name)
        if ob is None or ob.type != 'MESH' or ob.library is not None:
            continue
        ob[TAG_DOMAIN], ob[TAG_CACHE], ob[TAG_SOURCE], ob[TAG_MODE] = domain_ob.name, cache_dir, k, mode
        mod = ob.modifiers.get(MODIFIER_NAME)
        if mod is None or mod.type != 'NODES':
            mod = ob.modifiers.new(MODIFIER_NAME, 'NODES')
        use_group(ob, mod, ensure_group(mode))
        if list(ob.modifiers).index(mod) != 0:
            ob.modifiers.move(list(ob.modifiers).index(mod), 0)  # deform the mesh before any other modifier
        if mode == MODE_IMPORT:
            set_input(ob, "Path", _file_pattern(cache_dir, k))
        if get_input(ob, UNIT_SCALE) != unit:
            set_input(ob, UNIT_SCALE, float(unit))
        shown.append(ob)
    for ob in solids_of(domain_ob):
        sync(ob)
    load_current_frame(solids_of(domain_ob))
    return shown


def _file_pattern(cache_dir: str, source: int) -> str:
    """``//sph_cache/deformed/source_0_{frame:04}.ply`` (``CacheDir.deformed_path``; braces doubled for Format
    String, POSIX separators for farms)."""
    root = cache_dir.replace("\\", "/")
    root = (root if root.endswith("/") else root + "/").replace("{", "{{").replace("}", "}}")
    return f"{root}deformed/source_{source}_{{frame:04}}.ply"


def _frame_file(ob: bpy.types.Object, frame: int) -> Path | None:
    cache_dir = ob.get(TAG_CACHE, "")
    if not cache_dir or (cache_dir.startswith("//") and not bpy.data.filepath):
        return None
    return CacheDir(bpy.path.abspath(cache_dir, library=ob.library)).deformed_path(int(ob.get(TAG_SOURCE, 0)), frame)


def _files_on_disk(ob: bpy.types.Object) -> tuple[int, int]:
    """(first, last) frame with a deformed mesh of the object's source; (1, 0) when none (or not its cache's)."""
    some = _frame_file(ob, 0)
    if some is None or not some.parent.is_dir():
        return 1, 0
    if bound_objects(some.parent.parent).get(int(ob.get(TAG_SOURCE, 0))) != ob.name:
        return 1, 0  # freed, or the source is another object now
    prefix = f"source_{int(ob.get(TAG_SOURCE, 0))}_"
    frames = sorted(int(p.stem[len(prefix):]) for p in some.parent.glob(f"{prefix}*.ply")
                    if p.stem[len(prefix):].isdigit())
    return (frames[0], frames[-1]) if frames else (1, 0)


def sync(ob: bpy.types.Object) -> bool:
    """Bring the object's frame range in step with the files on disk; True if it changed."""
    if find_modifier(ob) is None:
        return False
    return set_frame_range(ob, *_files_on_disk(ob))


# ---------------------------------------------------------------------------- handler mode (4.2)

def load_current_frame(obs) -> None:
    scene = bpy.context.scene
    for ob in obs:
        if ob.get(TAG_MODE) == MODE_HANDLER and scene is not None:
            _load_frame(ob, scene.frame_current)


def _load_frame(ob: bpy.types.Object, frame: int) -> None:
    """Write the frame's positions into the mesh's ``sph_deformed`` attribute (removed outside the baked frames)."""
    me = ob.data
    if ob.type != 'MESH' or me.is_editmode or me.library is not None:
        return
    first, last = frame_range(ob) or (1, 0)
    path = _frame_file(ob, min(frame, last)) if first <= min(frame, last) else None
    key = replay_frames.file_key(path)
    if me.get(_TAG_LOADED, "") == key and (key == "") == (ATTRIBUTE not in me.attributes):
        return
    vertices = replay_frames.read_frame(path)[0] if key else None
    attr = me.attributes.get(ATTRIBUTE)
    if vertices is None or len(vertices) != len(me.vertices):
        if attr is not None:
            me.attributes.remove(attr)
        me[_TAG_LOADED] = ""
        me.update()
        return
    if attr is None:
        attr = me.attributes.new(ATTRIBUTE, 'FLOAT_VECTOR', 'POINT')
    pos = np.column_stack([vertices["x"], vertices["y"], vertices["z"]]).astype(np.float32)
    attr.data.foreach_set("vector", np.ascontiguousarray(pos).ravel())
    me[_TAG_LOADED] = key
    me.update()


def _handler_objects() -> list[bpy.types.Object]:
    return [ob for ob in bpy.data.objects if ob.get(TAG_MODE) == MODE_HANDLER and ob.library is None]


@persistent
def _on_frame_change(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph | None = None) -> None:
    for ob in _handler_objects():
        _load_frame(ob, scene.frame_current)


@persistent
def _on_load_post(*_args) -> None:
    """Bring the Solids up to date with the cache (a farm may have baked or freed it) and show the frame."""
    for ob in bpy.data.objects:
        if ob.get(TAG_DOMAIN) and ob.library is None and ob.get(TAG_MODE) in (MODE_IMPORT, MODE_HANDLER):
            mod = find_modifier(ob)
            if mod is not None:
                use_group(ob, mod, ensure_group(ob[TAG_MODE]))
                sync(ob)
    load_current_frame(_handler_objects())


@persistent
def _on_save_pre(*_args) -> None:
    """The .blend keeps the artist's mesh, not a frame of the cache: the handler's attribute goes before saving."""
    for ob in _handler_objects():
        me = ob.data
        if not me.is_editmode and me.library is None and ATTRIBUTE in me.attributes:
            me.attributes.remove(me.attributes[ATTRIBUTE])
            me.pop(_TAG_LOADED, None)


@persistent
def _on_save_post(*_args) -> None:
    load_current_frame(_handler_objects())


HANDLERS = (("frame_change_post", _on_frame_change), ("load_post", _on_load_post),
            ("save_pre", _on_save_pre), ("save_post", _on_save_post))


def refresh(domain_ob: bpy.types.Object) -> bool:
    """After the cache changed (a bake, a free): the Solids' frame ranges and shown frame; True if a range changed."""
    obs = solids_of(domain_ob)
    changed = False
    for ob in obs:
        changed |= sync(ob)
        if ob.get(TAG_MODE) == MODE_HANDLER and ob.type == 'MESH':
            ob.data.pop(_TAG_LOADED, None)
        ob.update_tag()
    load_current_frame(obs)
    return changed


def register():
    for attr, fn in HANDLERS:
        handlers = getattr(bpy.app.handlers, attr)
        replay_frames.remove_handler(handlers, fn)
        handlers.append(fn)


def unregister():
    for attr, fn in HANDLERS:
        replay_frames.remove_handler(getattr(bpy.app.handlers, attr), fn)
