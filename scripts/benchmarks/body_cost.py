"""What one floating body costs: the dam break (``scripts/scenes/dam_break.json``) with and without a dynamic
crate in the surge's path, same run, alternating, median of ``--repeats``.

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/body_cost.py [--frames 30] [--repeats 3]

The crate: a 30 cm box of 500 kg/m³ on the tank's floor 2.5 m from the dam (``docs/bodies.md``). Prints the
wall time of each bake (the frames after the first, which compiles nothing but warms the caches), the
ratio of the medians, the substeps and the front at the last frame.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from pathlib import Path

from sph_addon.core.scene import parse_scene
from sph_addon.core.simulation import Simulation

SCENE = Path(__file__).resolve().parents[1] / "scenes" / "dam_break.json"
CRATE = {"type": "box", "name": "crate", "size": [0.3, 0.3, 0.3], "position": [2.5, 0.75, 0.15],
         "dynamic": True, "density": 500.0}


def run(data: dict, frames: int) -> tuple[float, int, float | None]:
    """(seconds for frames 2..frames, substeps in all, the front at the last frame in m)."""
    sim = Simulation(parse_scene(data, SCENE.parent))
    stats = sim.advance_frame()
    t0 = time.perf_counter()
    substeps = stats.substeps
    for _ in range(frames - 1):
        stats = sim.advance_frame()
        substeps += stats.substeps
    return time.perf_counter() - t0, substeps, stats.extra.get("front_m")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    base = json.loads(SCENE.read_text())
    with_body = copy.deepcopy(base)
    with_body["colliders"].append(CRATE)
    times: dict[str, list[float]] = {"dam break": [], "with a crate": []}
    for _ in range(args.repeats):
        for name, data in (("dam break", base), ("with a crate", with_body)):
            seconds, substeps, front = run(data, args.frames)
            times[name].append(seconds)
            print(json.dumps({"scene": name, "seconds": round(seconds, 3), "substeps": substeps, "front_m": front}),
                  flush=True)
    plain, crate = (statistics.median(times[k]) for k in times)
    print(json.dumps({"median_s": {k: round(statistics.median(v), 3) for k, v in times.items()},
                      "ratio": round(crate / plain, 3)}))


if __name__ == "__main__":
    main()
