"""Alembic export of a baked Domain: its replay objects written by Blender's own exporter.

Why the replay objects and ``bpy.ops.wm.alembic_export`` rather than an Alembic writer of our
own: the replay already turns the cache into Blender geometry (on every supported version, with
the unit scale and the frame clamping of ``replay``), and Blender's exporter is what other DCCs
and Blender's own importer are tested against. Reading the file back
(``wm.alembic_import``) gives a Mesh Sequence Cache modifier, which renders with no add-on and
no Python on any Blender from 4.2 on: the farm path for 4.2, whose replay needs the add-on.

What the file holds (verified with bpy 4.2.23, 4.5.4 and 5.0.1, ``tests/blender/test_alembic.py``):

- ``<Domain>_Surface``: the surface mesh, one sample per frame with its own topology, and its
  ``velocity`` (written as Alembic velocities; Blender reads them back as ``velocity``);
- every Solid the bake deformed (``replay_solid``), under its own name: the artist's mesh as the
  particles carried it, one sample per frame, with its modifiers (a Subdivision Surface is written as
  Blender's exporter writes it for any mesh);
- with *Particles*, ``<Domain>_Particles``: the particles as the vertices of a mesh (no faces),
  with ``velocity``. Blender's exporter writes no point clouds (the replay's Geometry Nodes points
  read back as empty meshes: verified 4.5.4, 5.0.1), so a temporary *Points to Vertices* modifier
  turns them into vertices for the export.

Blender's exporter writes no other attributes: ``id``, ``material``, ``speed`` and ``age`` do not
reach the file (checked on all three versions).

The Alembic trap (BLENDER_NOTES.md section 7): the exporter writes a mesh as *one* sample unless
it thinks the mesh animated, and a mesh filled by a frame handler (4.2) or made by Geometry
Nodes reading files (4.5+) is not animated to it; a modifier other than Subdivision Surface
makes it so. The replay's own modifier does that as long as it renders, so a temporary empty
Geometry Nodes modifier is added only when no other modifier renders.

Everything the export changes to get there (selection, active object, render visibility,
the temporary modifiers and node group, the current frame) is put back afterwards. Main thread
only; synchronous (headless Blender has no event loop).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import bpy

from .export import meshes as export_meshes
from .export import snapshot as export
from .export.snapshot import ExportError
from .replay import objects as replay
from .replay import solid as replay_solid
from .replay.inputs import frame_range
from .replay.nodes import PARTICLES, SURFACE

log = logging.getLogger(__name__)

EXPORT_DIR = "export"      # under the cache directory: the default file is <cache>/export/<Domain>.abc
_MARKER = "SPH Alembic Export"   # name of the temporary modifiers


@dataclass(frozen=True)
class AlembicParams:
    filepath: str = ""       # the .abc to write ("//" = beside the .blend); "" = <cache>/export/<Domain>.abc
    frame_start: int = 0     # 0 = the first frame baked
    frame_end: int = 0       # 0 = the last frame baked
    surface: bool = True
    particles: bool = False
    solids: bool = True      # the Solids the bake deformed (their own objects)


@dataclass(frozen=True)
class AlembicResult:
    path: Path
    frame_start: int
    frame_end: int
    objects: tuple[str, ...]    # the replay objects written
    clamped: bool               # the frames asked for reached beyond the baked ones (those were left out)


def default_path(domain) -> Path:
    return export.cache_dir(domain) / EXPORT_DIR / f"{export_meshes.safe_name(domain.name)}.abc"


def output_path(domain, filepath: str) -> Path:
    """The file to write: ``filepath`` (``//`` resolved against the .blend, ``.abc`` added) or the default."""
    text = filepath.strip()
    if not text:
        return default_path(domain)
    if text.startswith("//") and not bpy.data.filepath:
        raise ExportError(f"{domain.name}: Alembic file", f"{text!r} is relative to the .blend file, which is not "
                                                          "saved yet; save the file first or choose an absolute path")
    path = Path(bpy.path.abspath(text))
    return path if path.suffix.lower() == ".abc" else path.with_name(path.name + ".abc")


def _cache_frames(root: Path, kind: str) -> list[int]:
    """The frames with a file of ``kind`` in the cache (``particles_0001.ply``, ``surface_0001.ply``)."""
    prefix = f"{kind}_"
    frames = []
    for p in (root / kind).glob(f"{prefix}*.ply"):
        digits = p.stem[len(prefix):]
        if digits.isdigit():
            frames.append(int(digits))
    return sorted(frames)


def plan(domain, params: AlembicParams) -> tuple[int, int, bool]:
    """The frames to export, (first, last, clamped); raises ExportError naming the Domain.

    Only frames whose files the cache holds for every kind exported: a frame outside them would
    be the nearest baked frame held (the replay's clamping), not the simulation.
    """
    kinds = [kind for kind, wanted in ((SURFACE, params.surface), (PARTICLES, params.particles)) if wanted]
    if not kinds and not params.solids:
        raise ExportError(domain.name, "nothing to export: choose the Surface, the Particles, the Solids or several")
    root = export.cache_dir(domain)
    # Solids alone: their frames are the particles' (a bake writes both together).
    found = {kind: _cache_frames(root, kind) for kind in kinds} or {PARTICLES: _cache_frames(root, PARTICLES)}
    if not _cache_frames(root, PARTICLES):
        raise ExportError(domain.name, f"nothing is baked in {root}: Bake it first")
    if SURFACE in found and not found[SURFACE]:
        raise ExportError(domain.name, f"no surface is meshed in {root}: Bake Mesh first (or export the "
                                       "Particles only)")
    lo = max(frames[0] for frames in found.values())
    hi = min(frames[-1] for frames in found.values())
    what = " and ".join("surface" if k == SURFACE else "particles" for k in found)
    if lo > hi:
        raise ExportError(domain.name, f"the baked particles and surface share no frame in {root}")
    first, last = params.frame_start or lo, params.frame_end or hi
    if last < first:
        raise ExportError(f"{domain.name}: Frames", f"the last frame {last} is before the first {first}")
    start, end = max(first, lo), min(last, hi)
    if start > end:
        raise ExportError(f"{domain.name}: Frames", f"frames {first}-{last} hold no baked {what}; the cache holds "
                                                    f"frames {lo}-{hi}")
    for kind, frames in found.items():
        have = set(frames)
        missing = [f for f in range(start, end + 1) if f not in have]
        if missing:
            shown = ", ".join(str(f) for f in missing[:8]) + (", ..." if len(missing) > 8 else "")
            which = f"frames {shown} have" if len(missing) > 1 else f"frame {shown} has"
            raise ExportError(domain.name, f"{which} no {kind} file in {root / kind} "
                                           f"({'meshing not finished? Bake Mesh' if kind == SURFACE else 'Bake'} "
                                           "or export fewer frames)")
    return start, end, (start, end) != (first, last)


def export_alembic(context, domain, params: AlembicParams) -> AlembicResult:
    """Write the Domain's replay objects to an Alembic file over the baked frames; raises ExportError.

    The file appears whole or not at all: it is written beside its final name and renamed.
    """
    start, end, clamped = plan(domain, params)
    path = output_path(domain, params.filepath)
    particles, surface = replay.find_replay(domain)
    wanted = [ob for ob, kind in ((surface, params.surface), (particles, params.particles)) if kind]
    if any(ob is None for ob in wanted):
        raise ExportError(domain.name, "has no replay objects to export: Bake it in this file (or open the file "
                                       "the farm command saved)")
    if params.solids:
        replay_solid.refresh(domain)
        wanted += [ob for ob in replay_solid.solids_of(domain) if (frame_range(ob) or (1, 0))[0] <= start]
    if not wanted:
        raise ExportError(domain.name, "nothing to export: the bake deformed no Solid; choose the Surface or the "
                                       "Particles")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{domain.name}: Alembic file", f"{path.parent} cannot be created "
                                                          f"({exc.strerror or exc})") from None
    # The replay reads only the frames on disk now (a bake may have ended since the file was saved).
    replay.sync_frames(domain)
    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial.abc")
    try:
        with _prepared(context, wanted, particles):
            result = bpy.ops.wm.alembic_export(
                filepath=str(partial), start=start, end=end, selected=True, evaluation_mode='RENDER',
                as_background_job=False, export_hair=False, export_particles=False)
        if 'FINISHED' not in result or not partial.is_file() or partial.stat().st_size == 0:
            raise ExportError(f"{domain.name}: Alembic file", f"Blender's Alembic exporter wrote nothing to {path}")
        os.replace(partial, path)
    except (OSError, RuntimeError) as exc:
        raise ExportError(f"{domain.name}: Alembic file", f"{path} cannot be written ({exc})") from None
    finally:
        partial.unlink(missing_ok=True)
    log.info("sph: exported %s frames %d-%d to %s", domain.name, start, end, path)
    return AlembicResult(path, start, end, tuple(ob.name for ob in wanted), clamped)


class _prepared:
    """Select only ``obs``, make them renderable and animated to the exporter; undo it all on exit."""

    def __init__(self, context, obs, particles):
        self.context, self.obs, self.particles = context, obs, particles

    def __enter__(self):
        scene, layer = self.context.scene, self.context.view_layer
        self.frame = (scene.frame_current, scene.frame_subframe)
        self.active = layer.objects.active
        self.selected = {ob.name for ob in layer.objects if ob.select_get()}
        self.visibility = {ob.name: (ob.hide_render, ob.hide_select, ob.hide_get()) for ob in self.obs}
        self.added: list[tuple[bpy.types.Object, bpy.types.Modifier]] = []
        self.group = None
        try:
            self._prepare(layer)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _prepare(self, layer) -> None:
        for ob in layer.objects:
            if ob.select_get():
                ob.select_set(False)
        for ob in self.obs:
            # The particles do not render by default (replay.show_particles_in_render), and the
            # RENDER evaluation the export uses would leave them out; a hidden object cannot be selected.
            ob.hide_render = ob.hide_select = False
            try:
                ob.hide_set(False)
                ob.select_set(True)
            except RuntimeError:  # not in this view layer
                pass
            if not ob.select_get():
                raise ExportError(ob.name, "cannot be selected for the export (is it in this view layer, "
                                           "with its collection included?)")
            if ob is self.particles:
                self.added.append((ob, self._modifier(ob, self._points_to_vertices())))
            elif not any(m.show_render and m.type != 'SUBSURF' for m in ob.modifiers):
                self.added.append((ob, self._modifier(ob, None)))  # the trap: see the module docstring
        layer.objects.active = self.obs[0]

    def __exit__(self, *exc):
        scene, layer = self.context.scene, self.context.view_layer
        for ob, mod in self.added:
            ob.modifiers.remove(mod)
        if self.group is not None:
            bpy.data.node_groups.remove(self.group)
        for ob in self.obs:
            hide_render, hide_select, hidden = self.visibility[ob.name]
            ob.hide_render = hide_render
            if ob.hide_get() != hidden:
                ob.hide_set(hidden)
            ob.hide_select = hide_select
        for ob in layer.objects:
            if ob.select_get() != (ob.name in self.selected):
                ob.select_set(ob.name in self.selected)
        layer.objects.active = self.active
        scene.frame_set(self.frame[0], subframe=self.frame[1])
        return False

    def _modifier(self, ob, group) -> bpy.types.Modifier:
        mod = ob.modifiers.new(_MARKER, 'NODES')
        mod.node_group = group
        return mod

    def _points_to_vertices(self) -> bpy.types.NodeTree:
        """Group Input -> Points to Vertices -> Group Output: the exporter writes meshes, not point clouds."""
        ng = bpy.data.node_groups.new(_MARKER, "GeometryNodeTree")
        ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
        to_vertices = ng.nodes.new("GeometryNodePointsToVertices")
        ng.links.new(ng.nodes.new("NodeGroupInput").outputs[0], to_vertices.inputs["Points"])
        ng.links.new(to_vertices.outputs[0], ng.nodes.new("NodeGroupOutput").inputs[0])
        self.group = ng
        return ng
