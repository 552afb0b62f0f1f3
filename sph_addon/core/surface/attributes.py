"""Particle quantities carried onto surface vertices (velocity for motion blur).

A vertex's value is the kernel-weighted average of the particles near it,
w = (1 - r/R)^2 (the term of Clavet's eq. 7.1) with R = half the field's
support (:func:`.reconstruct.reconstruct_surface`). A vertex lies on a lattice
edge (at most a cube diagonal long) whose inside end is within ``support`` of
some particle, so the few vertices with no particle within R are averaged
again with R = support + sqrt(3) cube, where at least one particle has w > 0:
the average is always defined. Averages reproduce constants exactly, so a
rigidly translating blob gets its translation velocity at every vertex.
"""

from __future__ import annotations

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange


@njit(**config.NJIT_PARALLEL)
def _interpolate(y, cell_keys, starts, x, values, origin, cell, n1, n2, out, wsum_out):
    """Kernel-weighted average of ``values`` at points ``y``; mutates ``out`` and ``wsum_out``.

    Parameters
    ----------
    y : (V, 3) float64 query points (m).
    cell_keys : (C,) int64 sorted unique keys of occupied cells (edge ``cell``).
    starts : (C + 1,) int64; particles of cell c are rows starts[c]:starts[c+1] of x.
    x : (N, 3) float64 particle positions (m), sorted by cell key.
    values : (N, 3) float64 vectors to average (velocity), in the same order.
    origin : (3,) float64 lower corner of the cell grid (m).
    cell : float, cell edge = kernel radius R (m).
    n1, n2 : int64 cells along y and z (key = (i n1 + j) n2 + k).
    out : (V, 3) float64, out; zero where no particle is within R.
    wsum_out : (V,) float64, out: the sum of weights (0 = no particle within R).

    The three cells (i, j, k-1..k+1) have consecutive keys, so their particles
    are one contiguous run of ``x``: 9 binary searches per point, not 27.
    """
    inv = 1.0 / cell
    r2max = cell * cell
    nc = cell_keys.shape[0]
    for v in prange(y.shape[0]):
        yx, yy, yz = y[v, 0], y[v, 1], y[v, 2]
        ci = int(np.floor((yx - origin[0]) * inv))
        cj = int(np.floor((yy - origin[1]) * inv))
        ck = int(np.floor((yz - origin[2]) * inv))
        wsum = 0.0
        ax = 0.0
        ay = 0.0
        az = 0.0
        for di in range(-1, 2):
            for dj in range(-1, 2):
                i, j = ci + di, cj + dj
                if i < 0 or j < 0 or j >= n1:
                    continue
                row = (i * n1 + j) * n2
                c0 = np.searchsorted(cell_keys, row + max(ck - 1, 0))
                c1 = np.searchsorted(cell_keys, row + min(ck + 1, n2 - 1) + 1)
                if c0 >= nc or c0 == c1:
                    continue
                for p in range(starts[c0], starts[c1]):
                    dx = yx - x[p, 0]
                    dy = yy - x[p, 1]
                    dz = yz - x[p, 2]
                    r2 = dx * dx + dy * dy + dz * dz
                    if r2 < r2max:
                        a = 1.0 - np.sqrt(r2) * inv
                        w = a * a
                        wsum += w
                        ax += w * values[p, 0]
                        ay += w * values[p, 1]
                        az += w * values[p, 2]
        wsum_out[v] = wsum
        if wsum > 0.0:
            out[v, 0] = ax / wsum
            out[v, 1] = ay / wsum
            out[v, 2] = az / wsum
        else:
            out[v, 0] = 0.0
            out[v, 1] = 0.0
            out[v, 2] = 0.0


def _average(y: np.ndarray, x: np.ndarray, values: np.ndarray,
             radius: float) -> tuple[np.ndarray, np.ndarray]:
    out = np.zeros((len(y), values.shape[1]))
    wsum = np.zeros(len(y))
    if len(y) == 0 or len(x) == 0:
        return out, wsum
    origin = np.minimum(x.min(0), y.min(0)) - radius
    idx = np.floor((x - origin) / radius).astype(np.int64)
    n = np.maximum(idx.max(0), np.floor((y.max(0) - origin) / radius).astype(np.int64)) + 2
    keys = (idx[:, 0] * n[1] + idx[:, 1]) * n[2] + idx[:, 2]
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    change = np.flatnonzero(np.diff(sk)) + 1
    starts = np.concatenate(([0], change, [len(sk)])).astype(np.int64)
    _interpolate(y, sk[starts[:-1]], starts, np.ascontiguousarray(x[order]),
                 np.ascontiguousarray(values[order]), origin, float(radius), n[1], n[2], out, wsum)
    return out, wsum


def interpolate_to_vertices(y: np.ndarray, x: np.ndarray, values: np.ndarray, radius: float,
                            fallback_radius: float | None = None) -> np.ndarray:
    """Kernel-weighted average of particle ``values`` at points ``y``.

    Parameters
    ----------
    y : (V, 3) float query points (m).
    x : (N, 3) float particle positions (m).
    values : (N, 3) float per-particle vectors (velocity, m/s).
    radius : kernel radius R (m), > 0.
    fallback_radius : a larger radius used only for the points with no
        particle within ``radius`` (a second, small pass); None = no fallback.

    Returns
    -------
    (V, 3) float64 averages; zero for a point with no particle within reach.
    """
    y = np.ascontiguousarray(y, np.float64)
    x = np.ascontiguousarray(x, np.float64)
    values = np.ascontiguousarray(values, np.float64).reshape(len(x), 3)
    out, wsum = _average(y, x, values, radius)
    if fallback_radius is not None:
        lost = np.flatnonzero(wsum == 0.0)
        if len(lost):
            out[lost] = _average(y[lost], x, values, fallback_radius)[0]
    return out
