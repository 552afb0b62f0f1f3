"""Benchmark scene ``surface_sphere``: our surface reconstruction vs splashsurf.

About 100,000 particles on a cubic lattice filling a sphere are meshed by
:func:`sph_addon.core.surface.reconstruct_surface` and, in the same run, by
splashsurf (``pysplashsurf``, benchmark-only, run in its own virtual
environment through a subprocess) with the same support (splashsurf smoothing
length 2 r = compact support 4 r = 2 spacings), the same cube size (r, half a
spacing), both at the same number of threads. Smoothing is off on both sides;
ours includes the per-vertex velocity, splashsurf's does not.

Reported (JSON): ``particles``, ``wall_s`` (ours, median of ``--repeats`` runs,
JIT compile excluded and reported as ``compile_s``), ``peer_wall_s``,
``ratio`` = wall_s / peer_wall_s, ``triangles``, ``peer_triangles`` and
``surface_distance_radii``: the symmetric mean distance between the two
surfaces (mean over each mesh's vertices of the distance to the other mesh's
triangles, averaged both ways) in particle radii.

Run standalone::

    .venv/bin/python scripts/benchmarks/surface.py --vs splashsurf --threads 2

or through ``scripts/bench.py`` which calls :func:`run`.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

log = logging.getLogger("bench.surface")

SPACING = 0.05          # m; the particle radius r is half of it
SUPPORT_FACTOR = 2.0    # support in spacings = splashsurf smoothing_length 2 r (support 4 r)
CUBE_FACTOR = 0.5       # cube in spacings = splashsurf cube_size 1 r

_PEER_SCRIPT = textwrap.dedent("""
    import json, statistics, sys, time
    import numpy as np
    import pysplashsurf
    src, dst, radius, repeats = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    x = np.load(src)
    # smoothing_length and cube_size in multiples of the particle radius
    # (what this pysplashsurf version does, whatever its docstring says).
    kw = dict(particle_radius=radius, smoothing_length=2.0, cube_size=1.0,
              iso_surface_threshold=0.6, multi_threading=True)
    pysplashsurf.reconstruct_surface(x, **kw)  # warm-up (allocator, thread pool)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        res = pysplashsurf.reconstruct_surface(x, **kw)
        times.append(time.perf_counter() - t)
    np.savez(dst, vertices=np.asarray(res.mesh.vertices), faces=np.asarray(res.mesh.triangles))
    print(json.dumps({"wall_s": statistics.median(times), "times": times}))
""")


def sphere_particles(n_target: int, spacing: float) -> np.ndarray:
    """Cubic lattice of ``spacing`` inside the sphere holding about ``n_target`` particles (m)."""
    radius = (3.0 * n_target / (4.0 * np.pi)) ** (1.0 / 3.0) * spacing
    k = int(np.ceil(radius / spacing)) + 1
    g = np.arange(-k, k + 1) * spacing
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    return np.ascontiguousarray(x[np.einsum("ij,ij->i", x, x) <= radius * radius])


def _distance_kernels():
    from numba import njit, prange

    from sph_addon.core.numerics import config

    @njit(**dict(config.NJIT_PARALLEL, cache=False))
    def point_mesh_distance(p, v, f, cell_keys, starts, order, origin, cell, n1, n2, out):
        """Distance from each p to the nearest triangle whose centroid is in the 27 cells around it."""
        for i in prange(p.shape[0]):
            ci = int(np.floor((p[i, 0] - origin[0]) / cell))
            cj = int(np.floor((p[i, 1] - origin[1]) / cell))
            ck = int(np.floor((p[i, 2] - origin[2]) / cell))
            best = cell * cell
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    for dk in range(-1, 2):
                        j, k = cj + dj, ck + dk
                        if ci + di < 0 or j < 0 or k < 0 or j >= n1 or k >= n2:
                            continue
                        key = ((ci + di) * n1 + j) * n2 + k
                        c = np.searchsorted(cell_keys, key)
                        if c >= cell_keys.shape[0] or cell_keys[c] != key:
                            continue
                        for s in range(starts[c], starts[c + 1]):
                            t = order[s]
                            d2 = _point_triangle_d2(p[i], v[f[t, 0]], v[f[t, 1]], v[f[t, 2]])
                            if d2 < best:
                                best = d2
            out[i] = np.sqrt(best)

    @njit(**dict(config.NJIT, cache=False))
    def _dot(a, b):
        """3-vector dot product (numba's ``@`` needs SciPy's BLAS)."""
        return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

    @njit(**dict(config.NJIT, cache=False))
    def _point_triangle_d2(p, a, b, c):
        """Squared distance point-triangle (Ericson, Real-Time Collision Detection, 5.1.5)."""
        ab = b - a
        ac = c - a
        ap = p - a
        d1 = _dot(ab, ap)
        d2 = _dot(ac, ap)
        if d1 <= 0.0 and d2 <= 0.0:
            q = a
        else:
            bp = p - b
            d3 = _dot(ab, bp)
            d4 = _dot(ac, bp)
            cp = p - c
            d5 = _dot(ab, cp)
            d6 = _dot(ac, cp)
            vc = d1 * d4 - d3 * d2
            vb = d5 * d2 - d1 * d6
            va = d3 * d6 - d5 * d4
            if d3 >= 0.0 and d4 <= d3:
                q = b
            elif d6 >= 0.0 and d5 <= d6:
                q = c
            elif vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
                q = a + d1 / (d1 - d3) * ab
            elif vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
                q = a + d2 / (d2 - d6) * ac
            elif va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
                q = b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b)
            else:
                den = 1.0 / (va + vb + vc)
                q = a + ab * (vb * den) + ac * (vc * den)
        e = p - q
        return _dot(e, e)

    return point_mesh_distance


def mean_distance(p: np.ndarray, v: np.ndarray, f: np.ndarray, cell: float) -> tuple[float, float]:
    """Mean distance from points ``p`` to mesh (v, f); distances above ``cell`` are clamped to it.

    Triangles are binned by centroid in cells of ``cell``; the 27 cells around a
    point hold every triangle within ``cell - (largest triangle size)``.
    Returns (mean distance, fraction of points clamped).
    """
    kernel = _distance_kernels()
    cen = v[f].mean(1)
    origin = np.minimum(cen.min(0), p.min(0)) - cell
    idx = np.floor((cen - origin) / cell).astype(np.int64)
    n = np.maximum(idx.max(0), np.floor((p.max(0) - origin) / cell).astype(np.int64)) + 2
    keys = (idx[:, 0] * n[1] + idx[:, 1]) * n[2] + idx[:, 2]
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    change = np.flatnonzero(np.diff(sk)) + 1
    starts = np.concatenate(([0], change, [len(sk)])).astype(np.int64)
    out = np.empty(len(p))
    kernel(np.ascontiguousarray(p, np.float64), np.ascontiguousarray(v, np.float64),
           np.ascontiguousarray(f, np.int64), sk[starts[:-1]], starts, order.astype(np.int64),
           origin, float(cell), n[1], n[2], out)
    return float(out.mean()), float(np.mean(out >= cell * (1 - 1e-12)))


def _run_peer(x: np.ndarray, radius: float, repeats: int, threads: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "x.npy", Path(tmp) / "mesh.npz"
        np.save(src, x)
        from peers import peer_env, peer_python

        python = peer_python()
        proc = subprocess.run([python, "-c", _PEER_SCRIPT, str(src), str(dst), repr(radius),
                               str(repeats)], capture_output=True, text=True, env=peer_env(threads), check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"splashsurf run failed ({python}):\n{proc.stderr[-2000:]}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        mesh = np.load(dst)
        out["vertices"], out["faces"] = mesh["vertices"], mesh["faces"]
    return out


def run(args: argparse.Namespace, vs: str | None) -> dict:
    """Run scene ``surface_sphere``; ``vs="splashsurf"`` adds the peer. Returns the result dict."""
    import numba

    from sph_addon.core.surface import default_settings, reconstruct_surface

    n_target = int(getattr(args, "particles", None) or 100_000)
    threads = int(getattr(args, "threads", None) or 2)
    repeats = int(getattr(args, "repeats", None) or 3)
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    x = sphere_particles(n_target, SPACING)
    radius = SPACING / 2
    settings = default_settings(SPACING, support=SUPPORT_FACTOR * SPACING, cube_size=CUBE_FACTOR * SPACING,
                                smoothing_iterations=0, normals=False)
    v = np.zeros_like(x)
    t = time.perf_counter()
    reconstruct_surface(x[:64], v[:64], settings)  # compile (or load the cache) on a tiny input
    compile_s = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        mesh = reconstruct_surface(x, v, settings)
        times.append(time.perf_counter() - t)
    result = {"scene": "surface_sphere", "particles": len(x), "threads": threads,
              "spacing_m": SPACING, "support_m": settings.support, "cube_size_m": settings.cube_size,
              "iso": settings.iso, "wall_s": statistics.median(times), "times_s": times,
              "compile_s": compile_s, "triangles": len(mesh.faces), "vertices": len(mesh.vertices)}
    if vs in (None, "", "none"):
        return result
    if vs != "splashsurf":
        raise ValueError(f"surface benchmark: unknown peer {vs!r} (only 'splashsurf')")
    peer = _run_peer(x, radius, repeats, threads)
    d_ab, clamp_ab = mean_distance(mesh.vertices, peer["vertices"], peer["faces"], 4 * radius)
    d_ba, clamp_ba = mean_distance(peer["vertices"], mesh.vertices, mesh.faces, 4 * radius)
    result.update({"peer": "splashsurf", "peer_wall_s": peer["wall_s"], "peer_times_s": peer["times"],
                   "ratio": result["wall_s"] / peer["wall_s"], "peer_triangles": len(peer["faces"]),
                   "surface_distance_radii": 0.5 * (d_ab + d_ba) / radius,
                   "surface_distance_clamped_fraction": max(clamp_ab, clamp_ba)})
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vs", default="splashsurf", help="peer: splashsurf or none")
    parser.add_argument("--out", help="write the JSON result here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    result = run(args, args.vs)
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
