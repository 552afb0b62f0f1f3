"""Replay of a baked cache: two objects per domain show the cached frame as the timeline moves.

``<domain> Particles`` shows ``DIR/particles/particles_####.ply`` as a point cloud and
``<domain> Surface`` shows ``DIR/surface/surface_####.ply`` (cache layout: DESIGN.md
section 4). Both carry a ``velocity`` point attribute so Cycles motion blur works, and a
Geometry Nodes modifier "SPH Replay" whose inputs the user may edit (Radius, Material).

Two mechanisms, picked once per object by :func:`ensure_replay`:

``import_ply`` (Blender 4.5+, any version with the *Import PLY* node)
    The modifier reads the frame's file itself: Scene Time -> Float to Int -> Format String
    ``{frame:04}`` -> Import PLY (BLENDER_NOTES.md section 7). No Python runs at render
    time, so a farm renders the saved .blend without the add-on. The node keeps what it
    read in Blender's memory cache (bounded by Preferences > System > Memory Cache Limit)
    keyed by the normalised absolute path, and re-reads a file only when its modification
    time in *whole seconds* differs from the one it saw last (source:
    ``BLI_memory_cache_file_load.cc``; verified on 4.5.4 and 5.0.1). So a rewritten frame
    shows up on the next evaluation, which :func:`refresh` triggers -- unless the old and
    the new file were written within the same second, which a real bake does not do.

``handler`` (Blender 4.2: no Import PLY node)
    A ``frame_change_post`` handler writes the frame into the objects' mesh datablocks with
    the fast attribute paths of BLENDER_NOTES.md section 7; the modifier only turns the
    vertices into points and sets the material. Rendering therefore needs the add-on on
    every machine, and in the UI *Lock Interface* (set by :func:`ensure_replay`) because
    handlers and the viewport run on different threads during a render.

Materials: the mesh Import PLY makes and the point cloud Mesh to Points makes carry no
material, and the object's material slots do not reach them (verified: Import PLY on
4.5/5.0, Mesh to Points on 4.2/4.5/5.0), so a Set Material node fed by the modifier's
*Material* input decides what the replay renders with, in both mechanisms alike. Unless
the artist set one there or gave the Domain a material, it is the look of the bake's
presets (``liquid_materials``: one shader reading the ``material`` attribute).

Attributes (both mechanisms alike): ``velocity`` (once: no ``vx vy vz`` left), ``speed``, an
integer ``material``; on particles an integer ``id`` and ``age`` (s) when the cache has them.
``velocity`` is per second of the *timeline*: the cache's physical velocity times the bake's
time scale (modifier input Time Scale, read from the cache's stored scene), so motion blur in
slow motion is as long as the motion in one shutter; ``speed`` stays physical (m/s).

Frame ranges: each object reads only the frames from the first to the last file of its cache
with particles (modifier inputs First Frame / Last Frame, kept by :func:`sync_frames` in step
with the files after every bake, meshing run and Free, while a bake runs, and when a file is
opened); before them it shows nothing, after them it holds the last, and with no such file it
reads nothing. Import PLY prints ``Invalid PLY header`` for a missing file and ``no vertices``
for an empty one on every evaluation, farm logs included, so it is never asked for either. A
render without the add-on reads the ranges saved in the file; the farm command saves them
(``cli_command``), with the surface frames its meshing tasks will write as the surface's
Render First / Last Frame (read by renders only: :func:`expect_surfaces`).

The .blend must be saved before ``//`` paths resolve; until then both mechanisms show
nothing.

This module makes, finds and updates the replay objects and holds the handlers;
:mod:`.replay_nodes` builds the node groups, :mod:`.replay_inputs` reads and writes the
modifier's inputs by name (frame ranges included), and :mod:`.replay_frames` reads the frame
files (which hold geometry; a frame into a mesh for the handler).
"""

from __future__ import annotations

import logging
from pathlib import Path

import bpy
from bpy.app.handlers import persistent

from ...core.cache.cache_dir import CacheDir
from ...core.cache.jsonfile import read_json
from ...core.errors import InputError
from .. import liquid_materials
from . import frames as replay_frames
from . import solid as replay_solid
from .inputs import (
    MODIFIER_NAME,
    find_modifier,
    frame_range,
    get_input,
    set_frame_range,
    set_input,
    set_render_range,
    socket_identifier,
    use_group,
)
from .nodes import (
    KINDS,
    MODE_HANDLER,
    MODE_IMPORT,
    PARTICLES,
    RENDER_FIRST,
    SURFACE,
    TAG_GROUP,
    TIME_SCALE,
    ensure_group,
)

log = logging.getLogger(__name__)


# ID custom properties on the replay objects (what find_replay and the handlers look for).
TAG_KIND = "sph_replay"              # "particles" | "surface"
TAG_DOMAIN = "sph_domain"            # the domain object's name
TAG_CACHE = "sph_cache_dir"          # Blender path of the cache ("//sph_cache")
TAG_MODE = "sph_replay_mode"         # MODE_IMPORT | MODE_HANDLER
TAG_RADIUS = "sph_particle_radius"   # the radius ensure_replay last set (to tell user edits apart)
_TAG_LOADED = "sph_replay_loaded"    # on a handler-mode mesh: the file (path, mtime, size) it holds

_OBJECT_SUFFIX = {PARTICLES: "Particles", SURFACE: "Surface"}


# ---------------------------------------------------------------------------- queries

def native_import_available() -> bool:
    """True where Geometry Nodes has *Import PLY* (4.5, 5.0; not 4.2 -- BLENDER_NOTES.md section 7)."""
    return hasattr(bpy.types, "GeometryNodeImportPLY")


def find_replay(domain_ob: bpy.types.Object) -> tuple[bpy.types.Object | None, bpy.types.Object | None]:
    """The domain's (particles, surface) replay objects, None where missing.

    Objects are matched by their tags, not their names, so a renamed replay object is still
    found; among duplicates (Shift+D copies the tags) the one with the expected name wins.
    """
    found: dict[str, list[bpy.types.Object]] = {PARTICLES: [], SURFACE: []}
    for ob in bpy.data.objects:
        kind = ob.get(TAG_KIND)
        if kind in found and ob.get(TAG_DOMAIN) == domain_ob.name and ob.library is None:
            found[kind].append(ob)
    result = []
    for kind in KINDS:
        wanted = _object_name(domain_ob, kind)
        obs = sorted(found[kind], key=lambda o: (o.name != wanted, o.name))
        result.append(obs[0] if obs else None)
    return result[0], result[1]


def _object_name(domain_ob: bpy.types.Object, kind: str) -> str:
    return f"{domain_ob.name} {_OBJECT_SUFFIX[kind]}"


# ---------------------------------------------------------------------------- public API

def ensure_replay(domain_ob: bpy.types.Object, cache_dir: str, particle_radius: float,
                  render_particles: bool = False,
                  material: bpy.types.Material | None = None) -> tuple[bpy.types.Object, bpy.types.Object]:
    """Create or update the domain's replay objects; return (particles, surface).

    Idempotent: existing objects, their node groups and materials are reused, and inputs
    the user changed (Material, a Radius other than the one set last time) are kept.

    Parameters
    ----------
    domain_ob : the domain object; new objects go to its first collection.
    cache_dir : Blender path of the cache directory, ``//``-relative by default
        (``"//sph_cache"``), resolved against the saved .blend when frames are read.
    particle_radius : default point radius (m) of the particles' "Radius" input.
    render_particles : whether renders show the particles (the Domain's *Render Particles*).
    material : the look the add-on chose for the bake (``liquid_materials.material_for``); the
        Domain's own material wins over it, and a Material input the artist set is kept.
        Default: the neutral look.
    """
    mode = MODE_IMPORT if native_import_available() else MODE_HANDLER
    collection = domain_ob.users_collection[0] if domain_ob.users_collection else bpy.context.scene.collection
    result = []
    for kind, ob in zip(KINDS, find_replay(domain_ob)):
        if ob is None:
            ob = _new_object(domain_ob, kind, collection)
        _configure(ob, kind, mode, domain_ob.name, cache_dir, particle_radius,
                   _domain_material(domain_ob) or material or liquid_materials.material_for([]))
        _sync_frames(ob)
        _sync_time_scale(ob)
        result.append(ob)
    show_particles_in_render(result[0], render_particles)
    if mode == MODE_HANDLER:
        for scene in domain_ob.users_scene or (bpy.context.scene,):
            # Handlers and the viewport run on different threads during UI renders (BLENDER_NOTES.md 7).
            scene.render.use_lock_interface = True
        _load_current_frame(result)
    return result[0], result[1]


def show_particles_in_render(particles: bpy.types.Object | None, render: bool) -> None:
    """Particles always show in the viewport but render only on request.

    Rendered beside the surface, spheres of half the spacing bead every edge of the liquid
    ("a string of pearls"): the surface is what a render wants by default.
    """
    if particles is not None and particles.hide_render == render:
        particles.hide_render = not render


def refresh(domain_ob: bpy.types.Object) -> None:
    """Show the files as they are now on disk (call after a bake or meshing run rewrote them).

    Nothing tells Blender that files changed while the frame stays the same. Import mode:
    re-evaluating the modifier makes Import PLY compare modification times and re-read
    changed files. Handler mode: the memo of the loaded file is dropped and the current
    frame is read again.
    """
    replay_solid.refresh(domain_ob)  # the Solids deformed by the cache
    obs = [ob for ob in find_replay(domain_ob) if ob is not None]
    for ob in obs:
        _sync_frames(ob)
        _sync_time_scale(ob)
        if ob.get(TAG_MODE) == MODE_HANDLER and ob.type == 'MESH':
            ob.data.pop(_TAG_LOADED, None)
        ob.update_tag()
    _load_current_frame([ob for ob in obs if ob.get(TAG_MODE) == MODE_HANDLER])


def sync_frames(domain_ob: bpy.types.Object) -> bool:
    """Bring the replay objects' frame ranges in step with the files now on disk; True if one changed.

    Cheap (two directory listings): called while a bake runs so the timeline shows the frames
    already written.
    """
    changed = replay_solid.refresh(domain_ob)
    for ob in find_replay(domain_ob):
        if ob is not None:
            changed |= _sync_frames(ob)
    return changed


def expect_surfaces(domain_ob: bpy.types.Object) -> bool:
    """Renders of the surface read the frames the particles read, before they are meshed; True if that changed.

    For a farm: the file is saved after the bake task and rendered, without the add-on, after
    the meshing tasks that follow it, so it must already name the frames they will write. Only
    renders read them (Render First/Last Frame): the viewport evaluation that saving the file
    makes must not read files that do not exist yet. The 4.2 frame handler, which reads in
    Python and takes a missing file for an empty frame, gets them as its First/Last Frame.
    """
    particles, surface = find_replay(domain_ob)
    if particles is None or surface is None or frame_range(particles) is None or frame_range(surface) is None:
        return False
    wanted = frame_range(particles)
    if frame_range(surface, render=True) == wanted:
        return False
    if socket_identifier(find_modifier(surface).node_group, RENDER_FIRST) is None:
        return set_frame_range(surface, *wanted)
    set_render_range(surface, *wanted)
    return True


def _sync_frames(ob: bpy.types.Object) -> bool:
    return set_frame_range(ob, *_files_on_disk(ob))


def _sync_time_scale(ob: bpy.types.Object) -> None:
    """Set the Time Scale input from the cache's stored scene (left as it is when nothing is baked)."""
    mod = find_modifier(ob)
    some = _frame_file(ob, 0)
    if some is None or mod is None or mod.node_group is None or socket_identifier(mod.node_group, TIME_SCALE) is None:
        return
    try:
        stored = read_json(some.parent.parent / "scene.json", "stored scene")
        simulation = stored.get("simulation")
        scale = float(simulation.get("time_scale", 1.0)) if isinstance(simulation, dict) else 1.0
    except (InputError, AttributeError, TypeError, ValueError):
        return
    if scale > 0 and get_input(ob, TIME_SCALE) != scale:
        set_input(ob, TIME_SCALE, scale)


def _files_on_disk(ob: bpy.types.Object) -> tuple[int, int]:
    """(first, last) frame with a non-empty file of the object's kind in its cache; (1, 0) when none.

    Import PLY prints an error for a file with no vertices (an inflow's first frame), so empty
    files at either end are left out. A frame missing or empty *between* the two (meshing runs
    over separate ranges still going, a tank drained and filled again) is read, and empty; every
    frame outside them is never read.
    """
    some = _frame_file(ob, 0)
    folder = some.parent if some is not None else None
    if folder is None or not folder.is_dir():
        return 1, 0
    prefix = f"{ob.get(TAG_KIND)}_"
    frames = sorted((int(p.stem[len(prefix):]), p) for p in folder.glob(f"{prefix}*.ply")
                    if p.stem[len(prefix):].isdigit())
    first = next((f for f, p in frames if replay_frames.has_vertices(p)), None)
    if first is None:
        return 1, 0
    last = next(f for f, p in reversed(frames) if replay_frames.has_vertices(p))
    return first, last


def remove_replay(domain_ob: bpy.types.Object) -> None:
    """Delete the domain's replay objects, then their meshes, our node groups and default material if unused."""
    for ob in find_replay(domain_ob):
        if ob is None:
            continue
        data = ob.data
        groups = [m.node_group for m in ob.modifiers if m.type == 'NODES' and m.node_group is not None]
        materials = [get_input(ob, "Material")]
        bpy.data.objects.remove(ob)
        if isinstance(data, bpy.types.Mesh) and data.users == 0:
            bpy.data.meshes.remove(data)
        for ng in groups:
            if ng.get(TAG_GROUP) and ng.users == 0:
                bpy.data.node_groups.remove(ng)
        for mat in materials:
            if isinstance(mat, bpy.types.Material) and mat.get(liquid_materials.TAG) and mat.users == 0:
                bpy.data.materials.remove(mat)


# ---------------------------------------------------------------------------- objects

def _new_object(domain_ob: bpy.types.Object, kind: str, collection: bpy.types.Collection) -> bpy.types.Object:
    name = _object_name(domain_ob, kind)
    ob = bpy.data.objects.new(name, bpy.data.meshes.new(name))
    collection.objects.link(ob)
    return ob


def _configure(ob: bpy.types.Object, kind: str, mode: str, domain_name: str, cache_dir: str,
               particle_radius: float, liquid: bpy.types.Material) -> None:
    """Tag the object and point its modifier at the right node group and files.

    ``liquid``: the material to show; it replaces one the add-on made but never one the user set.
    """
    if ob.get(TAG_MODE) == MODE_HANDLER and mode == MODE_IMPORT and ob.type == 'MESH':
        # e.g. a 4.2 file opened in 4.5: the mesh held a loaded frame the new group ignores.
        ob.data.clear_geometry()
        ob.data.pop(_TAG_LOADED, None)
    ob[TAG_KIND] = kind
    ob[TAG_DOMAIN] = domain_name
    ob[TAG_CACHE] = cache_dir
    ob[TAG_MODE] = mode
    mod = find_modifier(ob) or ob.modifiers.new(MODIFIER_NAME, 'NODES')
    use_group(ob, mod, ensure_group(kind, mode))
    if mode == MODE_IMPORT:
        set_input(ob, "Path", _file_pattern(cache_dir, kind))
    if kind == PARTICLES:
        current = get_input(ob, "Radius")
        # Keep a radius the user typed; follow the bake's radius otherwise.
        if TAG_RADIUS not in ob or current is None or abs(current - ob[TAG_RADIUS]) <= 1e-9 * max(1.0, current):
            set_input(ob, "Radius", float(particle_radius))
            ob[TAG_RADIUS] = float(particle_radius)
    current = get_input(ob, "Material")
    if current is None or (current.get(liquid_materials.TAG) and current is not liquid):
        set_input(ob, "Material", liquid)
        if current is not None and current.users == 0 and current.library is None:
            bpy.data.materials.remove(current)  # ours, replaced (e.g. water became honey)
    ob.update_tag()


def _domain_material(domain_ob: bpy.types.Object) -> bpy.types.Material | None:
    """The Domain's own material, if it has one: the Domain is not rendered, so its material slot
    is where an artist (or a sample file) says what the liquid looks like."""
    return domain_ob.active_material if domain_ob.material_slots else None


# ---------------------------------------------------------------------------- file paths

def _file_pattern(cache_dir: str, kind: str) -> str:
    """The Format String pattern of one kind's files, e.g. ``//sph_cache/particles/particles_{frame:04}.ply``.

    Follows ``CacheDir.particles_path`` / ``surface_path`` (DESIGN.md section 4); POSIX
    separators so a .blend saved on Windows renders on a Linux farm (BLENDER_NOTES.md
    section 9). Braces in the directory are doubled because Format String reads them as
    fields.
    """
    root = cache_dir.replace("\\", "/")
    if not root.endswith("/"):
        root += "/"
    root = root.replace("{", "{{").replace("}", "}}")
    return f"{root}{kind}/{kind}_{{frame:04}}.ply"


def _frame_file(ob: bpy.types.Object, frame: int) -> Path | None:
    """The absolute file the object shows at ``frame``; None if ``//`` cannot be resolved (unsaved .blend)."""
    cache_dir = ob.get(TAG_CACHE, "")
    if not cache_dir or (cache_dir.startswith("//") and not bpy.data.filepath):
        return None
    cache = CacheDir(bpy.path.abspath(cache_dir, library=ob.library))
    return cache.particles_path(frame) if ob.get(TAG_KIND) == PARTICLES else cache.surface_path(frame)


# ---------------------------------------------------------------------------- handler mode (4.2)

def _handler_objects(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    return [ob for ob in scene.objects if ob.get(TAG_MODE) == MODE_HANDLER and ob.type == 'MESH']


def _load_current_frame(obs: list[bpy.types.Object]) -> None:
    scene = bpy.context.scene
    for ob in obs:
        if ob.get(TAG_MODE) == MODE_HANDLER:
            _load_frame(ob, scene.frame_current)


def _load_frame(ob: bpy.types.Object, frame: int) -> None:
    """Write the frame's file into the object's mesh; a missing or unreadable file gives an empty mesh.

    Skipped in Edit Mode (as FLIP Fluids does: replacing the mesh under an edit session
    loses it) and for linked data. The mesh remembers which file version it holds, so
    sub-frame evaluations and repeated frame changes cost one ``stat``.
    """
    me = ob.data
    if me.is_editmode or me.library is not None:
        return
    frames = frame_range(ob)
    if frames is None:  # an old group not upgraded yet (a linked object): every frame, as before
        path = _frame_file(ob, frame)
    else:
        first, last = frames
        path = _frame_file(ob, min(frame, last)) if first <= min(frame, last) else None
    key = replay_frames.file_key(path)
    if me.get(_TAG_LOADED) == key:
        return
    vertices, faces = replay_frames.read_frame(path) if key else (None, None)
    if ob.get(TAG_KIND) == PARTICLES:
        replay_frames.write_points(me, vertices)
    else:
        replay_frames.write_surface(me, vertices, faces)
    me[_TAG_LOADED] = key


@persistent
def _on_frame_change(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph | None = None) -> None:
    """Load the new frame; on the render's own frame changes (``-a``) too, handlers being persistent."""
    for ob in _handler_objects(scene):
        _load_frame(ob, scene.frame_current)


@persistent
def _on_load_post(*_args) -> None:
    """Bring the replay objects up to date with this version and the cache, then show the frame.

    The cache may have changed since the file was saved (a farm baked or freed it), and a file
    saved by an older version has node groups without frame ranges. Handler mode: the file
    opens on some frame and shows it (its meshes were emptied before saving).
    """
    for ob in bpy.data.objects:
        if ob.get(TAG_KIND) in KINDS and ob.library is None and ob.get(TAG_MODE) in (MODE_IMPORT, MODE_HANDLER):
            mod = find_modifier(ob)
            if mod is not None:
                use_group(ob, mod, ensure_group(ob[TAG_KIND], ob[TAG_MODE]))
                _sync_frames(ob)
                _sync_time_scale(ob)
    _reload_frame()


def _reload_frame() -> None:
    scene = bpy.context.scene
    if scene is not None:
        _on_frame_change(scene)


@persistent
def _on_save_pre(*_args) -> None:
    """Empty the handler-driven meshes so the .blend does not store a frame of the cache.

    Saves stay small and fast, and a file opened without the add-on shows nothing rather than
    a stale frame. They are reloaded right after saving.
    """
    for me in {ob.data for scene in bpy.data.scenes for ob in _handler_objects(scene)}:
        if not me.is_editmode and me.library is None and me.get(_TAG_LOADED) is not None:
            me.clear_geometry()
            me.pop(_TAG_LOADED, None)


@persistent
def _on_save_post(*_args) -> None:
    _reload_frame()


_HANDLERS = (
    ("frame_change_post", _on_frame_change),
    ("load_post", _on_load_post),
    ("save_pre", _on_save_pre),
    ("save_post", _on_save_post),
)


def register():
    for attr, fn in _HANDLERS:
        handlers = getattr(bpy.app.handlers, attr)
        replay_frames.remove_handler(handlers, fn)
        handlers.append(fn)


def unregister():
    for attr, fn in _HANDLERS:
        replay_frames.remove_handler(getattr(bpy.app.handlers, attr), fn)
