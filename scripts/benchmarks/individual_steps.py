"""Individual time steps against one step for all: the jet of mashed potato into a resting pool.

The scene of ``tests/core/test_individual_time_steps.py`` (a thin jet at 16 m/s, eight times the
material's speed of sound, into a 5 cm pool ``--pool`` m wide: 4,500 particles at 0.3 m, 18,000 at 0.6),
baked for ``--frames`` frames at 60 fps with ``time_steps`` individual and global, ``--repeats`` times
each, alternating; prints the median wall time of each, their ratio, the force evaluations, and the
kinetic energy and the jet's mean depth at the end (the same result).

    python scripts/benchmarks/individual_steps.py [--frames 2] [--repeats 3] [--speed 16] [--pool 0.3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests" / "core")]

from test_individual_time_steps import jet_scene  # noqa: E402

from sph_addon.core.scene.scene_file import parse_scene  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402


def run(mode: str, frames: int, speed: float, pool: float = 0.3) -> dict:
    sim = Simulation(parse_scene(jet_scene(mode, frame_end=frames, speed=speed, pool=pool)))
    jet = sim.state.ids[sim.state.x[:, 2] > 0.06]
    evaluations = 0
    t0 = time.perf_counter()
    for _ in range(frames):
        evaluations += sim.advance_frame().extra["force_evaluations"]
    wall = time.perf_counter() - t0
    m = sim._particle_mass[sim.state.material]
    depth = float(sim.state.x[np.isin(sim.state.ids, jet), 2].mean())
    return {"wall_s": wall, "evaluations": evaluations, "ke": 0.5 * float((m * (sim.state.v**2).sum(1)).sum()),
            "jet_depth": depth}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--speed", type=float, default=16.0, help="the jet's speed, m/s")
    ap.add_argument("--pool", type=float, default=0.3, help="the pool's (and tank's) width, m")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    run("individual", 1, args.speed, args.pool)  # compile
    runs = {"individual": [], "global": []}
    for _ in range(args.repeats):
        for mode in runs:
            runs[mode].append(run(mode, args.frames, args.speed, args.pool))
    out = {"particles": Simulation(parse_scene(jet_scene(pool=args.pool))).state.n, "frames": args.frames,
           "speed": args.speed, "pool_m": args.pool}
    for mode, rs in runs.items():
        out[mode] = {"wall_s": round(statistics.median(r["wall_s"] for r in rs), 3),
                     "evaluations": rs[0]["evaluations"], "ke_J": round(rs[0]["ke"], 5),
                     "jet_depth_m": round(rs[0]["jet_depth"], 5)}
    out["speedup"] = round(out["global"]["wall_s"] / out["individual"]["wall_s"], 3)
    out["evaluation_ratio"] = round(out["global"]["evaluations"] / out["individual"]["evaluations"], 3)
    out["ke_difference"] = round(abs(out["individual"]["ke_J"] / out["global"]["ke_J"] - 1), 5)
    out["jet_depth_difference"] = round(abs(out["individual"]["jet_depth_m"] / out["global"]["jet_depth_m"] - 1), 5)
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
