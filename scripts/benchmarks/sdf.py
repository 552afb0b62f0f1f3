"""Benchmark scene ``sdf_build``: mesh SDF construction and lookup.

A bumpy cube-sphere of ~50,000 triangles (generated in code) sampled on a grid
of 128 cells across its largest extent (129^3 nodes). Reports the median build
time over ``--repeats`` builds with JIT compilation excluded (timed separately
as ``compile_s`` on a tiny mesh), batched lookups per second, and peak memory.

Standalone: ``python scripts/benchmarks/sdf.py [--repeats 3] [--cells 128] [--n 65]``;
``scripts/bench.py`` imports this module and calls ``run(args)``.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sph_addon.core.colliders.sdf_mesh import build_mesh_sdf  # noqa: E402

log = logging.getLogger("bench.sdf")


def bumpy_sphere(n: int, radius: float = 1.0, bump: float = 0.08, freq: float = 6.0):
    """Cube-sphere with 12 n^2 triangles, radius modulated by a product of sines."""
    u = np.linspace(-1.0, 1.0, n + 1)
    a, b = np.meshgrid(u, u, indexing="ij")
    pts, tris, base = [], [], 0
    for axis in range(3):
        for sign in (-1.0, 1.0):
            p = np.empty((n + 1, n + 1, 3))
            p[..., axis] = sign
            p[..., (axis + 1) % 3] = a
            p[..., (axis + 2) % 3] = b * sign
            pts.append(p.reshape(-1, 3))
            idx = base + np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
            q00, q10, q01, q11 = idx[:-1, :-1], idx[1:, :-1], idx[:-1, 1:], idx[1:, 1:]
            tris += [np.stack([q00, q10, q11], -1).reshape(-1, 3),
                     np.stack([q00, q11, q01], -1).reshape(-1, 3)]
            base += (n + 1) ** 2
    v = np.concatenate(pts)
    # Weld the duplicated cube-edge vertices so the mesh is watertight.
    key = np.round(v * n * 4).astype(np.int64)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    v = v[first]
    t = inv.reshape(-1)[np.concatenate(tris)]
    d = v / np.linalg.norm(v, axis=1, keepdims=True)
    r = radius * (1.0 + bump * np.sin(freq * d[:, 0]) * np.sin(freq * d[:, 1]) * np.sin(freq * d[:, 2]))
    return d * r[:, None], t.astype(np.int64)


def run(args: argparse.Namespace) -> dict:
    """Run the ``sdf_build`` scene; returns a JSON-serialisable dict of measurements."""
    repeats = int(getattr(args, "repeats", 3) or 3)
    cells = int(getattr(args, "cells", 128) or 128)
    n = int(getattr(args, "n", 65) or 65)
    V, T = bumpy_sphere(n)
    extent = float(np.ptp(V, axis=0).max())
    # 128 cells across the padded box: extent + 2 * padding = cells * h with padding = 2 h.
    h = extent / (cells - 4)
    t0 = time.perf_counter()
    Vs, Ts = bumpy_sphere(3)
    build_mesh_sdf(Vs, Ts, cell_size=0.5, padding=0.0).sample(np.zeros((1, 3)))
    compile_s = time.perf_counter() - t0
    times = []
    tracemalloc.start()
    for _ in range(repeats):
        sdf = build_mesh_sdf(V, T, cell_size=h, padding=2 * h)
        times.append(sdf.build_s)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rng = np.random.default_rng(0)
    pts = rng.uniform(-1.2, 1.2, (1_000_000, 3))
    sdf.sample(pts[:10])
    t0 = time.perf_counter()
    sdf.sample(pts)
    lookup_s = time.perf_counter() - t0
    try:
        import numba

        threads = numba.get_num_threads()
    except Exception:  # pragma: no cover - numba is a hard dependency
        threads = None
    return {
        "scene": "sdf_build",
        "triangles": int(len(T)),
        "grid": [int(x) for x in sdf.grid.shape],
        "cell_size": h,
        "build_s": statistics.median(times),
        "build_s_all": times,
        "compile_s": compile_s,
        "lookups_per_s": len(pts) / lookup_s,
        "peak_mb": peak / 2**20,
        "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "threads": threads,
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cells", type=int, default=128)
    p.add_argument("--n", type=int, default=65, help="cube-sphere subdivision (12 n^2 triangles)")
    return p


if __name__ == "__main__":
    result = run(_parser().parse_args())
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
