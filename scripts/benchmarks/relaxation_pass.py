"""The time of one density-relaxation pass, walls included, on states of the bench's dam break.

Runs ``scripts/scenes/dam_break.json`` (the bench's scene) to the given frames, records the
arguments of the first relaxation pass of each (positions, neighbour rows, the colliders' terms and
mirror planes), then times the kernel on copies of them: the median of 9 timings of 10 calls. A
pass's time on one state, with no substep policy, Chebyshev steps or stopping test around it, so
two versions of the kernel compare within about 1 % (``profile_substep.py`` times passes in place,
where the run's noise is 5-10 %).

Usage::

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/relaxation_pass.py [--frames 10 25]
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from simulation import _scene_variant  # noqa: E402

from sph_addon.core.world.simulation import Simulation  # noqa: E402


def record(frames: list[int]) -> dict[int, list]:
    """The arguments of the first relaxation pass of each frame in ``frames``, copied."""
    scene = _scene_variant(frames=max(frames))
    sim = Simulation(scene)
    model = sim.models[0].term("relaxation_clavet2005")
    kernel = model.relaxation
    kept: dict[int, list] = {}

    def spy(*args):
        if sim.frame + 1 in frames and sim.frame + 1 not in kept:
            kept[sim.frame + 1] = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        return kernel(*args)

    model.relaxation = spy
    while sim.frame < scene.frame_end:
        sim.advance_frame()
    model.relaxation = kernel
    return kept


def time_pass(kernel, args: list, names: list[str]) -> float:
    """Median seconds of one call on fresh copies of the arrays a pass changes (x, wall_dx); ``names``:
    the kernel's parameters."""
    moved = [names.index("x"), names.index("wall_dx")]

    def call():
        a = list(args)
        for k in moved:
            a[k] = args[k].copy()
        t0 = time.perf_counter()
        kernel(*a)
        return time.perf_counter() - t0

    call()
    return float(np.median([sum(call() for _ in range(10)) / 10 for _ in range(9)]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, nargs="+", default=[10, 25])
    args = ap.parse_args()
    from sph_addon.core.terms.relaxation_clavet2005_kernels import double_density_relaxation

    names = list(inspect.signature(double_density_relaxation.py_func).parameters)
    for frame, call_args in sorted(record(args.frames).items()):
        planes = np.count_nonzero(call_args[names.index("plane_of")][:, 0] >= 0)
        print(f"frame {frame}: {1e3 * time_pass(double_density_relaxation, call_args, names):.3f} ms a pass "
              f"({len(call_args[0])} particles, {planes} within reach of a wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
