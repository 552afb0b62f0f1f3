"""How still our water keeps a pool at rest: the figures ``pool_at_rest_peer.py`` prints for SPlisHSPlasH.

The pool of ``tests/core/test_water_physics.py`` (0.5 m of water in a closed 0.3 x 0.3 x 1.0 m
column, 2.5 cm spacing, 2,880 particles filled on the lattice at (i + 1/2) s), baked 4 s at 30 fps
with the automatic substeps. At t = 0.1, 0.25 (the nearest frames), 0.5, 1, 2, 3 and 4 s it prints the
same columns as the peer's script: particle count, median / 90th percentile / max speed (cm/s), the
mean z of the top N/20 particles and of all particles; then the largest speed over the first
second, the substeps and relaxation passes, and the wall time. It also prints the pool's depth as
the surface stands (mean z of the top layer's worth of particles plus half a spacing) against the
0.5 m filled, and, at 2 s, how many particles the first three layers along the side walls hold at
mid-depth (0.1-0.4 m) over the lattice's (the depth's shortfall was there: CHANGELOG.md, method notes).
``--density-error`` and ``--support-factor`` run the variants of the notes' depth table;
``--structure`` prints the interior's neighbour shells at the end (what arrangement it settled into);
``--spacing`` runs the same pool at another particle spacing (the depth's and stillness's
resolution independence: 0.025, 0.01667 and 0.0125 in docs/materials.md); ``--min-substeps`` raises
the substeps (CHANGELOG.md, method notes, "Raising the substeps can throw a fresh pool up").

Usage::

    python scripts/benchmarks/pool_at_rest.py [--seconds 4] [--density-error 0.01] [--support-factor 2.0]
        [--structure] [--spacing 0.025] [--min-substeps 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from pool_table import TIMES, print_rows, row  # noqa: E402

from sph_addon.core.scene.scene_file import parse_scene  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402

SPACING, WIDTH, DEPTH, FPS = 0.025, 0.3, 0.5, 30


def pool_scene(density_error: float | None = None, support_factor: float | None = None,
               spacing: float = SPACING, min_substeps: int | None = None) -> dict:
    water = {"name": "water", "preset": "water"}
    if density_error is not None:
        water["params"] = {"density_error": density_error}
    simulation = {"support_factor": support_factor, "min_substeps": min_substeps}
    extra = {"simulation": {k: v for k, v in simulation.items() if v is not None}}
    return {"format": "sph_addon.scene/2", "name": "pool_at_rest", "particle_spacing": spacing,
            "frame_start": 1, "frame_end": 1000, "fps": FPS, **extra,
            "materials": [water],
            "sources": [{"type": "box", "material": "water", "min": [0, 0, 0], "max": [WIDTH, WIDTH, DEPTH]}],
            "colliders": [{"type": "box_container", "size": [WIDTH, WIDTH, 1.0],
                           "position": [WIDTH / 2, WIDTH / 2, 0.5]}]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--spacing", type=float, default=SPACING, help="particle spacing, m (default 0.025)")
    ap.add_argument("--min-substeps", type=int, default=None, help="simulation.min_substeps (default the scene's, 2)")
    ap.add_argument("--density-error", type=float, default=None, help="the water's density_error (default 0.01)")
    ap.add_argument("--support-factor", type=float, default=None, help="h / spacing (default 2.0)")
    ap.add_argument("--structure", action="store_true",
                    help="at the end, the interior's neighbour shells and kernel sums (docs/materials.md)")
    args = ap.parse_args()
    s = args.spacing
    sim = Simulation(parse_scene(pool_scene(args.density_error, args.support_factor, s, args.min_substeps)))
    layers = None
    rows, vmax_1s, substeps, passes = [row(0.0, sim.state.x, sim.state.v)], 0.0, 0, 0.0
    wanted = [round(t * FPS) for t in TIMES if t <= args.seconds]
    start = time.perf_counter()
    for frame in range(1, round(args.seconds * FPS) + 1):
        st = sim.advance_frame()
        substeps += st.substeps
        passes += st.extra["density_iterations"] * st.substeps
        if frame <= FPS:
            vmax_1s = max(vmax_1s, st.max_speed)
        if frame in wanted:
            rows.append(row(frame / FPS, sim.state.x, sim.state.v))
        if frame == 2 * FPS:
            layers = side_wall_layers(sim.state.x, s)
    wall = time.perf_counter() - start
    print_rows(rows)
    depth = rows[-1]["top_z"] + s / 2
    print(f"max speed over t <= 1 s: {100 * vmax_1s:.1f} cm/s; substeps {substeps}; "
          f"passes per substep {passes / substeps:.2f}; wall {wall:.1f} s; depth at the end {depth:.4f} m "
          f"({100 * (depth / DEPTH - 1):+.1f} % of the {DEPTH} m filled); twice the mean height "
          f"{2 * rows[-1]['mean_z']:.4f} m ({100 * (2 * rows[-1]['mean_z'] / DEPTH - 1):+.2f} %)")
    if layers is not None:
        print("particles per side-wall layer at 2 s, mid-depth, over the lattice's (layers 0, 1, 2): "
              + ", ".join(f"{r:.3f}" for r in layers))
    if args.structure:
        structure(sim.state.x, sim.h, s)
    return 0


def structure(x: np.ndarray, h: float, s: float) -> None:
    """The interior's (3-9 cm from the side walls, 7.5-37.5 cm high) neighbours within 1.25 s per
    particle, by direction (along z: |cos| > 0.9; oblique: 0.3-0.7; level: < 0.2) with their mean
    distance in spacings, and its number density and mean Σ (1-q)³ over the cubic lattice's."""
    inner = np.all((x[:, :2] > 0.075) & (x[:, :2] < 0.225), axis=1) & (x[:, 2] > 0.075) & (x[:, 2] < 0.375)
    rel = x[None, :, :] - x[inner][:, None, :]
    r = np.linalg.norm(rel, axis=2)
    shell = (r > 0) & (r < 1.25 * s)
    cos_z = np.abs(rel[..., 2]) / np.where(r > 0, r, 1.0)
    parts = []
    for name, lo, hi in (("along z", 0.9, 1.01), ("oblique", 0.3, 0.7), ("level", 0.0, 0.2)):
        sel = shell & (cos_z >= lo) & (cos_z < hi)
        parts.append(f"{name} {sel.sum() / inner.sum():.2f} at {r[sel].mean() / s:.3f} s")
    grid = np.arange(-3, 4)
    lat = np.linalg.norm(np.stack(np.meshgrid(grid, grid, grid, indexing="ij"), -1).reshape(-1, 3), axis=1) * s
    lattice = np.sum(np.clip(1 - lat[lat > 0] / h, 0, None) ** 3)
    near = np.where((r > 0) & (r < h), (1 - np.clip(r / h, 0, 1)) ** 3, 0.0).sum(axis=1)
    print(f"interior neighbours within 1.25 s per particle: {'; '.join(parts)} (the cubic lattice: 2 along z at "
          f"1, 4 level at 1; every other column shifted by s/2: 2 along z at 1, 8 oblique at 1.118)")
    print(f"interior number density {inner.sum() * s**3 / (0.15 * 0.15 * 0.30):.4f}, mean sum (1-q)^3 "
          f"{near.mean() / lattice:.4f}, both over the cubic lattice's")
    cell = np.floor(x[:, 0] / s).astype(int) * 1000 + np.floor(x[:, 1] / s).astype(int)
    ends = np.array([(x[cell == c, 2].min(), x[cell == c, 2].max()) for c in np.unique(cell)]) / s
    slabs = np.bincount(np.clip((x[:, 2] / s).astype(int), 0, None))
    print(f"columns (particles by x-y cell of the lattice): lowest particle at {ends[:, 0].mean():.3f} s, highest at "
          f"{ends[:, 1].mean():.3f} s on average (the fill: 0.5 and {DEPTH / s - 0.5:.1f}); particles per slab of one "
          f"spacing from the floor up: {' '.join(str(c) for c in slabs[:6])} (the fill: {round(WIDTH / s) ** 2})")


def side_wall_layers(x, s: float, count: int = 3) -> list[float]:
    """Particles within [k s, (k+1) s) of the nearest side wall, 0.1 < z < 0.4 m, over the lattice's ring k."""
    wall = np.minimum.reduce([x[:, 0], WIDTH - x[:, 0], x[:, 1], WIDTH - x[:, 1]])
    mid = (x[:, 2] > 0.1) & (x[:, 2] < 0.4)
    per_side = round(WIDTH / s)
    return [np.count_nonzero(mid & (wall >= k * s) & (wall < (k + 1) * s))
            / (4 * (per_side - 2 * k - 1) * round(0.3 / s)) for k in range(count)]


if __name__ == "__main__":
    sys.exit(main())
