"""The meshing stage: ``DIR/particles/particles_####.ply`` -> ``DIR/surface/surface_####.ply``.

Frames are independent (DESIGN.md section 2): any subset can run in any order,
in several processes or on several machines. A surface file records, in its
PLY header, the digest of the settings and of the particle file it was made
from; a frame whose record matches is skipped unless ``force``. A frame whose
particle file is missing or unreadable fails alone, with a reason naming the
file; the others are meshed.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..cache.cache_dir import refuse_links
from ..cache.jsonfile import read_cache_scene
from ..cache.lock import lock_cache
from ..cache.plyio import PlyError, header_comments, read_ply, write_ply
from ..errors import InputError, StorageError, is_storage_fault
from .settings import SurfaceSettings, surface_settings

log = logging.getLogger(__name__)

PARTICLES_DIR = "particles"
SURFACE_DIR = "surface"
_PARTICLE_RE = re.compile(r"^particles_(\d{4,})\.ply$")
_STAMP = "sph_addon.surface/1"


def particle_path(cache_dir: Path, frame: int) -> Path:
    """``DIR/particles/particles_####.ply`` (Blender frame, four digits at least)."""
    return Path(cache_dir) / PARTICLES_DIR / f"particles_{frame:04d}.ply"


def surface_path(cache_dir: Path, frame: int) -> Path:
    """``DIR/surface/surface_####.ply``."""
    return Path(cache_dir) / SURFACE_DIR / f"surface_{frame:04d}.ply"


def _available_frames(cache_dir: Path) -> list[int]:
    pdir = cache_dir / PARTICLES_DIR
    if not pdir.is_dir():
        return []
    return sorted(int(m.group(1)) for name in os.listdir(pdir) if (m := _PARTICLE_RE.match(name)))


def _file_digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stamp(settings_digest: str, source_digest: str) -> list[str]:
    return [_STAMP, f"settings {settings_digest}", f"source {source_digest}"]


def _read_particles(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions (N,3) float64, velocities (N,3) float64, material (N,) uint8 of a particle file, and its
    vertex records."""
    data = read_ply(path, exact=True)
    vert = data.vertices
    names = () if vert is None else vert.dtype.names
    if vert is None or not {"x", "y", "z"} <= set(names):
        raise PlyError(f"{path}: no vertex element with x y z properties")
    x = np.column_stack([vert["x"], vert["y"], vert["z"]]).astype(np.float64)
    if {"vx", "vy", "vz"} <= set(names):
        v = np.column_stack([vert["vx"], vert["vy"], vert["vz"]]).astype(np.float64)
    else:
        v = np.zeros_like(x)
    mat = vert["material"].astype(np.uint8) if "material" in names else np.zeros(len(x), np.uint8)
    if not (np.isfinite(x).all() and np.isfinite(v).all()):
        raise PlyError(f"{path}: non-finite particle positions or velocities")
    return x, v, mat, vert


# Particle fields a surface carries to its vertices when the particle file has them: heat's temperature (°C)
# and melt fraction, for a shader that glows where lava is hot.
SURFACE_SCALARS = ("temperature", "melt")


def _scalar_fields(vert: np.ndarray, x: np.ndarray, vertices: np.ndarray, settings: SurfaceSettings) -> dict:
    """The particles' ``SURFACE_SCALARS`` (records ``vert``) at the surface's ``vertices``, averaged as the
    velocity is (half the support)."""
    from .attributes import interpolate_to_vertices

    names = [n for n in SURFACE_SCALARS if n in (vert.dtype.names or ())]
    if not names or not len(vertices):
        return {}
    values = np.zeros((len(x), 3))
    for k, n in enumerate(names):
        values[:, k] = vert[n]
    at = interpolate_to_vertices(vertices, x, values, 0.5 * settings.support,
                                 fallback_radius=settings.support + np.sqrt(3.0) * settings.cube_size)
    return {n: at[:, k] for k, n in enumerate(names)}


def mesh_frame(cache_dir: str | os.PathLike, frame: int, settings: SurfaceSettings,
               force: bool = False) -> str:
    """Mesh one frame of a cache; return ``"meshed"`` or ``"skipped"``.

    Parameters
    ----------
    cache_dir : the cache directory.
    frame : Blender frame number.
    settings : resolved surface settings.
    force : re-mesh even if the surface file records the same settings and source.

    Raises
    ------
    PlyError, OSError, ValueError
        with a message naming the particle file.
    InputError
        the surface folder or file is a symbolic link (``cache.refuse_links``).
    """
    from .reconstruct import reconstruct_materials  # numba kernels: load only when meshing

    cache_dir = Path(cache_dir)
    src = particle_path(cache_dir, frame)
    dst = surface_path(cache_dir, frame)
    refuse_links(cache_dir, dst)
    if not src.is_file():
        raise FileNotFoundError(f"{src}: missing particle file")
    stamp = _stamp(settings.digest(), _file_digest(src))
    if not force and all(c in header_comments(dst) for c in stamp):
        return "skipped"
    x, v, mat, vert = _read_particles(src)
    try:
        mesh = reconstruct_materials(x, v, mat, settings)
    except ValueError as exc:
        raise ValueError(f"{src}: {exc}") from exc
    scalars = _scalar_fields(vert, x, mesh.vertices, settings)
    fields = [(n, "<f4") for n in ("x", "y", "z", "vx", "vy", "vz")]
    if settings.normals:
        fields += [(n, "<f4") for n in ("nx", "ny", "nz")]
    fields.append(("material", "u1"))
    fields += [(n, "<f4") for n in scalars]
    out = np.empty(len(mesh.vertices), np.dtype(fields))
    for d, n in enumerate("xyz"):
        out[n] = mesh.vertices[:, d]
        out["v" + n] = mesh.velocity[:, d]
        if settings.normals:
            out["n" + n] = mesh.normals[:, d]
    out["material"] = mesh.material
    for n, values in scalars.items():
        out[n] = values
    write_ply(dst, out, mesh.faces, comments=stamp + [f"frame {frame}"])
    return "meshed"


def _worker_init(threads: int) -> None:
    """Pool initializer: cap numba threads so jobs x threads <= cores."""
    import numba

    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    logging.basicConfig(level=logging.WARNING)


def _run_frame(cache_dir: str, frame: int, settings_dict: dict, force: bool) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    status = mesh_frame(cache_dir, frame, SurfaceSettings(**settings_dict), force)
    return frame, status, time.perf_counter() - t0


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _cache_surface_settings(cache_dir: Path) -> SurfaceSettings:
    """The surface settings of the scene a cache was baked from (InputError naming what is unusable)."""
    return surface_settings(read_cache_scene(cache_dir)[1])


def _meshing_stopped(frame: int, exc: OSError) -> StorageError:
    """Exit 3 for a write the storage refused (a full disk, a size limit): how to go on."""
    what = f"cannot write {exc.filename} ({exc.strerror})" if exc.filename else f"cannot write ({exc.strerror})"
    return StorageError(frame, f"meshing stopped at frame {frame}: {what}; free space (or raise the limit), then "
                               "run mesh again (the frames already meshed are kept and skipped)")


def mesh_cache(cache_dir: str | os.PathLike, frames: Iterable[int] | None = None, jobs: int = 1,
               force: bool = False, progress: Callable[[int, int, int], None] | None = None) -> dict:
    """Mesh the frames of a cache directory.

    Parameters
    ----------
    cache_dir : directory holding ``scene.json`` and ``particles/particles_####.ply``.
    frames : frame numbers to mesh; None = every particle file present.
    jobs : worker processes (>= 1); each gets ``cores // jobs`` numba threads.
    force : re-mesh frames whose surface is up to date.
    progress : called as ``progress(done, total, frame)`` after each frame, in
        this process.

    Returns
    -------
    dict
        ``cache_dir`` (str), ``settings`` (dict of the resolved settings, metres),
        ``settings_digest``, ``meshed`` and ``skipped`` (sorted frame lists),
        ``failed`` ({frame: reason naming the file}), ``seconds`` ({frame: wall
        seconds of that frame}), ``wall_s`` (total).

    Raises
    ------
    InputError
        the directory, ``scene.json`` or its surface settings are unusable, or
        there is no particle file at all (the message names the path or field).
    """
    t_start = time.perf_counter()
    cache_dir = Path(cache_dir)
    if jobs < 1:
        raise InputError("jobs", f"must be at least 1, got {jobs}")
    settings = _cache_surface_settings(cache_dir)
    refuse_links(cache_dir)
    available = _available_frames(cache_dir)
    if not available:
        raise InputError(str(cache_dir), f"no particle files ({PARTICLES_DIR}/particles_####.ply)")
    todo = sorted(set(available if frames is None else (int(f) for f in frames)))

    report = {"cache_dir": str(cache_dir), "settings": asdict(settings),
              "settings_digest": settings.digest(), "meshed": [], "skipped": [], "failed": {},
              "seconds": {}}
    total = len(todo)
    done = 0

    storage: tuple[int, OSError] | None = None  # the first write the storage refused

    def record(frame: int, status: str | None, seconds: float, error: BaseException | None) -> None:
        nonlocal done, storage
        done += 1
        if error is not None:
            reason = str(error)
            if str(particle_path(cache_dir, frame)) not in reason:
                reason = f"{particle_path(cache_dir, frame)}: {reason}"
            report["failed"][frame] = reason
            if not is_storage_fault(error):
                log.error("frame %d failed: %s", frame, reason)
            elif storage is None:  # said once, by the StorageError below
                storage = (frame, error)
        else:
            report[status].append(frame)
            report["seconds"][frame] = seconds
            log.info("frame %d %s in %.3f s", frame, status, seconds)
        if progress is not None:
            progress(done, total, frame)

    # Shared: meshing processes run side by side (farm chunks), never beside a bake or a free.
    with lock_cache(cache_dir, "mesh", shared=True):
        sdict = asdict(settings)
        if jobs == 1 or total <= 1:
            for frame in todo:
                if storage is not None:
                    break  # a full disk stays full: the next frames would fail the same way
                try:
                    _, status, sec = _run_frame(str(cache_dir), frame, sdict, force)
                    record(frame, status, sec, None)
                except (OSError, ValueError) as exc:  # PlyError is a ValueError
                    record(frame, None, 0.0, exc)
        else:
            jobs = min(jobs, total)
            threads = max(1, _cores() // jobs)
            # spawn, not fork: numba's threading layer and an already-running
            # parallel region do not survive fork (and Blender may host us).
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                                     initargs=(threads,)) as pool:
                futures = {pool.submit(_run_frame, str(cache_dir), f, sdict, force): f for f in todo}
                for fut in as_completed(futures):
                    frame = futures[fut]
                    try:
                        _, status, sec = fut.result()
                        record(frame, status, sec, None)
                    except (OSError, ValueError) as exc:
                        record(frame, None, 0.0, exc)
    if storage is not None:
        raise _meshing_stopped(*storage)
    report["meshed"].sort()
    report["skipped"].sort()
    report["failed"] = dict(sorted(report["failed"].items()))
    report["seconds"] = dict(sorted(report["seconds"].items()))
    report["wall_s"] = time.perf_counter() - t_start
    return report
