"""Triangulating the polygons of mesh files (PLY and OBJ faces), numpy only.

References: D. Eberly, *Triangulation by Ear Clipping*, Geometric Tools, 2002
(ear clipping of a simple polygon, sections 2-3); F. Tampieri, "Newell's Method
for Computing the Plane Equation of a Polygon", *Graphics Gems III*, 1992
(the best-fit normal of a possibly non-planar polygon).

A fan from the first corner is only right for convex polygons: on an L- or
U-shaped face it lays triangles over the notch, phantom surfaces a collider
then blocks particles with. Here triangles pass through, quads are tested for
convexity in one vectorised pass (a convex quad is fanned, as before), and
every other polygon is ear-clipped in its best-fit plane. A degenerate polygon
(no area, or no ear found, e.g. self-intersecting) falls back to a fan: it has
no inside to respect, and its triangles are zero-area or as the file had them.
Triangles keep the polygon's winding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def triangulate(faces: Sequence[Sequence[int]] | np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Triangles covering each polygon exactly (ear clipping; fans for convex quads).

    Parameters
    ----------
    faces : polygons as vertex index sequences (any lengths), or an (F, k) integer array.
    positions : (n, 3) float vertex positions (m); indices must be valid (checked by the caller).

    Returns
    -------
    (m, 3) int64 triangles, polygon by polygon in file order; polygons of fewer than
    3 corners give none.
    """
    with np.errstate(all="ignore"):
        # Non-finite or absurd positions make the convexity tests meaningless, not fatal: the
        # mesh reader refuses such a mesh by name right after (mesh_io.check_coordinates).
        return _triangulate(faces, np.asarray(positions, np.float64))


def _triangulate(faces, p: np.ndarray) -> np.ndarray:
    if isinstance(faces, np.ndarray) and faces.ndim == 2:
        groups = {faces.shape[1]: (np.arange(len(faces)), faces.astype(np.int64))}
    else:
        groups = _by_length(faces)
    parts: list[tuple[np.ndarray, np.ndarray]] = []  # (polygon number of each triangle, triangles)
    for k, (order, idx) in groups.items():
        if k < 3 or not len(idx):
            continue
        if k == 3:
            parts.append((order, idx))
            continue
        todo = np.ones(len(idx), bool)
        if k == 4:
            convex = _convex_quads(p[idx])
            fan = idx[convex]
            parts.append((np.repeat(order[convex], 2),
                          np.stack([fan[:, [0, 1, 2]], fan[:, [0, 2, 3]]], 1).reshape(-1, 3)))
            todo = ~convex
        for f, poly in zip(order[todo], idx[todo]):
            tris = _ear_clip(p[poly], poly)
            parts.append((np.full(len(tris), f), tris))
    if not parts:
        return np.zeros((0, 3), np.int64)
    which = np.concatenate([w for w, _ in parts])
    tris = np.concatenate([t for _, t in parts]).reshape(-1, 3)
    return tris[np.argsort(which, kind="stable")].astype(np.int64)


def _by_length(faces) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{corner count: (polygon numbers, (F_k, k) indices)}."""
    by: dict[int, tuple[list[int], list]] = {}
    for f, poly in enumerate(faces):
        order, rows = by.setdefault(len(poly), ([], []))
        order.append(f)
        rows.append(poly)
    return {k: (np.asarray(o, np.int64), np.asarray(r, np.int64).reshape(len(o), k)) for k, (o, r) in by.items()}


def newell_normal(corners: np.ndarray) -> np.ndarray:
    """Newell's normal (Tampieri 1992) of polygons ``corners`` (..., k, 3): twice the vector area."""
    a = corners
    b = np.roll(corners, -1, axis=-2)
    return np.stack([np.sum((a[..., 1] - b[..., 1]) * (a[..., 2] + b[..., 2]), -1),
                     np.sum((a[..., 2] - b[..., 2]) * (a[..., 0] + b[..., 0]), -1),
                     np.sum((a[..., 0] - b[..., 0]) * (a[..., 1] + b[..., 1]), -1)], -1)


def _convex_quads(q: np.ndarray) -> np.ndarray:
    """(F,) bool: quads (F, 4, 3) that turn the same way at every corner, clearly (a fan is right)."""
    n = newell_normal(q)
    prev = q - np.roll(q, 1, axis=1)
    nxt = np.roll(q, -1, axis=1) - q
    turn = np.einsum("fkc,fc->fk", np.cross(prev, nxt), n)
    # Relative to |n|^2 (~ area^2): a corner on a straight edge or a sliver is not "clearly" convex.
    return np.all(turn > 1e-9 * np.einsum("fc,fc->f", n, n)[:, None], axis=1)


def _project(corners: np.ndarray) -> np.ndarray | None:
    """(k, 2) coordinates in the best-fit plane, counter-clockwise about Newell's normal; None if flat."""
    n = newell_normal(corners)
    size = float(np.ptp(corners, axis=0).max())
    if not np.linalg.norm(n) > 1e-12 * size * size:
        return None
    axis = int(np.argmax(np.abs(n)))
    uv = np.delete(corners, axis, axis=1)
    # Dropping the axis mirrors the plane when that component of n is negative (or for the y axis).
    return uv if (n[axis] > 0) == (axis != 1) else uv[:, ::-1]


def _ear_clip(corners: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """(k - 2, 3) triangles of one polygon by ear clipping (Eberly 2002); a fan when degenerate.

    Scans for ears from the first corner, so a convex polygon gives the fan from corner 0.
    """
    k = len(poly)
    uv = _project(corners)
    if uv is None:
        return _fan(poly)
    eps = 1e-12 * float(np.ptp(uv, axis=0).max()) ** 2
    left = list(range(k))
    tris = []
    while len(left) > 3:
        ear = _find_ear(uv, left, eps)
        if ear is None:
            # Self-intersecting or with overlapping corners: no inside to respect.
            return np.concatenate([np.asarray(tris, np.int64).reshape(-1, 3), _fan(poly[left])])
        m = len(left)
        tris.append((poly[left[ear - 1]], poly[left[ear]], poly[left[(ear + 1) % m]]))
        del left[ear]
    tris.append(tuple(poly[left]))
    return np.asarray(tris, np.int64)


def _cross2(o, a, b) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _find_ear(uv: np.ndarray, left: list[int], eps: float) -> int | None:
    """Position in ``left`` of a convex corner whose triangle holds no other corner, or None."""
    m = len(left)
    pts = uv[left]
    for j in range(m):
        i = (j + 1) % m
        a, b, c = pts[i - 1], pts[i], pts[(i + 1) % m]
        if _cross2(a, b, c) <= eps:
            continue  # reflex or straight: not an ear
        others = np.delete(pts, [i - 1 if i else m - 1, i, (i + 1) % m], axis=0)
        if len(others) and _inside(others, a, b, c, eps).any():
            continue
        return i
    return None


def _inside(q: np.ndarray, a, b, c, eps: float) -> np.ndarray:
    """Points of q (r, 2) inside or on the counter-clockwise triangle a, b, c."""
    def side(o, d):
        return (d[0] - o[0]) * (q[:, 1] - o[1]) - (d[1] - o[1]) * (q[:, 0] - o[0])
    return (side(a, b) >= -eps) & (side(b, c) >= -eps) & (side(c, a) >= -eps)


def _fan(poly: np.ndarray) -> np.ndarray:
    k = len(poly)
    return np.stack([np.full(k - 2, poly[0]), poly[1:-1], poly[2:]], 1).astype(np.int64).reshape(-1, 3)
