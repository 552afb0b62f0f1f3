"""How still SPlisHSPlasH's DFSPH keeps a pool of water at rest: the peer's figures for our pool scene.

Why: our solver's resting pool (``pool_at_rest.py``; the figures are in CHANGELOG.md's method notes, "Beside
the peer") needs a reference from an established solver on the same scene. What: a closed column
0.3 x 0.3 x 1.0 m (walls at x, y = 0, 0.3 and z = 0, 1.0), water 0.5 m deep, spacing 0.025 m
(radius 0.0125), gravity -9.81 in z, density 1000, 4 s simulated, with the configuration
``splishsplash_peer.py`` uses for the dam break (SPlisHSPlasH's own DamBreak
parameters: DFSPH, CFL time step, Akinci boundary particles, standard viscosity 0.01). At the first
time step reaching t = 0.1, 0.25, 0.5, 1, 2, 3, 4 s it prints the particle count, median / 90th
percentile / max speed (cm/s), the mean z of the top N/20 particles (one layer's worth; our lattice's
top layer starts at 0.4875 m) and the mean z of all particles (ours starts at 0.25 m); then the
largest speed over the first second, the time steps and the wall time (measuring excluded).

Fill: ``--fill native`` (default) is SPlisHSPlasH's own convention (block flush with the walls, as
in its examples and our dam-break bench): a regular block puts particles one diameter inside its box,
so 11 x 11 x 19 = 2299 particles at k 0.025 m, one spacing from the walls, top layer at 0.475 m.
``--fill ours`` stretches the box half a spacing beyond the walls so the lattice is exactly ours,
12 x 12 x 20 = 2880 particles at (i + 1/2) 0.025 m: SPlisHSPlasH accepts it, but that start is too
dense at the walls for its boundary (1.8 rho0 at the corners) and blows up within 0.01 s: particles
leave the box at up to 700 m/s (measured, 2.19.0; Bender 2019 volume maps instead of Akinci particles blow up
too), so it is kept only to show that.

Usage (starts itself in .venv-bench with the GL preload, as ``bench.py --vs splishsplash`` does)::

    python scripts/benchmarks/pool_at_rest_peer.py [--fill native|ours] [--seconds 4] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import pool_table
from peers import GL_DISPATCH, peer_env, peer_python

TIMES = pool_table.TIMES
SPACING, WIDTH, HEIGHT, DEPTH = 0.025, 0.3, 1.0, 0.5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fill", choices=("native", "ours"), default="native")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if os.path.exists(GL_DISPATCH) and GL_DISPATCH not in os.environ.get("LD_PRELOAD", ""):
        py = peer_python()  # re-run in the bench venv, GL dispatch preloaded, threads pinned
        os.execve(py, [py, os.path.abspath(__file__), *sys.argv[1:]], peer_env(args.threads))
    import numpy as np
    import pysplishsplash as sph
    from splishsplash_peer import UNIT_BOX_OBJ, scene

    work = tempfile.mkdtemp(prefix="splish_pool_")
    box = os.path.join(work, "UnitBox.obj")
    with open(box, "w") as fh:
        fh.write(UNIT_BOX_OBJ)
    cfg = scene(SPACING, args.seconds, box)  # the dam-break configuration; only the geometry changes
    cfg["RigidBodies"][0].update(translation=[WIDTH / 2, WIDTH / 2, HEIGHT / 2], scale=[WIDTH, WIDTH, HEIGHT])
    pad = SPACING / 2 if args.fill == "ours" else 0.0
    cfg["FluidBlocks"][0].update(start=[-pad, -pad, -pad], end=[WIDTH + pad, WIDTH + pad, DEPTH + pad])
    path = os.path.join(work, "pool.json")
    with open(path, "w") as fh:
        json.dump(cfg, fh)

    base = sph.Exec.SimulatorBase()
    base.init(["SPlisHSPlasH", "--no-gui", "--no-cache", "--output-dir", work, "--stopAt", str(args.seconds),
               path], "SPlisHSPlasH")
    base.initSimulation()
    fluid = sph.Simulation.getCurrent().getFluidModel(0)
    tm = sph.TimeManager.getCurrent()
    rows, run = [], {"steps": 0, "next": 0, "measure_s": 0.0, "vmax_1s": 0.0}

    def fields():
        n = fluid.numActiveParticles()
        x = np.array(fluid.getFieldBuffer("position"), copy=False)[:n].astype(np.float64)
        v = np.array(fluid.getFieldBuffer("velocity"), copy=False)[:n].astype(np.float64)
        return x, v

    def row(t):
        return pool_table.row(round(t, 4), *fields())

    x0, _ = fields()
    print(f"fill {args.fill}: {len(x0)} particles, x {x0[:, 0].min():.4f}..{x0[:, 0].max():.4f}, "
          f"z {x0[:, 2].min():.4f}..{x0[:, 2].max():.4f}", file=sys.stderr)
    rows.append(row(0.0))

    def after_step():  # runSimulation's callback after each step (timeStepNoGUI segfaults in 2.19.0)
        run["steps"] += 1
        m0 = time.perf_counter()
        t = tm.getTime()
        if t <= 1.0 + 1e-9:
            run["vmax_1s"] = max(run["vmax_1s"], float(np.linalg.norm(fields()[1], axis=1).max()))
        if run["next"] < len(TIMES) and t >= TIMES[run["next"]] - 1e-9:
            rows.append(row(t))
            while run["next"] < len(TIMES) and TIMES[run["next"]] <= t + 1e-9:
                run["next"] += 1
        run["measure_s"] += time.perf_counter() - m0

    base.setTimeStepCB(after_step)
    t1 = time.perf_counter()
    base.runSimulation()
    wall = time.perf_counter() - t1 - run["measure_s"]
    base.cleanup()

    pool_table.print_rows(rows)
    print(f"max speed over t <= 1 s: {100 * run['vmax_1s']:.1f} cm/s; steps {run['steps']}; "
          f"wall {wall:.1f} s ({args.threads} thread(s)); top layer at rest on the lattice: "
          f"{rows[0]['top_z']:.4f} m")
    return 0


if __name__ == "__main__":
    sys.exit(main())
