"""How the dam break's front depends on the substeps: the slice of ``tests/core/test_water_physics.py``
(Martin & Moyce's 2:1 column, a = 1 m, five particles deep) at each a/spacing and each
``simulation.min_substeps`` given, its front slope over 1.2 <= T <= 3 against theirs, and the
substeps it took a frame (docs/materials.md, the water preset). ``--xsph`` sets
the model's XSPH share a substep (``viscoelastic_clavet2005.XSPH``, 0.05) for the run.

Usage::

    python scripts/benchmarks/dam_break_substeps.py [--ratios 10 20] [--min-substeps 2 3 4 6] [--xsph 0.05]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import martin_moyce as mm  # noqa: E402

from sph_addon.core.scene.scene_file import parse_scene  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402

FPS, FRAMES, G = 30, 21, 9.81


def front_error(ratio: int, min_substeps: int) -> tuple[float, float]:
    """(slope error against Martin & Moyce, mean substeps a frame) of the slice at a/spacing ``ratio``."""
    s, a = 1.0 / ratio, 1.0
    depth = 5 * s
    sim = Simulation(parse_scene({
        "format": "sph_addon.scene/2", "name": "dam_break_slice", "particle_spacing": s, "fps": FPS,
        "frame_start": 1, "frame_end": FRAMES + 1, "simulation": {"min_substeps": min_substeps},
        "materials": [{"name": "water", "preset": "water"}],
        "sources": [{"type": "box", "material": "water", "min": [0, 0, 0], "max": [a, depth, 2 * a]}],
        "colliders": [{"type": "box_container", "size": [4 * a, depth, 3 * a],
                       "position": [2 * a, depth / 2, 1.5 * a]}]}))
    series, substeps = [], []
    for f in range(FRAMES):
        substeps.append(sim.advance_frame().substeps)
        series.append((mm.nondim_time((f + 1) / FPS, a, G), mm.front(sim.state.x[:, 0], 0.0, s) / a))
    return mm.front_error(mm.front_slope(series)), float(np.mean(substeps))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ratios", type=int, nargs="+", default=[10, 20], help="a / spacing (default 10 20)")
    ap.add_argument("--min-substeps", type=int, nargs="+", default=[2, 3, 4, 6])
    ap.add_argument("--xsph", type=float, default=None, help="XSPH share a substep (default the model's)")
    args = ap.parse_args()
    if args.xsph is not None:
        from sph_addon.core.models import viscoelastic_clavet2005

        viscoelastic_clavet2005.XSPH = args.xsph
    print("a/spacing  min_substeps  substeps/frame  front slope vs Martin & Moyce")
    for ratio in args.ratios:
        for count in args.min_substeps:
            error, mean = front_error(ratio, count)
            print(f"{ratio:9d}  {count:12d}  {mean:14.1f}  {100 * error:+.2f} %", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
