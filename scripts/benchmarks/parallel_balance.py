"""What the balanced work units of the parallel loops buy: the same kernels, same data, two schedules.

Runs the bench's dam break (``scripts/scenes/dam_break.json``) to the given frames and, at each, times
one relaxation pass (without the colliders' terms; a copy of the positions per call, in both) and one
build of the neighbour lists on the state of that moment, each way:

* **balanced**: the units ``NeighborSearch.sort`` makes (each colour's supercells, and the cells of the
  lists, split into runs of about equal particle counts, a few per thread);
* **halves**: the split prange made over the whole bounding box before (the first half of the buckets or
  keys to one thread, the second to the other), emulated with two units cut at the middle index.

It also prints how the particles fall into those halves (the larger half's share over an even share:
1 is balanced, 2 leaves one of two threads idle). Medians of 9 timings of 10 calls each.

Usage::

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/parallel_balance.py [--frames 21 30]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import simulation as dam_bench  # noqa: E402  (scripts/benchmarks/simulation.py: the bench's dam break)

from sph_addon.core.numerics import lattice as units  # noqa: E402
from sph_addon.core.terms import relaxation_clavet2005_kernels as kernels  # noqa: E402
from sph_addon.core.terms.relaxation_clavet2005 import relaxation_gains  # noqa: E402
from sph_addon.core.world import neighbors  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402


def _median_ms(call) -> float:
    call()
    runs = []
    for _ in range(9):
        t0 = time.perf_counter()
        for _ in range(10):
            call()
        runs.append((time.perf_counter() - t0) / 10)
    return 1e3 * float(np.median(runs))


def _halves(ns: neighbors.NeighborSearch) -> tuple[np.ndarray, np.ndarray, float]:
    """The two-unit schedules of prange's even split over the buckets (per colour) and over the keys,
    and the larger half's share of the particles over an even share."""
    nb = len(ns.bucket_start) - 1
    cu, cb = ns.colour_units, ns.colour_buckets
    colours = np.array([[cu[c, 0], cu[c, 0] + np.searchsorted(cb[cu[c, 0]:cu[c, -1]], nb // 2), cu[c, -1]]
                        for c in range(cu.shape[0])], np.int64)
    nkeys = len(ns.cell_start) - 1
    keys = np.array([0, nkeys // 2, nkeys], np.int64)
    first = ns.bucket_start[nb // 2]
    n = ns.bucket_start[-1]
    return colours, keys, max(first, n - first) / max(n / 2, 1)


def measure(sim: Simulation) -> dict:
    x = sim.state.x.copy()
    ns = neighbors.NeighborSearch(sim.h)
    x = np.ascontiguousarray(x[ns.sort(x)])
    nbr, count = ns.lists(x, sim.h)
    n = len(x)
    rho0, rho0_near = units.rest_densities(sim.spacing, sim.h)
    gain, gain_near = relaxation_gains(sim.spacing, sim.h)
    zeros3 = np.zeros((n, 3))

    def one_pass(colour_units):
        kernels.double_density_relaxation(x.copy(), nbr, count, np.zeros(n, np.uint8), np.array([gain]),
                                          np.array([gain_near]), np.array([rho0]), np.array([rho0_near]), sim.h,
                                          ns.bucket_start, ns.colour, ns.colour_buckets, colour_units, x,
                                          np.zeros(n), np.zeros(n), zeros3, zeros3, np.zeros((0, 4)),
                                          np.full((n, 3), -1, np.int64), False, np.zeros(0), np.zeros(1, np.uint8),
                                          np.zeros((0, 3)), np.empty(n),
                                          np.empty(n), np.zeros((n, 3)))

    def lists(key_units):
        neighbors._fill_lists_by_cell(x, ns.cell, ns.cell_start, ns.sdims, sim.h, key_units, ns.nbr, ns.count)

    colour_halves, key_halves, share = _halves(ns)
    return {"share": share,
            "pass": [_median_ms(lambda: one_pass(ns.colour_units)), _median_ms(lambda: one_pass(colour_halves))],
            "lists": [_median_ms(lambda: lists(ns.key_units)), _median_ms(lambda: lists(key_halves))]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, nargs="+", default=[21, 30])
    args = ap.parse_args()
    sim = Simulation(dam_bench._scene_variant())
    print(f"{'frame':>5} {'larger half':>11} {'pass balanced':>13} {'pass halves':>11} "
          f"{'lists balanced':>14} {'lists halves':>12}  (ms)")
    for frame in range(1, max(args.frames) + 1):
        sim.advance_frame()
        if frame in args.frames:
            m = measure(sim)
            print(f"{frame:5d} {m['share']:11.2f} {m['pass'][0]:13.3f} {m['pass'][1]:11.3f} "
                  f"{m['lists'][0]:14.3f} {m['lists'][1]:12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
