"""Mesh collider grids clipped to the domain: a 40 m x 40 m ground slab (0.2 m thick) under a 2 m
domain, its distance field built whole and clipped to where particles can reach, at the automatic
cell size of a 5 cm spacing (2.5 cm). Median of ``--repeat`` builds each, after one to compile.

    python scripts/benchmarks/sdf_clip.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from sph_addon.core.colliders.motion import StaticMotion  # noqa: E402
from sph_addon.core.colliders.shapes.reach import domain_in_local_frame  # noqa: E402
from sph_addon.core.colliders.shapes.sdf_mesh import build_mesh_sdf  # noqa: E402

SPACING = 0.05
DOMAIN = {"min": [-1.0, -1.0, -0.5], "max": [1.0, 1.0, 1.5]}


def slab(lo=(-20.0, -20.0, -0.2), hi=(20.0, 20.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """A box: 8 corners, 12 outward triangles."""
    v = np.array([[hi[0] if i & 1 else lo[0], hi[1] if i & 2 else lo[1], hi[2] if i & 4 else lo[2]]
                  for i in range(8)])
    t = []
    for a, b, c, d in ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)):
        t += [(a, b, c), (a, c, d)]
    return v, np.array(t, np.int64)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    v, t = slab()
    reach = domain_in_local_frame(DOMAIN, StaticMotion((0, 0, 0), (0, 0, 0)), 1, 2, SPACING)
    settings = dict(cell_size=SPACING / 2, padding=0.0, mode="solid")
    for label, box in (("clipped to the domain", reach), ("whole mesh", None)):
        build_mesh_sdf(v, t, reach=box, **settings)  # compile
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            sdf = build_mesh_sdf(v, t, reach=box, **settings)
            times.append(time.perf_counter() - t0)
        print(f"{label}: grid {'x'.join(map(str, sdf.grid.shape))}, {sdf.grid.nbytes / 2**20:.1f} MiB, "
              f"median {statistics.median(times):.3f} s", flush=True)


if __name__ == "__main__":
    main()
