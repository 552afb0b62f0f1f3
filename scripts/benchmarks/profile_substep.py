"""Where a substep's time goes: the bench's dam break with each stage's wall time summed.

Runs ``scripts/scenes/dam_break.json`` (24,000 particles at 5 cm) for ``--seconds`` simulated after
a JIT warm-up, with timers wrapped around the step's stages (the neighbour sort and lists, the
permutation, the boundary terms, the relaxation passes, XSPH, surface tension, collisions, the
frame checks, the grid projection and its parts: the cell kinds, the walls' new cells measured, the
splat, the solve, the particles' changes), and prints each stage's seconds and milliseconds per
substep. Stages nest (``position_stage`` holds the passes and the boundary terms;
``velocity_stage`` the projection, which holds its parts; ``step`` holds everything). The timers
cost a few microseconds per call; use ``bench.py`` for the figures compared with the peer.

Usage::

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/profile_substep.py [--seconds 1] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import numpy as np  # noqa: E402
import simulation as dam_bench  # noqa: E402  (scripts/benchmarks/simulation.py: the bench's dam break)

import sph_addon.core.boundary.lattice_fill as lattice_fill  # noqa: E402
import sph_addon.core.boundary.static_cells as static_cells  # noqa: E402
import sph_addon.core.models.viscoelastic_clavet2005 as model  # noqa: E402
import sph_addon.core.terms.pressure_projection_zhu2005 as grid  # noqa: E402
import sph_addon.core.terms.pressure_projection_zhu2005_kernels as grid_kernels  # noqa: E402
import sph_addon.core.terms.relaxation_clavet2005_kernels as relaxation  # noqa: E402
import sph_addon.core.terms.surface_tension_brackbill1992 as tension  # noqa: E402
import sph_addon.core.terms.xsph_monaghan1989_kernels as xsph  # noqa: E402
import sph_addon.core.world.neighbors as neighbors  # noqa: E402
import sph_addon.core.world.simulation as simulation  # noqa: E402
import sph_addon.core.world.state as state  # noqa: E402

STAGES = [(neighbors.NeighborSearch, "sort"), (neighbors.NeighborSearch, "lists"), (state.ParticleState, "permute"),
          (lattice_fill, "wall_terms"), (tension, "surface_tension_impulses"), (xsph, "smooth_velocities"),
          (relaxation, "double_density_relaxation"), (simulation.Simulation, "_collide"),
          (simulation.Simulation, "check_and_stats"), (model.ViscoelasticModel, "velocity_stage"),
          (model.ViscoelasticModel, "position_stage"), (simulation.Simulation, "step"),
          (grid.GridProjection, "project"), (grid.GridProjection, "_kinds"), (static_cells.WallCells, "_measure"),
          (grid_kernels, "splat"), (grid_kernels, "solve"), (grid_kernels, "velocity_changes")]


def timed(owner, name: str, seconds: dict, calls: collections.Counter, last: dict) -> None:
    f = getattr(owner, name)

    def wrapper(*args, **kwargs):
        last[name] = (f, args, kwargs)
        t0 = time.perf_counter()
        out = f(*args, **kwargs)
        seconds[name] += time.perf_counter() - t0
        calls[name] += 1
        return out

    setattr(owner, name, wrapper)


# Kernels timed apart with ``--standalone``: the arguments of their last call in the run are copied and
# the kernel called again back to back, so a stage slower inside the substep than on its own shows.
STANDALONE = ["smooth_velocities", "double_density_relaxation", "splat", "velocity_changes", "solve"]


def standalone(last: dict, calls: int = 10) -> dict:
    """Milliseconds per call of each STANDALONE kernel on its last call's arguments, back to back."""
    out = {}
    for name in STANDALONE:
        if name not in last:
            continue
        f, args, kwargs = last[name]
        fresh = [[a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(calls + 1)]
        f(*fresh[0], **kwargs)
        t0 = time.perf_counter()
        for k in range(calls):
            f(*fresh[k + 1], **kwargs)
        out[name] = round(1000 * (time.perf_counter() - t0) / calls, 3)
    return out


def profile(seconds_simulated: float, alone: bool = False) -> dict:
    """Each stage's milliseconds per substep over ``seconds_simulated`` of the dam break (warmed up);
    with ``alone``, also each STANDALONE kernel's milliseconds per call on its own."""
    dam_bench._warm_up()  # compile (or load) every kernel first
    seconds, calls, last = collections.defaultdict(float), collections.Counter(), {}
    for owner, name in STAGES:
        timed(owner, name, seconds, calls, last)
    sim = simulation.Simulation(dam_bench._scene_variant(frames=round(seconds_simulated * 30)))
    t0, steps = time.perf_counter(), 0
    while sim.frame < sim.scene.frame_end:
        steps += sim.advance_frame().substeps
    wall = time.perf_counter() - t0
    stages = {name: round(1000 * s / steps, 3) for name, s in sorted(seconds.items(), key=lambda kv: -kv[1])}
    out = {"particles": sim.state.n, "substeps": steps, "wall_s": round(wall, 3),
           "ms_per_substep": round(1000 * wall / steps, 3), "stages_ms": stages,
           "calls": {name: calls[name] for name in stages}}
    if alone:
        out["standalone_ms"] = standalone(last)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("--standalone", action="store_true", help="also time some kernels on their own")
    args = ap.parse_args()
    out = profile(args.seconds, args.standalone)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{out['particles']} particles, {out['substeps']} substeps, {out['wall_s']:.2f} s, "
          f"{out['ms_per_substep']:.1f} ms per substep")
    for name, ms in out["stages_ms"].items():
        print(f"{name:28s} {ms:7.2f} ms/substep {out['calls'][name]:6d} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
