"""Slow, obviously-correct references for mesh SDF tests.

Triangulated shapes with known analytic distances (sphere, box, torus), a
brute-force point-triangle distance (numpy, O(points x triangles)) and a naive
generalized winding number (Jacobson et al. 2013, solid angle of each
triangle by Van Oosterom & Strackee 1983) used as a sign oracle and as the
alternative sign method measured against the exterior flood.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------- meshes


def cube_sphere(n: int, radius: float = 1.0, bump: float = 0.0, freq: float = 6.0):
    """Sphere from a subdivided cube: 12 n^2 triangles, outward, watertight.

    ``bump`` displaces the radius by ``bump * sin(f x) sin(f y) sin(f z)``.
    Returns (V (nv, 3) float64, T (nt, 3) int64).
    """
    u = np.linspace(-1.0, 1.0, n + 1)
    verts: list[np.ndarray] = []
    tris: list[np.ndarray] = []
    a, b = np.meshgrid(u, u, indexing="ij")
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            p = np.empty((n + 1, n + 1, 3))
            p[..., axis] = sign
            p[..., (axis + 1) % 3] = a
            p[..., (axis + 2) % 3] = b * sign
            faces.append(p.reshape(-1, 3))
    # weld shared cube edges by rounding keys
    allp = np.concatenate(faces)
    key = np.round(allp * (n * 4)).astype(np.int64)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    base = 0
    for _f in faces:
        idx = inverse[base:base + (n + 1) ** 2].reshape(n + 1, n + 1)
        q00, q10, q01, q11 = idx[:-1, :-1], idx[1:, :-1], idx[:-1, 1:], idx[1:, 1:]
        tris.append(np.stack([q00, q10, q11], -1).reshape(-1, 3))
        tris.append(np.stack([q00, q11, q01], -1).reshape(-1, 3))
        base += (n + 1) ** 2
    verts = allp[first]
    d = verts / np.linalg.norm(verts, axis=1, keepdims=True)
    r = radius * (1.0 + bump * np.sin(freq * d[:, 0]) * np.sin(freq * d[:, 1]) * np.sin(freq * d[:, 2]))
    return d * r[:, None], np.concatenate(tris).astype(np.int64)


def box_mesh(lo=(-0.5, -0.5, -0.5), hi=(0.5, 0.5, 0.5)):
    """Axis-aligned box, 8 vertices, 12 outward triangles."""
    lo = np.asarray(lo, float)
    hi = np.asarray(hi, float)
    v = np.array([[lo[0] if i & 1 == 0 else hi[0], lo[1] if i & 2 == 0 else hi[1],
                   lo[2] if i & 4 == 0 else hi[2]] for i in range(8)])
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    t = []
    for a, b, c, d in quads:
        t += [(a, b, c), (a, c, d)]
    return v, np.array(t, np.int64)


def write_mesh_ply(path, v, t) -> None:
    """Write vertices ``v`` (n,3) and triangles ``t`` (m,3) as a binary PLY (float32 x y z), as meshes come."""
    from sph_addon.core.cache.plyio import write_ply

    rec = np.zeros(len(v), dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
    rec["x"], rec["y"], rec["z"] = np.asarray(v)[:, 0], np.asarray(v)[:, 1], np.asarray(v)[:, 2]
    write_ply(path, rec, np.asarray(t, np.int32))


def open_tank_mesh(outer=0.25, inner=0.2, floor=0.05, height=0.3):
    """Thick-walled tank open at the top, a closed surface: outer box [-outer, outer]^2 x [0, height]
    minus the cavity [-inner, inner]^2 x [floor, height]; 16 vertices, 28 triangles."""
    vo, to = box_mesh((-outer, -outer, 0.0), (outer, outer, height))
    vi, ti = box_mesh((-inner, -inner, floor), (inner, inner, height))
    top = [(4, 5, 7), (4, 7, 6)]  # box_mesh's z = hi face, left open on both boxes
    keep = [tri for tri in map(tuple, to) if tri not in top]
    t = keep + [tuple(c + 8 for c in tri) for tri in map(tuple, ti) if tri not in top]
    for a, b in ((4, 5), (5, 7), (7, 6), (6, 4)):  # the rim joins the two top squares
        t += [(a, b, b + 8), (a, b + 8, a + 8)]
    return np.concatenate([vo, vi]), np.array(t, np.int64)


def torus_mesh(nu: int, nv: int, R: float = 1.0, r: float = 0.35):
    """Torus around z: nu x nv quads, 2 nu nv triangles."""
    u = np.linspace(0, 2 * np.pi, nu, endpoint=False)
    w = np.linspace(0, 2 * np.pi, nv, endpoint=False)
    U, W = np.meshgrid(u, w, indexing="ij")
    v = np.stack([(R + r * np.cos(W)) * np.cos(U), (R + r * np.cos(W)) * np.sin(U), r * np.sin(W)], -1)
    i = np.arange(nu)[:, None]
    j = np.arange(nv)[None, :]
    a = i * nv + j
    b = ((i + 1) % nu) * nv + j
    c = ((i + 1) % nu) * nv + (j + 1) % nv
    d = i * nv + (j + 1) % nv
    t = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return v.reshape(-1, 3), t.astype(np.int64)


# --------------------------------------------------------------------------- analytic distances


def sphere_sdf(p, radius=1.0):
    """Signed distance to a sphere at the origin."""
    return np.linalg.norm(p, axis=-1) - radius


def box_sdf(p, half=(0.5, 0.5, 0.5)):
    """Signed distance to an origin-centred box of half extents ``half``."""
    q = np.abs(p) - np.asarray(half)
    return np.linalg.norm(np.maximum(q, 0.0), axis=-1) + np.minimum(q.max(axis=-1), 0.0)


def torus_sdf(p, R=1.0, r=0.35):
    """Signed distance to a torus around z."""
    q = np.hypot(p[..., 0], p[..., 1]) - R
    return np.hypot(q, p[..., 2]) - r


# --------------------------------------------------------------------------- brute force


def brute_unsigned(points, V, T, chunk=4096):
    """Exact unsigned distance from each point to the nearest triangle (vectorised Ericson)."""
    points = np.asarray(points, float).reshape(-1, 3)
    A, B, C = V[T[:, 0]], V[T[:, 1]], V[T[:, 2]]
    out = np.empty(len(points))
    for s in range(0, len(points), chunk):
        p = points[s:s + chunk, None, :]
        out[s:s + chunk] = np.sqrt(_closest_d2(p, A[None], B[None], C[None]).min(axis=1))
    return out


def _closest_d2(p, a, b, c):
    """Squared point-triangle distance: the plane distance if the projection falls
    inside the triangle (barycentric test), else the nearest of the three edges."""
    ab, ac = b - a, c - a
    n = np.cross(ab, ac)
    nn = (n * n).sum(-1)
    ap = p - a
    # barycentrics of the projection
    w = (np.cross(ab, ap) * n).sum(-1) / nn
    v = (np.cross(ap, ac) * n).sum(-1) / nn
    inside = (v >= 0) & (w >= 0) & (v + w <= 1)
    face = (ap * n).sum(-1) ** 2 / nn
    edges = np.full(face.shape, np.inf)
    for x, y in ((a, b), (a, c), (b, c)):
        xy = y - x
        ll = (xy * xy).sum(-1)
        tt = np.clip(((p - x) * xy).sum(-1) / ll, 0.0, 1.0)
        e = x + xy * tt[..., None]
        edges = np.minimum(edges, ((p - e) ** 2).sum(-1))
    return np.where(inside, face, edges)


def winding_number(points, V, T, chunk=2048):
    """Generalized winding number (sum of signed solid angles / 4 pi); ~1 inside, ~0 outside."""
    points = np.asarray(points, float).reshape(-1, 3)
    A, B, C = V[T[:, 0]], V[T[:, 1]], V[T[:, 2]]
    out = np.empty(len(points))
    for s in range(0, len(points), chunk):
        p = points[s:s + chunk, None, :]
        a, b, c = A[None] - p, B[None] - p, C[None] - p
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = (a * np.cross(b, c)).sum(-1)
        den = la * lb * lc + (a * b).sum(-1) * lc + (b * c).sum(-1) * la + (c * a).sum(-1) * lb
        out[s:s + chunk] = (2.0 * np.arctan2(num, den)).sum(axis=1) / (4 * np.pi)
    return out
