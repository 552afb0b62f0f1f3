"""Bake, mesh and free a Domain's cache: the one code path behind the operators,
the farm command and scripts.

A task is prepared on the main thread (export from Blender, every check that
can fail, nothing simulated yet) and returns a ``run(report, should_stop)``
callable that touches no ``bpy``, so the UI can run it on a worker thread and
headless Blender can call it directly (no event loop there: BLENDER_NOTES.md
section 5). ``finish`` runs on the main thread afterwards and points the replay
objects at the new files.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bpy

from ..core import bake as core_bake
from ..core.cache.cache_dir import CacheDir, free_cache
from ..core.cache.lock import lock_cache
from ..core.durations import eta_seconds, format_duration
from ..core.errors import InputError
from ..core.scene.params import resolve
from ..core.surface.settings import SURFACE_PARAMETERS, settings_from_values
from . import runtime
from .export import meshes as export_meshes
from .export import snapshot as export
from .export import values as export_values

log = logging.getLogger(__name__)


@dataclass
class Status:
    """Progress sent by a running task (worker thread -> main thread)."""

    kind: str
    frame: int
    done: int
    total: int
    particles: int = 0
    elapsed_s: float = 0.0
    note: str = ""  # what the task is doing between frames (compiling the solver), shown instead of the frame

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    def text(self) -> str:
        if self.note:
            return self.note[:1].upper() + self.note[1:]
        left = self.total - self.done
        eta = f", ETA {format_duration(eta_seconds(self.elapsed_s, self.done, left))}" if self.done and left > 0 else ""
        parts = f", {self.particles:,} particles" if self.particles else ""
        return f"{self.kind.title()} frame {self.frame} ({self.done}/{self.total}){parts}{eta}"


@dataclass
class Task:
    """A prepared bake or meshing run. ``run`` is thread-safe (no bpy)."""

    kind: str
    domain_name: str
    cache_dir: Path
    frame_start: int
    frame_end: int
    run: Callable[[Callable[[Status], None], Callable[[], bool]], dict]
    origins: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # the export's notes for the artist (operators report them)

    def explain(self, exc: InputError) -> InputError:
        return export.explain(exc, self.origins, self.cache_dir, self.domain_name)


def _frames(domain, start: int, end: int) -> tuple[int, int]:
    """The frames to work on: the operator's, where given (non-zero), else the Domain's."""
    d = domain.sph.domain
    return (start or d.frame_start, end or d.frame_end)


def prepare_bake(scene, domain, frame_start: int = 0, frame_end: int = 0, resume: bool = False,
                 replace: bool = False, mesh: bool = False) -> Task:
    """Export the scene and check it can be baked; raise ExportError/InputError naming what is wrong.

    The scene is validated once, by the export; the core's checks of the cache reuse that
    validated scene, and the task's ``run`` bakes it without checking again. ``mesh``: then
    mesh every baked frame of the range (unless cancelled), as Bake Mesh would; the result's
    ``"mesh"`` says how that went.
    """
    # First: the export and the core's checks import numba modules, and numba reads its cache
    # folder when it is first imported (runtime.prepare_numba sets it).
    runtime.prepare_numba()
    root = export.cache_dir(domain)
    # Asked before exporting, so that a refused bake writes nothing, in the artist's words.
    if not resume and not replace and CacheDir(root).has_bake():
        raise export.ExportError(f"{domain.name}: Cache Directory",
                                 f"{root} already holds a bake; Resume it, Free it, or bake with replace")
    exported = export.export(scene, domain, _frames(domain, frame_start, frame_end))
    try:
        prepared = core_bake.prepare(exported.scene, root, resume=resume, force=replace)
    except InputError as exc:
        raise export.explain(exc, exported.origins, root, domain.name) from None
    settings = surface_settings(domain) if mesh else None
    baked = prepared.scene

    def run(report: Callable[[Status], None], should_stop: Callable[[], bool]) -> dict:
        def progress(p: core_bake.Progress) -> None:
            report(Status("bake", p.frame, p.frame - p.frame_start, p.frame_end - p.frame_start, p.particles,
                          p.elapsed_seconds))

        def notice(text: str) -> None:
            report(Status("bake", baked.frame_start, 0, baked.frame_end - baked.frame_start, note=text))

        manifest = core_bake.bake(prepared, progress=progress, should_stop=should_stop, notice=notice)
        if settings is None or should_stop():
            return manifest
        frames = particle_frames(root, baked.frame_start, baked.frame_end)
        return {**manifest, "mesh": mesh_frames(root, frames, settings, False, report, should_stop)}

    return Task("bake", domain.name, root, baked.frame_start, baked.frame_end, run, exported.origins,
                exported.notes)


def surface_settings(domain):
    d = domain.sph.domain
    vals = resolve(SURFACE_PARAMETERS, export_values.values(d.surface, SURFACE_PARAMETERS), "surface")
    try:
        return settings_from_values(vals, export_values.spacing(domain))
    except InputError as exc:
        raise export.explain(exc, {"surface": domain.name}) from None


def prepare_mesh(scene, domain, frame_start: int = 0, frame_end: int = 0, replace: bool = False) -> Task:
    """Mesh the cached particle frames with the Domain's current surface settings."""
    runtime.prepare_numba()
    root = export.cache_dir(domain)
    settings = surface_settings(domain)
    lo, hi = _frames(domain, frame_start, frame_end) if frame_start or frame_end else (None, None)
    frames = particle_frames(root, lo, hi)
    if not frames:
        raise export.ExportError(f"{domain.name}: Cache Directory",
                                 f"{root} has no baked particle frames to mesh; Bake first")

    # Refused here, on the main thread with the Domain's name, while a bake or a free holds the cache;
    # mesh_frames holds the lock (shared, as the command line's mesh does) while it writes.
    try:
        lock_cache(root, "mesh", shared=True).release()
    except InputError as exc:
        raise export.explain(exc, {}, root, domain.name) from None

    def run(report: Callable[[Status], None], should_stop: Callable[[], bool]) -> dict:
        return mesh_frames(root, frames, settings, replace, report, should_stop)

    return Task("mesh", domain.name, root, frames[0], frames[-1], run)


def particle_frames(root: Path, lo: int | None = None, hi: int | None = None) -> list[int]:
    """The frames with a particle file in the cache, sorted, within [lo, hi] where given."""
    frames = sorted(int(p.stem.split("_")[-1]) for p in (root / "particles").glob("particles_*.ply"))
    return [f for f in frames if (lo is None or f >= lo) and (hi is None or f <= hi)]


def mesh_frames(root: Path, frames: list[int], settings, replace: bool, report: Callable[[Status], None],
                should_stop: Callable[[], bool]) -> dict:
    """Mesh ``frames`` one by one (no bpy: runs on a worker); frames up to date are skipped unless ``replace``.

    Returns ``{"meshed": [...], "skipped": [...], "failed": {frame: reason}}``; a frame that fails
    does not stop the others.
    """
    from ..core.surface.stage import mesh_frame, particle_path

    t0 = time.perf_counter()
    result = {"meshed": [], "skipped": [], "failed": {}}
    with lock_cache(root, "mesh", shared=True):  # never beside a bake or a free of another process
        for k, frame in enumerate(frames):
            if should_stop():
                break
            try:
                result[mesh_frame(root, frame, settings, force=replace)].append(frame)
            except (OSError, ValueError) as exc:
                reason = str(exc)
                result["failed"][frame] = reason if str(particle_path(root, frame)) in reason else \
                    f"{particle_path(root, frame)}: {reason}"
            report(Status("mesh", frame, k + 1, len(frames), 0, time.perf_counter() - t0))
    return result


def finish(scene, task: Task) -> None:
    """Main thread, after a task ended (even cancelled): show the cache in Blender."""
    domain = scene.objects.get(task.domain_name)
    if domain is None:
        return
    from . import dynamic_colliders, liquid_materials, migrate
    from .replay import objects as replay
    from .replay import solid as replay_solid

    # A Domain appended from an older file may have missed the load handler.
    migrate.upgrade_render_particles(domain)
    d = domain.sph.domain
    looks = liquid_materials.cache_looks(export.cache_dir(domain))
    look = liquid_materials.material_for(looks) if looks is not None else None
    # The cache is in metres: the replay objects are scaled back to scene units (export_values.unit_scale).
    unit = export_values.unit_scale(scene, domain)
    shown = replay.ensure_replay(domain, d.cache_directory, 0.5 * export_values.spacing(domain) * unit,
                                 d.render_particles, look)
    for ob in shown:
        if unit != 1.0 or "sph_unit_scale" in ob:  # objects never scaled keep whatever the artist set
            ob.scale = (1.0 / unit,) * 3
            ob["sph_unit_scale"] = unit
    # The Solids the cache deforms: their own objects, in their own (scene) units.
    replay_solid.ensure_solids(domain, d.cache_directory, export.cache_dir(domain), unit)
    # The Dynamic colliders it moved: keyframes, so the file plays and renders without the add-on.
    dynamic_colliders.key_bodies(scene, domain, export.cache_dir(domain), unit)
    replay.refresh(domain)


def console(text: str) -> None:
    """A line for the person watching headless Blender (a terminal or a farm log), shown at once.

    The echo of the farm command and of operators run in background mode; the interface
    shows progress in the Domain panel instead.
    """
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def run_sync(scene, task: Task, echo: Callable[[str], None] | None = None,
             should_stop: Callable[[], bool] = lambda: False) -> dict:
    """Run a prepared task on this thread (headless, scripts, the farm command).

    Progress lines, at most one a second and the last one, go to ``echo`` when given (the farm
    command prints them), else to the log.
    """
    last = [0.0]
    echo = echo or log.info

    def report(status: Status) -> None:
        now = time.monotonic()
        if status.note or now - last[0] > 1.0 or status.done == status.total:
            last[0] = now
            echo(status.text())

    try:
        result = task.run(report, should_stop)
    except InputError as exc:
        raise task.explain(exc) from None
    finish(scene, task)
    return result


def free(domain) -> int:
    """Delete what bakes of this Domain wrote (particles, surfaces, checkpoints, exported input); keep the rest.

    The Dynamic colliders its bakes keyed get their own transform and animation back.
    """
    root = export.cache_dir(domain)
    n = free_cache(root)  # under the cache lock: never empties a cache another process writes
    inputs = root / export.INPUT_DIR
    if inputs.is_dir():
        for p in inputs.iterdir():
            exported_mesh = p.suffix == ".ply" and p.name.startswith(("fluid_", "collider_", "solid_"))
            if p.name == export.SCENE_FILE or exported_mesh:
                p.unlink()
                n += 1
        if not any(inputs.iterdir()):
            inputs.rmdir()
    if root.is_dir() and not any(root.iterdir()):
        root.rmdir()
    from . import dynamic_colliders
    from .replay import objects as replay

    scene = domain.users_scene[0] if domain.users_scene else bpy.context.scene
    dynamic_colliders.restore(scene, domain)
    replay.refresh(domain)
    return n


_estimates: dict[tuple, tuple[float, tuple[int, float]]] = {}


def particle_estimate(scene, domain) -> tuple[int, float]:
    """(particles, MiB) by the last frame: the Fluid objects' volumes at the Domain's spacing plus what
    the Inflow objects emit over the Domain's frames (:func:`inflow_volume`).

    The Domain panel shows it, and panels redraw many times a second (every progress update
    during a bake): the result is reused for a second unless the spacing or a Fluid moves.
    """
    spacing = max(float(domain.sph.domain.particle_spacing), 1e-6)
    fluids = export.members(scene, 'FLUID') + export.members(scene, 'SOLID')
    inflows = export.members(scene, 'INFLOW')
    d = domain.sph.domain
    key = (scene.name, spacing, tuple((ob.name, tuple(map(tuple, ob.matrix_world))) for ob in fluids),
           tuple((ob.name, *_inflow_settings(ob)) for ob in inflows), d.frame_start, d.frame_end,
           scene.render.fps, scene.render.fps_base)
    now = time.monotonic()
    hit = _estimates.get(key)
    if hit is not None and now - hit[0] < 1.0:
        return hit[1]
    _estimates.clear()
    _estimates[key] = (now, _estimate(fluids, inflows, spacing, scene, domain))
    return _estimates[key][1]


def _inflow_settings(ob) -> tuple:
    s = ob.sph.inflow
    return (s.shape, s.radius, tuple(s.size), s.rate, s.speed, s.frame_start, s.frame_end)


def inflow_volume(inflows, scene, domain) -> float:
    """Volume (m³) the Inflow objects emit over the Domain's frames: rate (or area x speed, the core's
    rule) times the time each one emits within the range (its own frame range clipped to the Domain's)."""
    import math

    d = domain.sph.domain
    fps = scene.render.fps / scene.render.fps_base
    volume = 0.0
    for ob in inflows:
        s = ob.sph.inflow
        area = math.pi * s.radius ** 2 if s.shape == "disc" else s.size[0] * s.size[1]
        rate = s.rate if s.rate > 0 else area * s.speed
        # The bake's time runs from frame_start to frame_end; an inflow emits while the (fractional)
        # frame is within its own range (core.sources.Inflow.emit).
        frames = min(s.frame_end, d.frame_end) - max(s.frame_start, d.frame_start)
        volume += rate * max(frames, 0) / fps
    return volume


def fluid_volume(fluids) -> float:
    """Volume (m³) the Fluid objects enclose as evaluated now; objects without a surface count 0."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    volume = 0.0
    for ob in fluids:
        try:
            co, tris = export_meshes.mesh_arrays(ob, depsgraph, "world")
        except InputError:
            continue
        volume += abs(export_meshes.signed_volume(co, tris)) if len(tris) else 0.0
    return volume


def _estimate(fluids, inflows, spacing: float, scene, domain) -> tuple[int, float]:
    from ..core.scene.scene_file import _EXTRA_BYTES_PER_PARTICLE
    from ..core.world.state import bytes_per_particle

    n = int((fluid_volume(fluids) + inflow_volume(inflows, scene, domain)) / spacing ** 3)
    return n, n * (bytes_per_particle() + _EXTRA_BYTES_PER_PARTICLE) / 2**20

