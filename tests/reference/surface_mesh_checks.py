"""Slow, plain-numpy reference checks of triangle meshes (for the surface tests).

Nothing here is clever: every property is computed the textbook way so the
tests do not trust the code they check.
"""

from __future__ import annotations

import numpy as np


def half_edges(faces: np.ndarray) -> np.ndarray:
    """(3F, 2) directed edges a->b of every face, in face order."""
    f = np.asarray(faces)
    return np.stack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]], 1).reshape(-1, 2)


def topology(vertices: np.ndarray, faces: np.ndarray) -> dict:
    """Edge use counts, half-edge uniqueness, Euler characteristic, components.

    Returns a dict with
    ``closed_manifold_edges``: every undirected edge used by exactly two faces;
    ``oriented``: every directed edge used once (so the two faces of an edge
    traverse it in opposite directions: consistent orientation);
    ``vertex_manifold``: the faces around every vertex form one fan (a single
    cycle of the link), so no two sheets touch at a vertex;
    ``euler``: V - E + F over the referenced vertices;
    ``components``: connected components of faces;
    ``unreferenced``: vertices no face uses.
    """
    f = np.asarray(faces, np.int64)
    he = half_edges(f)
    und = np.sort(he, 1)
    _, ucount = np.unique(und, axis=0, return_counts=True)
    _, hcount = np.unique(he, axis=0, return_counts=True)
    used = np.unique(f)
    labels = component_labels(len(vertices), f)
    comps = len(np.unique(labels[used])) if len(used) else 0
    return {
        "closed_manifold_edges": bool(len(f) == 0 or np.all(ucount == 2)),
        "oriented": bool(len(f) == 0 or np.all(hcount == 1)),
        "vertex_manifold": vertex_manifold(f),
        "euler": int(len(used) - len(ucount) + len(f)),
        "components": comps,
        "unreferenced": int(len(vertices) - len(used)),
    }


def vertex_manifold(faces: np.ndarray) -> bool:
    """Whether the link of every vertex is a single cycle (checked by walking it)."""
    f = np.asarray(faces, np.int64)
    nxt = {}
    for a, b, c in f.tolist():
        for v, p, q in ((a, b, c), (b, c, a), (c, a, b)):
            link = nxt.setdefault(v, {})
            if p in link:
                return False
            link[p] = q
    for link in nxt.values():
        start = next(iter(link))
        cur, steps = start, 0
        while True:
            cur = link.get(cur)
            steps += 1
            if cur is None:
                return False
            if cur == start:
                break
        if steps != len(link):
            return False
    return True


def component_labels(n_vertices: int, faces: np.ndarray) -> np.ndarray:
    """Connected-component label per vertex by min-label propagation over faces."""
    lab = np.arange(n_vertices)
    f = np.asarray(faces, np.int64)
    if len(f) == 0:
        return lab
    while True:
        m = lab[f].min(1)
        new = lab.copy()
        np.minimum.at(new, f.ravel(), np.repeat(m, 3))
        new = new[new]
        if np.array_equal(new, lab):
            return lab
        lab = new


def signed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Divergence-theorem volume (positive for outward-oriented closed meshes), m^3."""
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    if len(f) == 0:
        return 0.0
    return float(np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6.0)


def lattice_ball(radius: float, spacing: float, center=(0.0, 0.0, 0.0), rotation=None) -> np.ndarray:
    """Cubic-lattice points within ``radius`` of the origin, rotated then shifted to ``center``."""
    k = int(np.ceil(radius / spacing)) + 1
    g = np.arange(-k, k + 1) * spacing
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    x = x[np.einsum("ij,ij->i", x, x) <= radius * radius * (1 + 1e-12)]
    if rotation is not None:
        x = x @ np.asarray(rotation).T
    return x + np.asarray(center)
