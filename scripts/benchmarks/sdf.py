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
for _path in (ROOT, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from reference.analytic_sdf import cube_sphere  # noqa: E402

from sph_addon.core.colliders.shapes.sdf_mesh import build_mesh_sdf  # noqa: E402

log = logging.getLogger("bench.sdf")


def bumpy_sphere(n: int):
    """The benchmark mesh: a cube-sphere of 12 n^2 triangles with bumps (shared with the SDF tests)."""
    return cube_sphere(n, bump=0.08)


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
