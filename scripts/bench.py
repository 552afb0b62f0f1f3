"""Benchmarks: named scenes, figures printed, peers compared side by side in the same run.

Usage::

    python scripts/bench.py --scene dam_break [--vs splishsplash] [--seconds 1.0] [--spacing 0.05] [--json]
        [--model sph] [--peer-method wcsph]   (the classic SPH liquid; SPlisHSPlasH's WCSPH beside it)
    python scripts/bench.py --scene dam_break_scaling [--steps 20] [--json]
    python scripts/bench.py --scene dam_break_1m [--particles 1000000] [--frames 3] [--json]
    python scripts/bench.py --scene sdf_build [--json]
    python scripts/bench.py --scene surface_sphere [--vs splashsurf] [--json]
    python scripts/bench.py --scene material_cost [--frames 20] [--repeats 3] [--materials jelly,rubber] [--json]
    python scripts/bench.py --scene threads [--vs splishsplash] [--thread-counts 1,2,4,8,16] [--out F.json]
        (the dam break, its stages and the million-particle dam break at each thread count, each in its
        own process: scripts/benchmarks/thread_scaling.py, whose options it passes on)

Peers (SPlisHSPlasH, splashsurf) are benchmark-only: ``scripts/setup_bench_env.sh`` installs them
into ``.venv-bench``. Speed is measured here, never asserted in tests; record results in
BENCHMARKS.md with the command. These machines are shared and noisy: compare in one run, quote
medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "benchmarks"))
sys.path.insert(0, str(HERE.parent))

SCENES = ("dam_break", "dam_break_scaling", "dam_break_1m", "sdf_build", "surface_sphere", "material_cost", "threads")
DEFAULT_PARTICLES = {"surface_sphere": 100_000, "dam_break_1m": 1_000_000}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scene", required=True, choices=SCENES)
    ap.add_argument("--vs", help="peer to run in the same invocation: splishsplash or splashsurf")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("--seconds", type=float, default=1.0, help="dam_break: simulated seconds")
    ap.add_argument("--spacing", type=float, default=None,
                    help="dam_break: particle spacing of both sides, m (default: the scene's, 0.05)")
    ap.add_argument("--model", choices=("viscoelastic", "sph"), default="viscoelastic",
                    help="dam_break: our model (viscoelastic water, or sph: the classic SPH liquid)")
    ap.add_argument("--peer-method", choices=("dfsph", "wcsph"), default="dfsph",
                    help="dam_break --vs splishsplash: SPlisHSPlasH's method")
    ap.add_argument("--steps", type=int, default=20, help="dam_break_scaling: steps per resolution")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("NUMBA_NUM_THREADS", "2")))
    ap.add_argument("--repeats", type=int, default=3, help="sdf_build / surface_sphere: timed repeats")
    ap.add_argument("--particles", type=int, default=None,
                    help="surface_sphere: particle count (100000); dam_break_1m: about this many (1000000)")
    ap.add_argument("--frames", type=int, default=None, help="dam_break_1m: frames to run (3); material_cost (20)")
    ap.add_argument("--materials", default=None,
                    help="material_cost: which of its scenes (honey,jelly,rubber; also jelly_8000,rubber_8000)")
    ap.add_argument("--cells", type=int, default=128, help="sdf_build: grid cells along the longest axis")
    ap.add_argument("--n", type=int, default=65, help="sdf_build: mesh subdivision (12 n^2 triangles)")
    args, rest = ap.parse_known_args(argv)
    if args.scene == "threads":
        import thread_scaling

        return thread_scaling.main(rest + ["--seconds", str(args.seconds)] + (["--vs", args.vs] if args.vs else []))
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.threads))
    if args.particles is None:
        args.particles = DEFAULT_PARTICLES.get(args.scene, 100_000)

    if args.scene == "dam_break":
        import simulation

        result = simulation.run_dam_break(args.seconds, args.vs, args.threads, args.spacing, args.model,
                                          args.peer_method)
    elif args.scene == "dam_break_scaling":
        import simulation

        result = simulation.run_scaling(args.steps)
    elif args.scene == "dam_break_1m":
        import simulation

        result = simulation.run_large(args.particles, args.frames or 3)
    elif args.scene == "material_cost":
        import material_cost

        names = args.materials.split(",") if args.materials else material_cost.DEFAULT
        unknown = sorted(set(names) - set(material_cost.SCENES))
        if unknown:
            ap.error(f"--materials: unknown {', '.join(unknown)}; choose from {', '.join(material_cost.SCENES)}")
        result = material_cost.run(args.frames or 20, args.repeats, names)
    elif args.scene == "sdf_build":
        import sdf

        result = sdf.run(args)
    else:
        import surface

        result = surface.run(args, args.vs)
    if args.json:
        print(json.dumps(result))
    else:
        width = max(map(len, result), default=0)
        for key, value in result.items():
            print(f"{key:>{width}}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
