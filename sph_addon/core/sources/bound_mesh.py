"""A source's own mesh carried along by its particles: binding vertices to particles, deforming them.

Each vertex of the mesh is bound once, in the rest configuration, to its ``k`` nearest particles
of the source (linear blend skinning with one bone per particle, the particles' corotated frames
of Becker, Ihmsen, Teschner 2009 as the bones, as Müller et al. 2004 "Point based animation of
elastic, plastic and melting objects" carry a surface mesh through the particles' deformation).
Vertex v keeps a rest offset ``o_vk = v0 - p0_k`` to each of its particles k and follows them:

    v = Σ_k w_vk (x_k + R_k o_vk)                                  (weights w_vk summing to 1)

with x_k the particle's position and R_k the rotation taking its rest neighbourhood to its current
one. A rigid motion of the particles (x_k = R p0_k + t, R_k = R) therefore moves every vertex
rigidly: x_k + R o_vk = R v0 + t whatever the weights.

The weights fall smoothly to zero at the (k+1)-th nearest particle (:func:`bind`), so the weight of
a particle entering or leaving a vertex's k nearest is zero at that moment and neighbouring
vertices get nearly the same weights: the bound mesh stays as smooth as the artist's. A vertex
outside the particle cloud (a mesh's surface lies about half a spacing outside the outermost
particles) is bound the same way, to the nearest particles, so it keeps its offset from them.

The binding is a pure function of the rest positions, the particles' ids and the vertices: the
particles are taken in id order, ties in distance are broken by id, so a resumed bake binds
exactly as the original did. Particles are found again every frame by their stable ids, never by
index (the world is reordered every substep).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange

# Particles each vertex follows: 8 are the corners of the lattice cell around a vertex inside the
# cloud, and on the surface two layers of four, enough to carry rotation and stretch.
K_NEAREST = 8
# The weights reach zero at (1 + this) times the distance to the (k+1)-th particle: a particle tied
# with it (lattice distances repeat) keeps a tiny weight rather than none of them having any.
_CUTOFF_MARGIN = 1e-3


@dataclass(frozen=True)
class Binding:
    """Vertices bound to particles (rest configuration).

    Attributes
    ----------
    rest : (m, 3) float64, the vertices where they were bound, m.
    ids : (m, k) int64, ids of the particles each vertex follows (-1: none, for sources with fewer
        than k particles).
    weights : (m, k) float64, their weights; each row sums to 1 over its ids (0 where the id is -1).
    offsets : (m, k, 3) float64, rest offsets o_vk = v0 - p0_k, m.
    """

    rest: np.ndarray
    ids: np.ndarray
    weights: np.ndarray
    offsets: np.ndarray


@njit(**config.NJIT)
def _insert(best_d2, best_i, d2, i):
    """Insert candidate (d2, i) into the ascending lists ``best_d2``/``best_i`` (ties: the lower index first)."""
    m = best_d2.shape[0]
    if d2 > best_d2[m - 1] or (d2 == best_d2[m - 1] and i >= best_i[m - 1]):
        return
    j = m - 1
    while j > 0 and (best_d2[j - 1] > d2 or (best_d2[j - 1] == d2 and best_i[j - 1] > i)):
        best_d2[j] = best_d2[j - 1]
        best_i[j] = best_i[j - 1]
        j -= 1
    best_d2[j] = d2
    best_i[j] = i


@njit(**config.NJIT_PARALLEL)
def _nearest(queries, points, order, cell_start, lo, cell, dims, out_i, out_d2):
    """The ``out_i.shape[1]`` nearest points of every query, nearest first (ties: the lower index first).

    Parameters
    ----------
    queries : (m, 3) float64, m.
    points : (n, 3) float64, m.
    order : (n,) int64, point indices sorted by their cell (linear index x + dims0 (y + dims1 z)).
    cell_start : (ncells + 1,) int64, where each cell's run starts in ``order``.
    lo : (3,) float64, the grid's lower corner; cell : float, its cell size, m; dims : (3,) int64.
    out_i : (m, q) int64, filled with point indices (-1 when fewer than q points exist).
    out_d2 : (m, q) float64, their squared distances (inf where none).

    Rings of cells around the query's cell (clamped to the grid) are searched outwards until the
    next ring cannot hold a point nearer than the q-th found: a point in ring r is at least
    (r - 1) cells away.
    """
    q = out_i.shape[1]
    big = max(dims[0], max(dims[1], dims[2]))
    for v in prange(queries.shape[0]):
        best_d2 = np.full(q, np.inf)
        best_i = np.full(q, -1, np.int64)
        c = np.empty(3, np.int64)
        for a in range(3):
            c[a] = min(max(int(np.floor((queries[v, a] - lo[a]) / cell)), 0), dims[a] - 1)
        for r in range(big + 1):
            if r >= 2 and best_i[q - 1] >= 0 and ((r - 1) * cell) ** 2 > best_d2[q - 1]:
                break
            for cz in range(max(c[2] - r, 0), min(c[2] + r, dims[2] - 1) + 1):
                for cy in range(max(c[1] - r, 0), min(c[1] + r, dims[1] - 1) + 1):
                    for cx in range(max(c[0] - r, 0), min(c[0] + r, dims[0] - 1) + 1):
                        if max(abs(cx - c[0]), max(abs(cy - c[1]), abs(cz - c[2]))) != r:
                            continue  # inner rings were searched already
                        cid = cx + dims[0] * (cy + dims[1] * cz)
                        for s in range(cell_start[cid], cell_start[cid + 1]):
                            p = order[s]
                            d2 = 0.0
                            for a in range(3):
                                d = points[p, a] - queries[v, a]
                                d2 += d * d
                            _insert(best_d2, best_i, d2, p)
        for j in range(q):
            out_i[v, j] = best_i[j]
            out_d2[v, j] = best_d2[j]


def nearest(queries: np.ndarray, points: np.ndarray, count: int, cell: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices (m, count) int64 and distances (m, count) float64 of each query's ``count`` nearest points.

    Nearest first; ties in distance go to the lower index; -1 and inf where fewer points exist.
    ``cell`` (m): the search grid's cell size (about the points' spacing).
    """
    queries = np.ascontiguousarray(queries, np.float64)
    points = np.ascontiguousarray(points, np.float64)
    out_i = np.full((len(queries), count), -1, np.int64)
    out_d2 = np.full((len(queries), count), np.inf)
    if len(points) == 0 or len(queries) == 0:
        return out_i, np.sqrt(out_d2)
    lo = points.min(axis=0)
    dims = np.maximum(np.floor((points.max(axis=0) - lo) / cell).astype(np.int64) + 1, 1)
    cells = np.minimum(np.floor((points - lo) / cell).astype(np.int64), dims - 1)
    key = cells[:, 0] + dims[0] * (cells[:, 1] + dims[1] * cells[:, 2])
    order = np.argsort(key, kind="stable").astype(np.int64)
    cell_start = np.zeros(int(np.prod(dims)) + 1, np.int64)
    np.cumsum(np.bincount(key, minlength=len(cell_start) - 1), out=cell_start[1:])
    _nearest(queries, points, order, cell_start, lo, float(cell), dims, out_i, out_d2)
    return out_i, np.sqrt(out_d2)


def bind(vertices: np.ndarray, rest_positions: np.ndarray, ids: np.ndarray, spacing: float,
         k: int = K_NEAREST) -> Binding:
    """Bind each vertex to its ``k`` nearest particles in the rest configuration.

    Parameters
    ----------
    vertices : (m, 3) float, the mesh's vertices at rest (world frame), m.
    rest_positions : (n, 3) float, the source's particles at rest (their ``rest_position``), m.
    ids : (n,) int, their stable ids.
    spacing : the particle spacing, m (the search grid's cell).
    k : particles per vertex (fewer when the source has fewer).

    Returns
    -------
    Binding
        Weights w_vk = (1 - (d_vk / R_v)²)³, normalised to sum to 1, with R_v just beyond the
        distance to the vertex's (k+1)-th nearest particle (twice its k-th nearest's when the
        source has no more particles): smooth across the mesh, the nearest weighing most.
    """
    v0 = np.ascontiguousarray(vertices, np.float64).reshape(-1, 3)
    ids = np.asarray(ids, np.int64)
    by_id = np.argsort(ids, kind="stable")  # the particles in id order: the result ignores the world's order
    p0 = np.ascontiguousarray(np.asarray(rest_positions, np.float64).reshape(-1, 3)[by_id])
    sorted_ids = ids[by_id]
    found, dist = nearest(v0, p0, k + 1, spacing)
    have = found[:, :k] >= 0
    nearest_k = np.where(have, dist[:, :k], 0.0)
    # R_v: just beyond the (k+1)-th particle; with no (k+1)-th, beyond twice the farthest bound one.
    beyond = np.where(found[:, k] >= 0, dist[:, k], 2.0 * nearest_k.max(axis=1, initial=0.0))
    reach = beyond * (1.0 + _CUTOFF_MARGIN) + 1e-9 * spacing
    w = np.where(have, (1.0 - (nearest_k / reach[:, None]) ** 2) ** 3, 0.0)
    total = w.sum(axis=1, keepdims=True)
    w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
    bound_ids = np.where(have, sorted_ids[np.maximum(found[:, :k], 0)], -1)
    offsets = np.where(have[..., None], v0[:, None, :] - p0[np.maximum(found[:, :k], 0)], 0.0)
    return Binding(v0, bound_ids, w, offsets)


def deform(binding: Binding, ids: np.ndarray, x: np.ndarray, rotation: np.ndarray,
           last: np.ndarray) -> np.ndarray:
    """The bound vertices where the particles now carry them, (m, 3) float64, m.

    Parameters
    ----------
    binding : from :func:`bind`.
    ids : (n,) int, the particles' ids now (any order: the world is reordered every substep).
    x : (n, 3) float, their positions, m.
    rotation : (n, 9) float, their rotations R_k, row-major (rest neighbourhood -> current).
    last : (m, 3) float, the vertices' previous positions, m.

    A particle that is gone (an outflow or the domain removed it) drops out and the weights of
    the vertex's other particles are renormalised to sum to 1. A vertex whose particles are all
    gone keeps its last position (``last``).
    """
    ids = np.asarray(ids, np.int64)
    m, k = binding.ids.shape
    out = np.array(last, np.float64, copy=True).reshape(m, 3)
    if m == 0 or k == 0 or len(ids) == 0:
        return out
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    at = np.minimum(np.searchsorted(sorted_ids, binding.ids), len(ids) - 1)
    present = (binding.ids >= 0) & (sorted_ids[at] == binding.ids)
    idx = order[at]
    w = np.where(present, binding.weights, 0.0)
    total = w.sum(axis=1)
    alive = total > 0
    w = w[alive] / total[alive, None]
    idx = idx[alive]
    r = np.asarray(rotation, np.float64)[idx].reshape(-1, k, 3, 3)
    carried = np.asarray(x, np.float64)[idx] + np.einsum("vkab,vkb->vka", r, binding.offsets[alive])
    out[alive] = np.einsum("vk,vka->va", w, carried)
    return out
