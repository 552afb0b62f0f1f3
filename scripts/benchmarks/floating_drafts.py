"""How deep a rigid box and an elastic cube of one density float side by side in water.

A 16 cm pool of the ``water`` preset (its grid projection as shipped, or ``--projection none``) in a
0.8 x 0.3 m tank; a 10 cm box (dynamic collider) and a 10 cm jelly cube (elastic, E = 0.1 MPa) of each
density dropped 1 cm onto it 40 cm apart. Each one's submerged share of its height, over the last half
second, below the free surface read between them (the water's 95th height percentile there plus half a
spacing), and the same from the water's volume (each particle s³). One JSON line a density::

    python scripts/benchmarks/floating_drafts.py --spacing 0.02 --densities 300 500 800
    python scripts/benchmarks/floating_drafts.py --liquid classic_water --densities 500
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sph_addon.core.scene.scene_file import parse_scene  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402

SIDE = 0.1
TANK = (0.8, 0.3)


def scene(rho: float, spacing: float, projection: str | None, liquid: str = "water") -> dict:
    params = {} if projection is None else {"pressure_projection": projection}
    water = ({"name": "water", "preset": "water", "params": params} if liquid == "water" else
             {"name": "water", "model": "sph", "preset": liquid})
    return {
        "format": "sph_addon.scene/2", "name": "floating_drafts", "particle_spacing": spacing, "fps": 24,
        "frame_start": 1, "frame_end": 400,
        "materials": [water,
                      {"name": "jelly", "model": "elastic", "preset": "rubber",
                       "params": {"density": rho, "youngs_modulus": 1e5, "damping_time": 0.02}}],
        "sources": [{"type": "box", "material": "water", "min": [0, 0, 0], "max": [TANK[0], TANK[1], 0.16]},
                    {"type": "box", "material": "jelly", "min": [0.55, 0.1, 0.17], "max": [0.65, 0.2, 0.27]}],
        "colliders": [{"type": "box_container", "name": "tank", "size": [TANK[0], TANK[1], 0.6],
                       "position": [TANK[0] / 2, TANK[1] / 2, 0.3]},
                      {"type": "box", "name": "crate", "size": [SIDE] * 3, "position": [0.15, 0.15, 0.22],
                       "dynamic": True, "density": rho}]}


def drafts(rho: float, spacing: float, projection: str | None, seconds: float, liquid: str = "water") -> dict:
    sim = Simulation(parse_scene(scene(rho, spacing, projection, liquid)))
    out: dict[str, list] = {"rigid": [], "elastic": [], "rigid_by_volume": [], "elastic_by_volume": []}
    frames = int(round(seconds * 24))
    for frame in range(frames):
        sim.advance_frame()
        if frame < frames - 12:
            continue
        x, m = sim.state.x, sim.state.material
        water = x[m == 0]
        between = water[(water[:, 0] > 0.3) & (water[:, 0] < 0.45)]
        surface = np.percentile(between[:, 2], 95) + spacing / 2
        bottoms = (sim.bodies.bodies[0].motion.com[2] - SIDE / 2, x[m == 1, 2].mean() - SIDE / 2)
        area = TANK[0] * TANK[1]
        line = (len(water) * spacing**3 - SIDE * SIDE * sum(bottoms)) / (area - 2 * SIDE * SIDE)
        for name, bottom in zip(("rigid", "elastic"), bottoms):
            out[name].append((surface - bottom) / SIDE)
            out[f"{name}_by_volume"].append((line - bottom) / SIDE)
    return {k: round(float(np.mean(v)), 4) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spacing", type=float, default=0.02)
    ap.add_argument("--densities", type=float, nargs="+", default=[300.0, 500.0, 800.0])
    ap.add_argument("--projection", choices=("grid", "none"), default=None, help="default: the preset's")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--liquid", choices=("water", "classic_water"), default="water",
                    help="the viscoelastic model's water preset or the sph model's classic_water")
    args = ap.parse_args()
    for rho in args.densities:
        start = time.perf_counter()
        result = drafts(rho, args.spacing, args.projection, args.seconds, args.liquid)
        print(json.dumps({"density": rho, "spacing": args.spacing, "liquid": args.liquid,
                          "projection": args.projection or "preset",
                          **result, "wall_s": round(time.perf_counter() - start, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
