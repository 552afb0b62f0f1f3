"""Triangle geometry for mesh SDFs: point-triangle distance, segment-triangle test, binning.

Reference: S. Clavet, *Simulation de matériaux viscoélastiques à l'aide de
particules*, M.Sc. thesis, Université de Montréal, 2005, section 6.1 ("Calcul du
champ de distance"), step 1 needs exact distances from grid nodes to the
triangles near them, and the exterior flood (steps 3-4) needs to know which grid
edges cross the surface. These are the leaf kernels both use, plus the binning
of triangles into blocks of grid nodes that keeps their cost proportional to the
area of the surface rather than to (nodes x triangles).
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics import config
from ...numerics.kernel_cache import njit

# Nodes per block edge for binning triangles (8^3 = 512 nodes, 2 KB of float32):
# small enough that a block's triangle list stays short, large enough that a
# triangle overlaps few blocks.
BLOCK = 8


@njit(**config.NJIT)
def _point_triangle_d2(px, py, pz, tv, t):
    """Squared distance from a point to triangle ``t``.

    Closest point by Voronoi regions (Ericson, *Real-Time Collision Detection*,
    2005, section 5.1.5).

    Parameters
    ----------
    px, py, pz : float
        Query point (m).
    tv : (m, 3, 3) float64
        Triangle corners, ``tv[t, c]`` = corner ``c`` (m). Triangles must be
        non-degenerate (the builder drops zero-area ones).
    t : int
        Triangle index.

    Returns
    -------
    float
        Squared distance (m^2).
    """
    ax = tv[t, 0, 0]
    ay = tv[t, 0, 1]
    az = tv[t, 0, 2]
    abx = tv[t, 1, 0] - ax
    aby = tv[t, 1, 1] - ay
    abz = tv[t, 1, 2] - az
    acx = tv[t, 2, 0] - ax
    acy = tv[t, 2, 1] - ay
    acz = tv[t, 2, 2] - az
    apx = px - ax
    apy = py - ay
    apz = pz - az
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    if d1 <= 0.0 and d2 <= 0.0:
        return apx * apx + apy * apy + apz * apz
    bpx = apx - abx
    bpy = apy - aby
    bpz = apz - abz
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    if d3 >= 0.0 and d4 <= d3:
        return bpx * bpx + bpy * bpy + bpz * bpz
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        qx = apx - v * abx
        qy = apy - v * aby
        qz = apz - v * abz
        return qx * qx + qy * qy + qz * qz
    cpx = apx - acx
    cpy = apy - acy
    cpz = apz - acz
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    if d6 >= 0.0 and d5 <= d6:
        return cpx * cpx + cpy * cpy + cpz * cpz
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        qx = apx - w * acx
        qy = apy - w * acy
        qz = apz - w * acz
        return qx * qx + qy * qy + qz * qz
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        qx = bpx - w * (acx - abx)
        qy = bpy - w * (acy - aby)
        qz = bpz - w * (acz - abz)
        return qx * qx + qy * qy + qz * qz
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    qx = apx - abx * v - acx * w
    qy = apy - aby * v - acy * w
    qz = apz - abz * v - acz * w
    return qx * qx + qy * qy + qz * qz


@njit(**config.NJIT)
def _segment_hits_triangle(ax, ay, az, bx, by, bz, tv, t):
    """Where the segment a-b touches triangle ``t``, if it does (Möller-Trumbore).

    The test is deliberately conservative: hits within a relative 1e-7 of the
    segment ends or triangle edges count, so a grid edge that starts *on* the
    surface is considered blocked. Blocking too much only shifts a sign at a
    node whose distance is ~0; letting the exterior leak through would flip
    the sign of a whole region.

    Parameters
    ----------
    ax, ay, az, bx, by, bz : float
        Segment end points (m).
    tv : (m, 3, 3) float64
        Triangle corners (m).
    t : int
        Triangle index.

    Returns
    -------
    float
        Parameter in [0, 1] of the hit along a-b (clamped), or -1.0 for no hit.
    """
    eps = 1e-7
    e1x = tv[t, 1, 0] - tv[t, 0, 0]
    e1y = tv[t, 1, 1] - tv[t, 0, 1]
    e1z = tv[t, 1, 2] - tv[t, 0, 2]
    e2x = tv[t, 2, 0] - tv[t, 0, 0]
    e2y = tv[t, 2, 1] - tv[t, 0, 1]
    e2z = tv[t, 2, 2] - tv[t, 0, 2]
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    px = dy * e2z - dz * e2y
    py = dz * e2x - dx * e2z
    pz = dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz
    scale = math.sqrt((e1x * e1x + e1y * e1y + e1z * e1z) * (e2x * e2x + e2y * e2y + e2z * e2z)
                      * (dx * dx + dy * dy + dz * dz))
    # A segment lying in the triangle's plane cannot cross it; its end nodes
    # are on the surface (distance ~0), where the sign does not matter.
    if abs(det) <= 1e-12 * scale:
        return -1.0
    inv = 1.0 / det
    sx = ax - tv[t, 0, 0]
    sy = ay - tv[t, 0, 1]
    sz = az - tv[t, 0, 2]
    u = (sx * px + sy * py + sz * pz) * inv
    if u < -eps or u > 1.0 + eps:
        return -1.0
    qx = sy * e1z - sz * e1y
    qy = sz * e1x - sx * e1z
    qz = sx * e1y - sy * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    if v < -eps or u + v > 1.0 + eps:
        return -1.0
    s = (e2x * qx + e2y * qy + e2z * qz) * inv
    if s < -eps or s > 1.0 + eps:
        return -1.0
    return min(max(s, 0.0), 1.0)


@njit(**config.NJIT)
def _bin_triangles(tlo, thi, origin, h, dims, block, margin):
    """Bin triangles into node blocks by their bounding box grown by ``margin``.

    Parameters
    ----------
    tlo, thi : (m, 3) float64
        Triangle bounding boxes (m).
    origin : (3,) float64
        Grid origin (m).
    h : float
        Cell size (m).
    dims : (3,) int64
        Grid nodes per axis.
    block : int
        Nodes per block edge.
    margin : float
        Growth of each box (m); every node within ``margin`` of a triangle is
        in a block that lists it.

    Returns
    -------
    start : (nblocks + 1,) int64
        CSR offsets; block ``b`` = ``(bi * nbj + bj) * nbk + bk``.
    items : (start[-1],) int32
        Triangle indices per block.
    """
    nbi = (dims[0] + block - 1) // block
    nbj = (dims[1] + block - 1) // block
    nbk = (dims[2] + block - 1) // block
    m = tlo.shape[0]
    rng = np.empty((m, 6), np.int64)
    count = np.zeros(nbi * nbj * nbk + 1, np.int64)
    for t in range(m):
        for a in range(3):
            lo = int(math.ceil((tlo[t, a] - margin - origin[a]) / h))
            hi = int(math.floor((thi[t, a] + margin - origin[a]) / h))
            lo = min(max(lo, 0), dims[a] - 1)
            hi = min(max(hi, 0), dims[a] - 1)
            rng[t, 2 * a] = lo // block
            rng[t, 2 * a + 1] = hi // block
        for bi in range(rng[t, 0], rng[t, 1] + 1):
            for bj in range(rng[t, 2], rng[t, 3] + 1):
                for bk in range(rng[t, 4], rng[t, 5] + 1):
                    count[(bi * nbj + bj) * nbk + bk + 1] += 1
    for b in range(1, count.shape[0]):
        count[b] += count[b - 1]
    items = np.empty(count[-1], np.int32)
    fill = count[:-1].copy()
    for t in range(m):
        for bi in range(rng[t, 0], rng[t, 1] + 1):
            for bj in range(rng[t, 2], rng[t, 3] + 1):
                for bk in range(rng[t, 4], rng[t, 5] + 1):
                    b = (bi * nbj + bj) * nbk + bk
                    items[fill[b]] = t
                    fill[b] += 1
    return count, items
