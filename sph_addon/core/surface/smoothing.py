"""Mesh post-processing: Taubin smoothing and vertex normals.

References
----------
Taubin, G. (1995). A signal processing approach to fair surface design.
SIGGRAPH, section 4 (the lambda|mu algorithm).

The umbrella operator uses uniform weights over the one-ring. On a closed,
oriented 2-manifold every edge {a, b} appears once as the half-edge a->b, so the
targets of a vertex's outgoing half-edges are exactly its neighbours, each
once; no de-duplication is needed.
"""

from __future__ import annotations

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange


def one_ring(faces: np.ndarray, n_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour lists (CSR) from the half-edges of a closed oriented mesh.

    Parameters
    ----------
    faces : (F, 3) int triangles.
    n_vertices : V.

    Returns
    -------
    start : (V + 1,) int64; neighbours of v are ``nbr[start[v]:start[v + 1]]``.
    nbr : (3F,) int64.
    """
    src = faces.ravel().astype(np.int64)
    dst = faces[:, [1, 2, 0]].ravel().astype(np.int64)
    order = np.argsort(src, kind="stable")
    start = np.zeros(n_vertices + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n_vertices), out=start[1:])
    return start, dst[order]


@njit(**config.NJIT_PARALLEL)
def _umbrella_step(p, start, nbr, factor, out):
    """out = p + factor * (mean of one-ring - p) (Taubin 1995, eq. 7 with uniform weights).

    Parameters
    ----------
    p : (V, 3) float64 positions (m), read only.
    start, nbr : CSR one-ring from :func:`one_ring`.
    factor : float, lambda (> 0, shrinks) or mu (< 0, inflates).
    out : (V, 3) float64, out (must not alias ``p``).
    """
    for v in prange(p.shape[0]):
        k0 = start[v]
        k1 = start[v + 1]
        if k1 == k0:
            for d in range(3):
                out[v, d] = p[v, d]
            continue
        inv = 1.0 / (k1 - k0)
        for d in range(3):
            s = 0.0
            for k in range(k0, k1):
                s += p[nbr[k], d]
            out[v, d] = p[v, d] + factor * (s * inv - p[v, d])


def taubin_smooth(vertices: np.ndarray, faces: np.ndarray, iterations: int,
                  lam: float = 0.5, mu: float = -0.53) -> np.ndarray:
    """Taubin lambda|mu smoothing (Taubin 1995, section 4): low-pass without shrinking.

    Each iteration is one step with ``lam`` (shrinks, removes noise) and one with
    ``mu`` (inflates back). The pass-band k_PB = 1/lam + 1/mu = 0.113 for the
    defaults: features longer than about 9 edges keep their size, the
    marching-tetrahedra staircase is removed.

    Parameters
    ----------
    vertices : (V, 3) float positions (m). Not mutated.
    faces : (F, 3) int triangles of a closed oriented mesh.
    iterations : number of lambda|mu pairs (0 returns a copy).
    lam : float in (0, 1].
    mu : float < -lam.

    Returns
    -------
    (V, 3) float64 smoothed positions.
    """
    p = np.array(vertices, dtype=np.float64, order="C")
    if iterations <= 0 or len(faces) == 0:
        return p
    start, nbr = one_ring(np.asarray(faces), len(p))
    q = np.empty_like(p)
    for _ in range(iterations):  # a few passes; each pass is one parallel kernel over vertices
        _umbrella_step(p, start, nbr, lam, q)
        _umbrella_step(q, start, nbr, mu, p)
    return p


@njit(**config.NJIT)
def _accumulate_normals(p, faces, out):
    """Area-weighted vertex normals (sum of face cross products); mutates ``out`` (V, 3) float64.

    Serial: the scatter to the three corners of each face would race in parallel.
    """
    out[:] = 0.0
    for t in range(faces.shape[0]):
        a, b, c = faces[t, 0], faces[t, 1], faces[t, 2]
        ux = p[b, 0] - p[a, 0]
        uy = p[b, 1] - p[a, 1]
        uz = p[b, 2] - p[a, 2]
        wx = p[c, 0] - p[a, 0]
        wy = p[c, 1] - p[a, 1]
        wz = p[c, 2] - p[a, 2]
        nx = uy * wz - uz * wy
        ny = uz * wx - ux * wz
        nz = ux * wy - uy * wx
        for v in (a, b, c):
            out[v, 0] += nx
            out[v, 1] += ny
            out[v, 2] += nz
    for v in range(out.shape[0]):
        n = np.sqrt(out[v, 0] ** 2 + out[v, 1] ** 2 + out[v, 2] ** 2)
        if n > 0.0:
            for d in range(3):
                out[v, d] /= n


def vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Unit outward vertex normals, area weighted.

    Parameters
    ----------
    vertices : (V, 3) float (m).
    faces : (F, 3) int, counter-clockwise seen from outside.

    Returns
    -------
    (V, 3) float64 unit vectors (zero for a vertex with only degenerate faces).
    """
    out = np.empty((len(vertices), 3))
    _accumulate_normals(np.ascontiguousarray(vertices, np.float64),
                        np.ascontiguousarray(faces, np.int64), out)
    return out
