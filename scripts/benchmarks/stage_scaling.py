"""How single stages scale with threads, apart from the rest of a substep: one process,
``numba.set_num_threads`` stepping through the thread counts.

On a jittered block of ``--particles`` particles at 5 cm (the dam break's column), times per call:
``compute`` (a prange loop of pure arithmetic: what the machine's cores give), ``xsph`` (the XSPH
kernel, a gather over neighbour rows), ``permute_fresh`` / ``permute_kept`` (20 per-particle arrays
gathered into new arrays, or into arrays kept between calls), ``sort`` and ``lists`` (the neighbour
search). Prints one JSON object; the best of 5 repeats of 20 calls each.

Usage::

    NUMBA_NUM_THREADS=16 python scripts/benchmarks/stage_scaling.py [--thread-counts 1,2,4,8,16]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sph_addon.core.numerics.array_kernels import take_rows  # noqa: E402
from sph_addon.core.terms.xsph_monaghan1989_kernels import smooth_velocities  # noqa: E402
from sph_addon.core.world.neighbors import NeighborSearch  # noqa: E402


@numba.njit(parallel=True, nogil=True)
def _compute(a, out):
    for i in numba.prange(a.shape[0]):
        s = a[i]
        for _ in range(100):
            s = s * 0.999 + 0.001
        out[i] = s


def _best_ms(f, calls: int = 20, repeats: int = 5) -> float:
    f()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return round(best * 1000, 4)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--thread-counts", default="1,2,4,8,16")
    ap.add_argument("--particles", type=int, default=24000)
    args = ap.parse_args()
    spacing, h = 0.05, 0.05 * 2.2
    side = round(args.particles ** (1 / 3))
    g = np.stack(np.meshgrid(*(np.arange(side),) * 3, indexing="ij"), -1).reshape(-1, 3) * spacing
    rng = np.random.default_rng(0)
    x = g + rng.uniform(-0.1, 0.1, g.shape) * spacing
    v = rng.normal(size=x.shape)
    ns = NeighborSearch(h)
    order = ns.sort(x)
    x = np.ascontiguousarray(x[order])
    nbr, count = ns.lists(x, h)
    mat = np.zeros(len(x), np.uint8)
    coef = np.array([0.1])
    dv = np.empty_like(x)
    arrays = [np.ones((len(x), 3)) for _ in range(12)] + [np.ones(len(x)) for _ in range(8)]
    kept = [np.empty_like(a) for a in arrays]
    a1, o1 = np.ones(len(x)), np.empty(len(x))

    def permute_fresh():
        for a in arrays:
            out = np.empty(a.shape, a.dtype)
            w = a.size // len(a)
            take_rows(a.reshape(len(a), w), order, out.reshape(len(a), w))

    def permute_kept():
        for a, out in zip(arrays, kept):
            w = a.size // len(a)
            take_rows(a.reshape(len(a), w), order, out.reshape(len(a), w))

    stages = {"compute": lambda: _compute(a1, o1),
              "xsph": lambda: smooth_velocities(x, v, nbr, count, mat, coef, h, 10.0, dv),
              "permute_fresh": permute_fresh, "permute_kept": permute_kept,
              "sort": lambda: ns.sort(x), "lists": lambda: ns.lists(x, h)}
    result = {"particles": len(x), "max_neighbours": int(count.max()), "layer": None, "ms": {}}
    for t in [int(s) for s in args.thread_counts.split(",")]:
        numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
        result["ms"][t] = {name: _best_ms(f) for name, f in stages.items()}
        print(json.dumps({t: result["ms"][t]}), flush=True)
    result["layer"] = numba.threading_layer()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
