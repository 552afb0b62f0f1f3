"""The whitewater stage: ``DIR/particles/particles_####.ply`` -> ``DIR/whitewater/whitewater_####.ply``.

Frames form a chain: frame f's whitewater is frame f-1's advanced over one frame, plus what the liquid
emitted then, so frames run in order. A run over frames A-B continues from frame A-1's file when it
records the same settings and the same particle files; otherwise it goes back to the latest frame that
does (the first baked frame, with no whitewater, at worst) and writes every frame from there. A file
records in its header the digest of the settings (and of the automatic ranges), of the particle files it
was made from and of the previous frame's whitewater file; a frame whose record matches is skipped
unless ``force``. Neither ``particles/`` nor ``surface/`` is written.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from ..cache.cache_dir import CacheDir, refuse_links
from ..cache.jsonfile import read_cache_scene
from ..cache.lock import lock_cache
from ..errors import InputError
from .settings import AUTO_FLOORS, POTENTIALS, WhitewaterSettings
from .state import (
    STAMP,
    WHITEWATER_DIR,
    WhitewaterState,
    comment_value,
    file_digest,
    header_comments,
    read_state,
    whitewater_path,
    write_state,
)

log = logging.getLogger(__name__)

_PARTICLE_RE = re.compile(r"^particles_(-?\d{4,})\.ply$")


def cache_settings(cache_dir: Path) -> tuple[dict, WhitewaterSettings]:
    """The cache's scene (JSON object) and its resolved whitewater settings (InputError naming the field)."""
    from .scene_settings import whitewater_settings

    scene_file, scene = read_cache_scene(cache_dir)
    settings = whitewater_settings(scene)
    if not settings.enable:
        raise InputError("whitewater.enable", f"is false in {scene_file}; set it to true to add whitewater")
    if not settings.liquid:
        raise InputError("materials", f"{scene_file} has no liquid material (an elastic solid, a lump with yield "
                                      "stress or cohesion, or a goo with springs makes no whitewater)")
    return scene, settings


def available_frames(cache_dir: Path) -> list[int]:
    pdir = cache_dir / "particles"
    if not pdir.is_dir():
        return []
    return sorted(int(m.group(1)) for name in os.listdir(pdir) if (m := _PARTICLE_RE.match(name)))


def read_liquid(cache: CacheDir, frame: int, settings: WhitewaterSettings):
    """The liquid particles of a baked frame (``step.Liquid``), checked (InputError naming the file)."""
    from .step import Liquid

    rec = cache.read_particles(frame)
    keep = np.isin(rec["material"], np.array(settings.liquid, np.int64))
    x = np.column_stack([rec[n][keep] for n in "xyz"]).astype(np.float64)
    v = np.column_stack([rec["v" + n][keep] for n in "xyz"]).astype(np.float64)
    return Liquid(frame, x, v)


def potential_ranges(cache: CacheDir, frames: list[int], settings: WhitewaterSettings) -> dict:
    """{name: (τ_min, τ_max)}: the settings' ranges, or for an automatic one τ_max = the mean over the baked
    frames of the potential's largest value (never below ``AUTO_FLOORS``) and τ_min = 0.1 τ_max."""
    from .potentials import potentials

    ranges = {n: settings.fixed_range(n) for n in POTENTIALS}
    auto = [k for k, n in enumerate(POTENTIALS) if ranges[n] is None]
    if auto:
        peaks = np.zeros(3)
        for f in frames:
            liquid = read_liquid(cache, f, settings)
            if len(liquid.x):
                peaks += potentials(liquid.x, liquid.v, settings.support)[:, :3].max(axis=0)
        peaks /= max(1, len(frames))
        for k in auto:
            name = POTENTIALS[k]
            top = max(float(peaks[k]), AUTO_FLOORS[name])
            ranges[name] = (0.1 * top, top)
    return ranges


def _stamp_digest(settings: WhitewaterSettings, ranges: dict) -> str:
    text = settings.digest() + repr(sorted((n, tuple(map(float, r))) for n, r in ranges.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _source(cache: CacheDir, frame: int, first: int) -> str:
    """The digest of the particle files a frame's whitewater is made from (frames f-1 and f)."""
    if frame == first:
        return "none"
    return file_digest(cache.particles_path(frame - 1)) + file_digest(cache.particles_path(frame))


def _stamp(cache: CacheDir, frame: int, first: int, digest: str) -> list[str]:
    """What frame's file records: the settings, the particle files it read, the previous whitewater file."""
    prev = "none" if frame == first else file_digest(whitewater_path(cache.root, frame - 1))
    return [STAMP, f"settings {digest}", f"source {_source(cache, frame, first)}", f"previous {prev}"]


def _up_to_date(cache: CacheDir, frame: int, first: int, digest: str) -> bool:
    path = whitewater_path(cache.root, frame)
    if not path.is_file():
        return False
    have = header_comments(path)
    return all(c in have for c in _stamp(cache, frame, first, digest))


def _chain_start(cache: CacheDir, start: int, first: int, digest: str) -> int:
    """The frame to compute from so that ``start`` can be written: one after the latest frame before it whose
    file is up to date (its settings and particle files; the chain before it is trusted), ``first`` at worst."""
    f = start - 1
    while f >= first:
        path = whitewater_path(cache.root, f)
        have = header_comments(path)
        if path.is_file() and f"settings {digest}" in have and comment_value(have, "source") == _source(cache, f,
                                                                                                       first):
            return f + 1
        f -= 1
    return first


def _todo(cache_dir: Path, frames: Iterable[int] | None) -> tuple[list[int], list[int]]:
    available = available_frames(cache_dir)
    if not available:
        raise InputError(str(cache_dir), "no particle files (particles/particles_####.ply)")
    todo = sorted(set(available if frames is None else (int(f) for f in frames)))
    for f in todo:
        if f not in available:
            raise InputError(str(CacheDir(cache_dir).particles_path(f)), "missing particle file: bake that frame "
                                                                         "first, or choose --frames within "
                                                                         f"{available[0]}-{available[-1]}")
    for f in range(available[0], todo[-1] + 1):
        if f not in available:
            raise InputError(str(CacheDir(cache_dir).particles_path(f)), "missing particle file: whitewater "
                                                                         "frames follow each other from the "
                                                                         "first baked frame")
    return available, todo


def whitewater_cache(cache_dir: str | os.PathLike, frames: Iterable[int] | None = None, force: bool = False,
                     progress: Callable[[int, int, int, int], None] | None = None) -> dict:
    """Write the whitewater of a cache's frames.

    Parameters
    ----------
    cache_dir : directory holding ``scene.json`` and ``particles/particles_####.ply``.
    frames : frame numbers to write; None = every baked frame. Earlier frames whose files are missing or
        out of date are written too (the chain continues from them).
    force : rewrite the asked frames even when up to date.
    progress : called as ``progress(done, total, frame, particles)`` after each frame.

    Returns
    -------
    dict
        ``cache_dir``, ``settings_digest``, ``ranges`` ({potential: [τ_min, τ_max]}), ``written`` and
        ``skipped`` (frame lists), ``counts`` ({frame: [spray, foam, bubbles]} of the written frames),
        ``seconds`` ({frame: wall seconds}), ``wall_s``.

    Raises
    ------
    InputError : the directory, its scene file or settings, or a particle file are unusable (the
        message names the field or file), before any file is written.
    """
    from .boundaries import Boundaries

    t_start = time.perf_counter()
    cache_dir = Path(cache_dir)
    scene, settings = cache_settings(cache_dir)
    cache = CacheDir(cache_dir)
    refuse_links(cache_dir, cache_dir / WHITEWATER_DIR)
    available, todo = _todo(cache_dir, frames)
    boundaries = Boundaries(scene, settings.spacing, cache)
    with lock_cache(cache_dir, "whitewater", shared=True):
        ranges = potential_ranges(cache, available, settings)
        digest = _stamp_digest(settings, ranges)
        first = available[0]
        begin = _chain_start(cache, todo[0], first, digest)
        report = {"cache_dir": str(cache_dir), "settings_digest": digest,
                  "ranges": {n: list(r) for n, r in ranges.items()}, "written": [], "skipped": [], "counts": {},
                  "seconds": {}}
        _run_chain(cache, range(begin, todo[-1] + 1), set(todo), first, digest, settings, ranges, boundaries,
                   force, report, progress)
    report["wall_s"] = time.perf_counter() - t_start
    return report


def _run_chain(cache: CacheDir, chain: range, asked: set[int], first: int, digest: str,
               settings: WhitewaterSettings, ranges: dict, boundaries, force: bool, report: dict,
               progress) -> None:
    """Write (or skip) each frame of ``chain`` in order, carrying the state from one to the next."""
    from .step import advance_frame

    state: WhitewaterState | None = None
    liquid = None
    fields: dict = {}  # the later frame's sorted liquid, reused as the next frame's earlier one
    for done, frame in enumerate(chain, 1):
        t0 = time.perf_counter()
        path = whitewater_path(cache.root, frame)
        if not (force and frame in asked) and _up_to_date(cache, frame, first, digest):
            state = None  # read from the file when a later frame needs it
            report["skipped"].append(frame)
        else:
            if frame == first:
                state = WhitewaterState.empty()
            else:
                if state is None:
                    state = read_state(whitewater_path(cache.root, frame - 1))
                if liquid is None or liquid.frame != frame - 1:
                    liquid = read_liquid(cache, frame - 1, settings)
                later = read_liquid(cache, frame, settings)
                state = advance_frame(state, liquid, later, settings, ranges, boundaries, fields)
                liquid = later
            comments = _stamp(cache, frame, first, digest) + [f"frame {frame}"]
            state = write_state(path, state, comments)
            report["written"].append(frame)
            report["counts"][frame] = list(state.counts())
            log.info("whitewater frame %d: %d particles in %.3f s", frame, len(state), time.perf_counter() - t0)
        report["seconds"][frame] = time.perf_counter() - t0
        if progress is not None:
            progress(done, len(chain), frame, -1 if state is None else len(state))
