"""The bake: simulate a scene frame by frame into a cache directory, resumably.

``bake()`` is the one driver used by the command line, the Blender operators
(synchronously in headless mode, from a worker thread in the UI) and the
tests. It checks everything it can before simulating (scene, output folder,
existing cache), writes each frame atomically, checkpoints the full state, and
on ``resume=True`` continues from the last checkpoint to the same result as an
uninterrupted bake (the step is deterministic: every kernel gathers into its
own particle in a fixed order).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cache.ages import MANIFEST_KEY as BIRTHS_KEY
from .cache.ages import Births
from .cache.atomic import write_json
from .cache.cache_dir import CacheDir, refuse_links
from .cache.checkpoint_checks import check_feature_state, limits_of
from .cache.checks import check_checkpoint
from .cache.jsonfile import read_json
from .cache.lock import check_unlocked, lock_cache
from .durations import eta_seconds
from .errors import InputError, SimulationError, StorageError, is_storage_fault
from .numerics.compile_watch import watch_compiles
from .scene.preflight import check_bake
from .scene.scene_file import FORMAT, Scene

if TYPE_CHECKING:  # imported when a bake runs: it loads numba, which Blender's register() must not
    from .cache.deformed_meshes import DeformedMeshes

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Progress:
    """Sent to the progress callback after every frame."""

    frame: int
    frame_start: int
    frame_end: int
    particles: int
    substeps: int
    frame_seconds: float
    elapsed_seconds: float

    @property
    def fraction(self) -> float:
        total = max(1, self.frame_end - self.frame_start)
        return (self.frame - self.frame_start) / total

    @property
    def eta_seconds(self) -> float:
        return eta_seconds(self.elapsed_seconds, self.frame - self.frame_start, self.frame_end - self.frame)


def parse_frames(text: str | None, where: str = "--frames") -> tuple[int, int] | None:
    """'A-B' or 'A' -> (A, B); None passes through."""
    if text is None:
        return None
    try:
        if "-" in text.strip()[1:]:
            cut = text.index("-", 1)
            a, b = int(text[:cut]), int(text[cut + 1:])
        else:
            a = b = int(text)
    except ValueError:
        raise InputError(where, f"expected A-B (e.g. 1-48), got {text!r}") from None
    if b < a:
        raise InputError(where, f"the last frame {b} is before the first {a}")
    return a, b


def _check_writable(root: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write_test_", dir=root)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(str(root), f"the output directory cannot be written ({exc.strerror}); "
                                    "choose another --out") from None


@dataclass(frozen=True)
class PreparedBake:
    """A bake that passed every check of :func:`prepare`; :func:`bake` runs it without checking again."""

    scene: Scene
    cache: CacheDir
    resume: bool = False  # continue from the cache's last checkpoint
    force: bool = False   # replace the bake the cache holds
    # The bake's SDF folder (deferred ``SDFCache``) holding the fields preflight built: reused, not rebuilt.
    sdf_cache: Any = field(default=None, compare=False)


def prepare(scene: str | os.PathLike | Scene, out_dir: str | os.PathLike, frames: tuple[int, int] | None = None,
            resume: bool = False, force: bool = False) -> PreparedBake:
    """Every check a bake makes before it starts; raises InputError, writes nothing.

    Parameters
    ----------
    scene : a scene file, read and validated here; or a Scene validated already (Blender's
        export), used as it is: each bake validates its scene once.
    out_dir : the cache directory.
    frames : override of the scene's (frame_start, frame_end), applied before validation.
    resume, force : as in :func:`bake`.
    """
    from .colliders.shapes.sdf_cache import SDFCache

    cache = CacheDir(out_dir)
    sdf_cache = SDFCache(cache.root / "sdf", deferred=True)
    scene, _ = check_bake(scene, frames, sdf_cache)
    root = cache.root
    if root.exists() and not root.is_dir():
        raise InputError(str(root), "exists and is not a directory")
    check_unlocked(root)  # "busy, by whom" says more than "already holds a bake"; bake() locks for real
    refuse_links(root)
    if resume:
        state = cache.summary()
        if not state.baked:
            raise InputError(str(root), "there is no bake to resume here (no manifest.json); run without --resume")
        # Compared as JSON, not re-validated: its mesh paths are relative to the original
        # scene file, not to the cache directory it is stored in.
        if _read_stored(cache) != _stored_raw(scene):
            raise InputError(str(cache.scene_path), "the scene changed since this bake started; "
                                                    "bake again with --force to start over")
        if state.checkpoint is None:
            if state.frames_done:
                raise InputError(str(root), "the bake has no checkpoint to resume from; bake again with --force")
            # Stopped before its first frame: nothing to continue, nothing to lose; start it again.
            resume, force = False, True
    elif cache.has_bake() and not force:
        raise InputError(str(root), "already holds a bake; use --resume to continue it or --force to replace it")
    if root.exists():
        _check_writable(root)
    else:
        # Nothing may be created for bad input: check the nearest existing ancestor instead.
        parent = root.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise InputError(str(root), f"the output directory cannot be created ({parent} is a file); "
                                        "choose another --out")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InputError(str(root), f"the output directory cannot be created ({parent} is not writable); "
                                        "choose another --out")
    return PreparedBake(scene, cache, resume, force, sdf_cache)


def _read_stored(cache: CacheDir) -> dict:
    try:
        return read_json(cache.scene_path, "stored scene")
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message}; bake again with --force") from None


def _stored_raw(scene: Scene) -> dict:
    """The scene as the cache stores it: the frames baked, in the current format (an older file that
    loaded is the same scene in it: see ``scene.READABLE_FORMATS``)."""
    raw = copy.deepcopy(scene.raw)
    raw["format"] = FORMAT
    raw["frame_start"], raw["frame_end"] = scene.frame_start, scene.frame_end
    return raw


def bake(scene: str | os.PathLike | PreparedBake, out_dir: str | os.PathLike | None = None,
         frames: tuple[int, int] | None = None, resume: bool = False, force: bool = False,
         progress: Callable[[Progress], None] | None = None, should_stop: Callable[[], bool] | None = None,
         notice: Callable[[str], None] | None = None) -> dict:
    """Bake a scene file into ``out_dir``, or run a :class:`PreparedBake`; return the manifest.

    Parameters
    ----------
    scene : a scene file, checked here by :func:`prepare`; or what ``prepare`` returned (the
        Blender operators prepare on the main thread and bake on a worker), not checked again:
        ``out_dir``, ``frames``, ``resume`` and ``force`` are then the prepared ones.
    frames : override of the scene's (frame_start, frame_end).
    resume : continue from the last checkpoint of an existing bake of the same scene.
    force : replace an existing bake (only files a bake writes are deleted).
    progress : called after every frame with a :class:`Progress`.
    should_stop : polled between frames; when it returns True the bake stops, resumable.
    notice : told, in a sentence, while the solver is being compiled (the first bake on a machine:
        ``numerics.compile_watch``).

    Raises
    ------
    InputError : before anything is written, for bad scenes, paths or an existing cache.
    SimulationError : the frame that failed; every earlier frame stays readable and resumable.
    """

    if isinstance(scene, PreparedBake):
        if out_dir is not None or frames is not None or resume or force:
            raise TypeError("bake(PreparedBake) takes out_dir, frames, resume and force from prepare()")
        prepared = scene
    elif out_dir is None:
        raise TypeError("bake() of a scene file needs out_dir")
    else:
        prepared = prepare(scene, out_dir, frames, resume, force)
    created = _missing_folders(prepared.cache.root)
    try:
        # Held for the whole bake; the checks of prepare() that depend on the cache are made again
        # under it, since another process may have baked here between them and now.
        with lock_cache(prepared.cache.root, "bake"):
            if not prepared.resume and not prepared.force and prepared.cache.has_bake():
                raise InputError(str(prepared.cache.root), "already holds a bake; use --resume to continue it "
                                                           "or --force to replace it")
            try:
                with watch_compiles(notice):
                    return _bake_locked(prepared, progress, should_stop)
            except OSError as exc:
                if not is_storage_fault(exc):
                    raise
                raise _storage_error(prepared.cache, exc) from None
    except InputError:
        # Bad content found while setting up (a mesh enclosing nothing): the folders the lock
        # created go too, so that bad input leaves nothing behind.
        for folder in created:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _missing_folders(root: Path) -> list[Path]:
    """``root`` and its ancestors that do not exist yet, deepest first."""
    out = []
    while not root.exists() and root != root.parent:
        out.append(root)
        root = root.parent
    return out


def _storage_error(cache: CacheDir, exc: OSError) -> StorageError:
    try:
        done = cache.read_manifest()["frames_done"]
    except InputError:
        done = []
    what = f"cannot write {exc.filename} ({exc.strerror})" if exc.filename else f"cannot write ({exc.strerror})"
    if done:
        return StorageError(max(done) + 1, f"the bake stopped at frame {max(done) + 1}: {what}; frames up to "
                                           f"{max(done)} are kept: free space (or raise the limit), then "
                                           "continue with --resume")
    return StorageError(None, f"the bake stopped before its first frame: {what}; free space (or raise the "
                              "limit), then run the same command again")


def _bake_locked(prepared: PreparedBake, progress, should_stop) -> dict:
    from .cache.deformed_meshes import DEFORMED_KEY, DeformedMeshes
    from .world.simulation import Simulation

    scene, cache, resume, force = prepared.scene, prepared.cache, prepared.resume, prepared.force
    sim = Simulation(scene, sdf_cache_dir=cache.root / "sdf", sdf_cache=prepared.sdf_cache)
    # Bound before a checkpoint is restored: from where the particles were emitted, the same in a resume.
    deformed = DeformedMeshes(scene, sim.state.arrays)
    if resume:
        manifest = cache.read_manifest()
        arrays, meta = _checked_checkpoint(cache, manifest["checkpoint"], sim)
        cache.remove_stale_temps()
        sim.restore(arrays, meta)
        deformed.restore(cache, sim.frame)
        # Frames after the checkpoint may exist from the killed run; they are rewritten identically.
        manifest["frames_done"] = [f for f in manifest["frames_done"] if f <= sim.frame]
        # A bake started by a version that wrote no ages keeps writing none.
        births = Births.from_manifest(manifest, str(cache.manifest_path))
        if births is not None:
            births.truncate(sim.frame)
        log.info("resuming %s at frame %d", scene.name, sim.frame)
    else:
        if force and cache.root.exists():
            cache.free()
        cache.root.mkdir(parents=True, exist_ok=True)
        write_json(cache.scene_path, _stored_raw(scene))
        manifest = cache.new_manifest(scene.name, scene.frame_start, scene.frame_end)
        if deformed:
            manifest[DEFORMED_KEY] = deformed.vertex_counts()
        # Written before the first frame: a bake stopped before it (a signal, a full disk) leaves a
        # cache that says what it is, and that a plain bake or --resume starts again (prepare).
        cache.write_manifest(manifest)
        births = Births()
        first_dt = scene.simulation["time_scale"] / (scene.fps * sim.substeps_for_frame()) if sim.state.n else None
        derived = {m.name: m.derived_constants(first_dt) for m in sim.models}
        manifest["derived"] = {name: c for name, c in derived.items() if c}
        if should_stop is not None and should_stop():
            # Stopped while setting up (distance fields can take minutes): no frame is in progress to
            # finish, and the manifest written above makes a plain re-run start the bake again.
            log.info("bake stopped before its first frame")
            return manifest
        stats = sim.check_and_stats()
        _write_frame(cache, sim, manifest, stats.as_dict(), births, checkpoint=True, deformed=deformed)

    mesher = _frame_mesher(scene, cache)
    if mesher is not None and not resume:
        mesher(scene.frame_start)
    every = scene.simulation["checkpoint_every"]
    t_start = time.perf_counter()
    first = sim.frame
    while sim.frame < scene.frame_end:
        if should_stop is not None and should_stop():
            log.info("bake stopped at frame %d (resumable)", sim.frame)
            break
        t0 = time.perf_counter()
        stats = sim.advance_frame()
        last = sim.frame == scene.frame_end
        _write_frame(cache, sim, manifest, stats.as_dict(), births,
                     checkpoint=last or (sim.frame - scene.frame_start) % every == 0, deformed=deformed)
        if mesher is not None:
            mesher(sim.frame)
        if progress is not None:
            now = time.perf_counter()
            progress(Progress(sim.frame, first, scene.frame_end, stats.particles, stats.substeps, now - t0,
                              now - t_start))
    else:
        manifest["complete"] = True
        cache.write_manifest(manifest)
    return manifest


def _checked_checkpoint(cache: CacheDir, frame: int, sim) -> tuple[dict, dict]:
    """The checkpoint of ``frame``, checked against the simulation that restores it (InputError naming it)."""
    arrays, meta = cache.read_checkpoint(frame, max_bytes=int(sim.scene.simulation["memory_budget_mb"] * 2**20))
    specs = {name: (a.shape[1:], a.dtype) for name, a in sim.state.arrays.items()}
    check_checkpoint(arrays, meta, specs, frame, len(sim.scene.materials), len(sim.inflows),
                     cache.checkpoint_path(frame))
    check_feature_state(arrays, meta, meta["next_id"], limits_of(sim), cache.checkpoint_path(frame))
    return arrays, meta


def _frame_mesher(scene: Scene, cache: CacheDir) -> Callable[[int], None] | None:
    """Meshes a frame right after it is written, when the scene's surface asks for it."""
    if not scene.surface.get("mesh_during_bake"):
        return None
    from .surface.settings import surface_settings
    from .surface.stage import mesh_frame

    settings = surface_settings(scene.raw)
    return lambda frame: mesh_frame(cache.root, frame, settings, force=True)


def _write_frame(cache: CacheDir, sim, manifest: dict, stats: dict, births: Births | None,
                 checkpoint: bool, deformed: DeformedMeshes | None = None) -> None:
    st = sim.state
    frame = sim.frame
    age = None
    if births is not None:
        births.record(frame, st.next_id)
        manifest[BIRTHS_KEY] = births.pairs
        age = births.ages(st.ids, frame, sim.scene.physics_fps)  # physical seconds, as velocities are
    cache.write_particles(frame, st.x, st.v, st.ids, st.material, sim.cache_fields(), age=age)
    if deformed:
        # Before the manifest lists the frame, like the particles: a listed frame has all its files.
        deformed.write(cache, st.arrays, frame)
    if sim.bodies:
        cache.write_bodies(frame, sim.bodies.transforms(frame))
    if checkpoint:
        arrays, meta = sim.checkpoint()
        cache.write_checkpoint(frame, arrays, meta)
        previous = manifest.get("checkpoint")
        manifest["checkpoint"] = frame
    if frame not in manifest["frames_done"]:
        manifest["frames_done"].append(frame)
    manifest["stats"][str(frame)] = stats
    manifest["removed"] = {sim.scene.materials[k].name: v for k, v in st.removed.items()}
    cache.write_manifest(manifest)
    if checkpoint and previous is not None and previous != frame:
        cache.checkpoint_path(previous).unlink(missing_ok=True)


__all__ = ["bake", "prepare", "PreparedBake", "parse_frames", "Progress", "SimulationError", "InputError"]
