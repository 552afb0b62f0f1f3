"""What one floating body costs: the dam break (``scripts/scenes/dam_break.json``) alone, with a static crate in
the surge's path, with the crate keyframed (sliding 0.5 m over the second) and with it dynamic, same run,
alternating, median of ``--repeats``: what a second collider costs apart from what its dynamics cost.

    NUMBA_NUM_THREADS=2 python scripts/benchmarks/body_cost.py [--frames 30] [--repeats 3] [--projection none]

``--projection none`` bakes the water without its grid pressure projection, as a floating body needs
(the grid does not see moving colliders: particles it pushes into the crate are thrown out of it).

The crate: a 30 cm box (500 kg/m³ when dynamic) on the tank's floor 2.5 m from the dam (``docs/bodies.md``).
Prints the wall time of each bake (the frames after the first, which compiles nothing but warms the
caches), the substeps and the front at the last frame, then each variant's median and its ratio to the
dam break alone.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from pathlib import Path

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

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
    ap.add_argument("--projection", choices=("grid", "none"), default=None,
                    help="the water's pressure_projection (default: the scene's, the preset's grid)")
    args = ap.parse_args()
    base = json.loads(SCENE.read_text())
    if args.projection is not None:
        for material in base["materials"]:
            material.setdefault("params", {})["pressure_projection"] = args.projection
    keys = [{"frame": 1, "position": CRATE["position"]}, {"frame": 30, "position": [2.0, 0.75, 0.15]}]
    variants = {"dam break": base}
    crates = (("static crate", {"dynamic": False}), ("keyframed crate", {"dynamic": False, "keyframes": keys}),
              ("dynamic crate", {}))
    for name, extra in crates:
        variants[name] = copy.deepcopy(base)
        variants[name]["colliders"].append({**CRATE, **extra})
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, data in variants.items():
            seconds, substeps, front = run(data, args.frames)
            times[name].append(seconds)
            print(json.dumps({"scene": name, "seconds": round(seconds, 3), "substeps": substeps, "front_m": front}),
                  flush=True)
    plain = statistics.median(times["dam break"])
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(json.dumps({name: {"median_s": round(m, 3), "ratio": round(m / plain, 3)} for name, m in medians.items()}))
    # What the body's dynamics cost beside the same obstacle held still (the splash on it is physics).
    print(json.dumps({"dynamic / static": round(medians["dynamic crate"] / medians["static crate"], 3)}))

if __name__ == "__main__":
    main()
