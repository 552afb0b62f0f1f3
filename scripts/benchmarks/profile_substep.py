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

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/profile_substep.py [--seconds 1]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import simulation as dam_bench  # noqa: E402  (scripts/benchmarks/simulation.py: the bench's dam break)

import sph_addon.core.boundary.lattice_fill as lattice_fill  # noqa: E402
import sph_addon.core.boundary.static_cells as static_cells  # noqa: E402
import sph_addon.core.neighbors as neighbors  # noqa: E402
import sph_addon.core.simulation as simulation  # noqa: E402
import sph_addon.core.solvers.viscoelastic_clavet2005 as model  # noqa: E402
import sph_addon.core.state as state  # noqa: E402
import sph_addon.core.terms.pressure_projection_zhu2005 as grid  # noqa: E402
import sph_addon.core.terms.pressure_projection_zhu2005_kernels as grid_kernels  # noqa: E402
import sph_addon.core.terms.relaxation_clavet2005_kernels as relaxation  # noqa: E402
import sph_addon.core.terms.surface_tension_brackbill1992 as tension  # noqa: E402
import sph_addon.core.terms.xsph_monaghan1989_kernels as xsph  # noqa: E402

STAGES = [(neighbors.NeighborSearch, "sort"), (neighbors.NeighborSearch, "lists"), (state.ParticleState, "permute"),
          (lattice_fill, "wall_terms"), (tension, "surface_tension_impulses"), (xsph, "smooth_velocities"),
          (relaxation, "double_density_relaxation"), (simulation.Simulation, "_collide"),
          (simulation.Simulation, "check_and_stats"), (model.ViscoelasticModel, "velocity_stage"),
          (model.ViscoelasticModel, "position_stage"), (simulation.Simulation, "step"),
          (grid.GridProjection, "project"), (grid.GridProjection, "_kinds"), (static_cells.WallCells, "_measure"),
          (grid_kernels, "splat"), (grid_kernels, "solve"), (grid_kernels, "velocity_changes")]


def timed(owner, name: str, seconds: dict, calls: collections.Counter) -> None:
    f = getattr(owner, name)

    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        out = f(*args, **kwargs)
        seconds[name] += time.perf_counter() - t0
        calls[name] += 1
        return out

    setattr(owner, name, wrapper)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args()
    dam_bench._warm_up()  # compile (or load) every kernel first
    seconds, calls = collections.defaultdict(float), collections.Counter()
    for owner, name in STAGES:
        timed(owner, name, seconds, calls)
    sim = simulation.Simulation(dam_bench._scene_variant(frames=round(args.seconds * 30)))
    t0, steps = time.perf_counter(), 0
    while sim.frame < sim.scene.frame_end:
        steps += sim.advance_frame().substeps
    wall = time.perf_counter() - t0
    print(f"{sim.state.n} particles, {steps} substeps, {wall:.2f} s, {1000 * wall / steps:.1f} ms per substep")
    for name, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"{name:28s} {s:7.3f} s {1000 * s / steps:7.2f} ms/substep {calls[name]:6d} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
