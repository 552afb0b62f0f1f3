"""Benchmark: time to show one cached frame in Blender (sph_addon/blender/replay/objects.py).

A cache of 100,000 particles (a ball) and a 200,000-triangle noisy sphere per frame, in
the cache layout of DESIGN.md section 4 (the surface has the fields the core's meshing
stage writes: x y z vx vy vz nx ny nz material), is replayed with the mechanism this
Blender uses (Import PLY node on 4.5+, the frame handler on 4.2; on 4.5+ the handler is
measured too, for comparison). One sample = ``scene.frame_set`` to the other frame +
``evaluated_depsgraph_get`` + the evaluated objects, for both replay objects and for
each alone (the other hidden in the viewport, so not evaluated).

Import PLY keeps what it read in memory and re-reads a file only when its modification
time changed, so before each sample the frame's files get a new modification time: every
sample reads and builds the frame afresh (from the OS page cache, as the files were just
written). ``revisit`` is the cost of returning to a frame already shown with unchanged
files: what scrubbing back and forth costs.

Surface files carry no normals by default (the Domain's default); ``--normals`` writes
``nx ny nz`` as older versions did (Import PLY then builds custom normals).

``--scrub N`` measures memory instead: N frames are written, then shown one after the
other (each read once, as when scrubbing forward) and the process's resident memory is
printed every tenth of the way, with Blender's *Memory Cache Limit* preference (where Import
PLY keeps what it read) at its default or at ``--cache-limit`` MB (one process per limit:
memory freed by the cache stays with the allocator).

Run with a bpy venv (no extension install needed: the package is imported from the checkout)::

    .venv-bpy-4.5/bin/python scripts/benchmarks/blender_replay.py --repeat 5
    .venv-bpy-4.5/bin/python scripts/benchmarks/blender_replay.py --scrub 100 [--cache-limit 512]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

N_PARTICLES = 100_000
RINGS, SEGMENTS = 251, 400           # UV sphere: 100,002 vertices, 200,000 triangles
SURFACE_FIELDS = ("x", "y", "z", "vx", "vy", "vz", "nx", "ny", "nz")


def _particles(rng: np.random.Generator, frame: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(N_PARTICLES, 3))
    x *= (rng.random(N_PARTICLES) ** (1 / 3) / np.linalg.norm(x, axis=1))[:, None]  # uniform in the unit ball
    x = x * 0.5 + [0.02 * frame, 0.0, 0.5]
    v = rng.normal(scale=0.3, size=x.shape)
    return x, v


def _noisy_sphere(rng: np.random.Generator, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """A closed UV sphere (poles + RINGS-1 rings of SEGMENTS) with radial noise: records and triangles."""
    theta = np.linspace(0, np.pi, RINGS + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, SEGMENTS, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    dirs = np.column_stack([np.sin(t).ravel() * np.cos(p).ravel(), np.sin(t).ravel() * np.sin(p).ravel(),
                            np.cos(t).ravel()])
    dirs = np.vstack([[0, 0, 1], dirs, [0, 0, -1]])
    r = 0.5 * (1 + 0.03 * rng.standard_normal(len(dirs)))
    pos = dirs * r[:, None] + [0.02 * frame, 0.0, 0.5]
    ring = np.arange(RINGS - 1)[:, None] * SEGMENTS + 1
    seg, nxt = np.arange(SEGMENTS)[None, :], (np.arange(SEGMENTS)[None, :] + 1) % SEGMENTS
    a, b = ring[:-1] + seg, ring[:-1] + nxt
    c, d = ring[1:] + seg, ring[1:] + nxt
    quads = np.concatenate([np.stack([a, c, b], -1).reshape(-1, 3), np.stack([b, c, d], -1).reshape(-1, 3)])
    south = len(dirs) - 1
    last = (RINGS - 2) * SEGMENTS + 1
    caps = np.concatenate([np.column_stack([np.zeros(SEGMENTS, int), 1 + seg[0], 1 + nxt[0]]),
                           np.column_stack([np.full(SEGMENTS, south), last + nxt[0], last + seg[0]])])
    tris = np.concatenate([quads, caps]).astype(np.int32)
    rec = np.zeros(len(pos), [(n, "<f4") for n in SURFACE_FIELDS] + [("material", "u1")])
    for i, axis in enumerate("xyz"):
        rec[axis] = pos[:, i]
        rec["v" + axis] = 0.1 * dirs[:, i]
        rec["n" + axis] = dirs[:, i]
    return rec, tris


def write_cache(root: Path, frames: tuple[int, ...], normals: bool = False) -> tuple[int, int]:
    """Write the frames; return (vertices, triangles) of the surface."""
    from sph_addon.core.cache.cache_dir import CacheDir
    from sph_addon.core.cache.plyio import write_ply

    cache = CacheDir(root)
    rng = np.random.default_rng(0)
    for frame in frames:
        x, v = _particles(rng, frame)
        cache.write_particles(frame, x, v, np.arange(N_PARTICLES), np.zeros(N_PARTICLES, np.uint8))
        rec, tris = _noisy_sphere(rng, frame)
        if not normals:
            rec = rec[["x", "y", "z", "vx", "vy", "vz", "material"]]
        write_ply(cache.surface_path(frame), rec, tris)
    return len(rec), len(tris)


def _evaluate(objects) -> None:
    import bpy

    dg = bpy.context.evaluated_depsgraph_get()
    for ob in objects:
        ob.evaluated_get(dg)


_STAMP = [1_600_000_000]


def _sample(cache: Path, objects, frame: int, fresh: bool) -> float:
    """ms to change to ``frame`` and evaluate; ``fresh``: give its files a new mtime so nothing is cached."""
    import bpy

    if fresh:
        _STAMP[0] += 10  # whole seconds: Import PLY compares st_mtime
        for kind in ("particles", "surface"):
            os.utime(cache / kind / f"{kind}_{frame:04d}.ply", (_STAMP[0], _STAMP[0]))
    t0 = time.perf_counter()
    bpy.context.scene.frame_set(frame)
    _evaluate(objects)
    return (time.perf_counter() - t0) * 1e3


def _show_only(shown, both) -> None:
    """Leave the other object out: hidden (not evaluated) and untagged (the frame handler skips it)."""
    for ob in both:
        ob.hide_viewport = ob not in shown
        if ob in shown and "_bench_mode" in ob:
            ob["sph_replay_mode"] = ob.pop("_bench_mode")
        elif ob not in shown and "_bench_mode" not in ob:
            ob["_bench_mode"] = ob.pop("sph_replay_mode")


def measure(cache: Path, particles, surface, repeat: int) -> dict[str, float]:
    """Median ms per configuration; frames alternate 1, 2 so every sample is a frame change."""
    both = (particles, surface)
    configs = {"both": both, "particles": (particles,), "surface": (surface,)}
    out = {}
    for name, shown in configs.items():
        _show_only(shown, both)
        _sample(cache, shown, 1, fresh=True)  # warm-up: first evaluation, allocator
        out[name] = statistics.median([_sample(cache, shown, 2 - k % 2, fresh=True) for k in range(repeat)])
    _show_only(both, both)
    _sample(cache, both, 1, fresh=False)
    out["revisit"] = statistics.median([_sample(cache, both, 2 - k % 2, fresh=False) for k in range(repeat)])
    return out


def _rss_mb() -> float:
    """Resident memory of this process now (Linux /proc), MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def scrub(work: Path, frames: int, limit: int | None) -> None:
    """Show ``frames`` new frames in order under a Memory Cache Limit; print resident memory as it goes."""
    import bpy

    from sph_addon.blender.replay import objects as replay

    prefs = bpy.context.preferences.system
    if limit is not None:
        prefs.memory_cache_limit = limit
    replay.register()
    domain = bpy.data.objects.new("Domain", None)
    bpy.context.scene.collection.objects.link(domain)
    objects = replay.ensure_replay(domain, "//sph_cache", 0.005)
    bpy.context.scene.frame_set(1)
    _evaluate(objects)
    start = _rss_mb()
    marks = []
    for frame in range(1, frames + 1):
        bpy.context.scene.frame_set(frame)
        _evaluate(objects)
        if frame % max(1, frames // 10) == 0:
            marks.append(f"{_rss_mb():.0f}")
    print(f"\nBlender {bpy.app.version_string}: scrubbing {frames} new frames of {N_PARTICLES:,} particles + "
          f"surface, Memory Cache Limit {prefs.memory_cache_limit} MB, resident memory (MB): after frame 1 "
          f"{start:.0f}, every {max(1, frames // 10)} frames " + " ".join(marks))
    replay.unregister()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="samples per configuration (median reported)")
    parser.add_argument("--normals", action="store_true",
                        help="surface files with nx ny nz (Import PLY then builds custom normals)")
    parser.add_argument("--scrub", type=int, default=0, metavar="N", help="measure memory over N new frames")
    parser.add_argument("--cache-limit", type=int, default=None, metavar="MB",
                        help="Memory Cache Limit while scrubbing (default: Blender's)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="sph_replay_bench_"))
    os.environ["BLENDER_USER_RESOURCES"] = str(work / "user")  # keep the real user's config out of it
    import bpy

    from sph_addon.blender.replay import objects as replay

    t0 = time.perf_counter()
    n_verts, n_tris = write_cache(work / "sph_cache", tuple(range(1, max(args.scrub, 2) + 1)), normals=args.normals)
    print(f"cache written in {time.perf_counter() - t0:.1f} s: "
          f"particles_0001.ply {os.path.getsize(work / 'sph_cache/particles/particles_0001.ply') / 1e6:.1f} MB, "
          f"surface_0001.ply {os.path.getsize(work / 'sph_cache/surface/surface_0001.ply') / 1e6:.1f} MB")

    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "bench.blend"))
    if args.scrub:
        if not replay.native_import_available():
            print("this Blender has no Import PLY node: the frame handler keeps no frames in memory")
        scrub(work, args.scrub, args.cache_limit)
        shutil.rmtree(work, ignore_errors=True)
        return 0
    replay.register()
    modes = ["import_ply", "handler"] if replay.native_import_available() else ["handler"]
    rows = []
    real_check = replay.native_import_available
    for mode in modes:
        replay.native_import_available = (lambda: False) if mode == "handler" else real_check
        domain = bpy.data.objects.new(f"Domain {mode}", None)
        bpy.context.scene.collection.objects.link(domain)
        particles, surface = replay.ensure_replay(domain, "//sph_cache", 0.005)
        rows.append((mode, measure(work / "sph_cache", particles, surface, args.repeat)))
        replay.remove_replay(domain)
    replay.native_import_available = real_check
    replay.unregister()

    print(f"\nBlender {bpy.app.version_string}: one new frame, {N_PARTICLES:,} particles + "
          f"a surface of {n_verts:,} vertices / {n_tris:,} triangles"
          f"{' (with normals)' if args.normals else ''}, median of {args.repeat} (ms)")
    print(f"{'mechanism':<12} {'both':>8} {'particles':>10} {'surface':>8} {'revisit':>8}")
    for mode, r in rows:
        print(f"{mode:<12} {r['both']:>8.1f} {r['particles']:>10.1f} {r['surface']:>8.1f} {r['revisit']:>8.1f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
