"""Analytic signed distance functions: plane, box (solid or container), sphere.

Every collider shape, analytic or sampled from a mesh, exposes one numba
function with the same signature, evaluated in the collider's *local* frame::

    sdf(params: float64[:], grid: float32[:, :, :], px, py, pz) -> (d, nx, ny, nz)

``d`` is the signed distance to the collider's surface, negative inside the
solid; ``(nx, ny, nz)`` is the unit outward normal (the normalised gradient of
``d``). ``params`` holds the shape's numbers, ``grid`` its sampled field (an
unused 1x1x1 array for analytic shapes).

The collision kernels used to receive this function as an argument (STYLE.md
convention 5). numba cannot cache such kernels on disk, so every new process
recompiled them (~4-6 s per bake task); they now take the shape's integer code
and call ``sdf_dispatch.sdf_eval``, which branches on it to these functions
(an integer branch, never a string). One signature keeps that dispatch a plain
call per shape. A new shape function needs its code in ``sdf_dispatch``.

Clavet 2005 (thesis section 6) samples every object's distance field on a grid;
for planes, boxes and spheres the closed forms are exact and cheaper.
"""

from __future__ import annotations

import math

from ...numerics import config
from ...numerics.kernel_cache import njit


@njit(**config.NJIT)
def sdf_plane(params, grid, px, py, pz):
    """Half-space z <= 0 is solid (local frame). params unused.

    Returns (d, nx, ny, nz) with d = z and n = +z.
    """
    return pz, 0.0, 0.0, 1.0


@njit(**config.NJIT)
def sdf_sphere(params, grid, px, py, pz):
    """Solid ball of radius params[0] centred at the local origin."""
    r = math.sqrt(px * px + py * py + pz * pz)
    if r < 1e-12:
        return -params[0], 0.0, 0.0, 1.0
    return r - params[0], px / r, py / r, pz / r


@njit(**config.NJIT)
def _box_distance(hx, hy, hz, px, py, pz):
    """Exact signed distance to a solid axis-aligned box of half extents h, and its gradient."""
    qx = abs(px) - hx
    qy = abs(py) - hy
    qz = abs(pz) - hz
    sx = 1.0 if px >= 0.0 else -1.0
    sy = 1.0 if py >= 0.0 else -1.0
    sz = 1.0 if pz >= 0.0 else -1.0
    if qx > 0.0 or qy > 0.0 or qz > 0.0:
        ox = max(qx, 0.0)
        oy = max(qy, 0.0)
        oz = max(qz, 0.0)
        d = math.sqrt(ox * ox + oy * oy + oz * oz)
        return d, sx * ox / d, sy * oy / d, sz * oz / d
    # Inside: the nearest face is the one with the largest (least negative) q.
    if qx >= qy and qx >= qz:
        return qx, sx, 0.0, 0.0
    if qy >= qz:
        return qy, 0.0, sy, 0.0
    return qz, 0.0, 0.0, sz


@njit(**config.NJIT)
def sdf_box(params, grid, px, py, pz):
    """Solid box with half extents params[0:3], centred at the local origin."""
    return _box_distance(params[0], params[1], params[2], px, py, pz)


@njit(**config.NJIT)
def sdf_box_container(params, grid, px, py, pz):
    """Hollow box: the inside (half extents params[0:3]) is free, everything outside is solid.

    The negated solid-box distance: particles are kept inside, and one that
    escaped is pushed back along the inward normal.
    """
    d, nx, ny, nz = _box_distance(params[0], params[1], params[2], px, py, pz)
    return -d, -nx, -ny, -nz


@njit(**config.NJIT)
def _beyond_open(params, a, pa):
    """Signed distance of coordinate ``pa`` beyond the open faces of axis ``a`` (0 between their planes)."""
    h = params[a]
    if params[3 + 2 * a] > 0.5 and pa < -h:
        return pa + h
    if params[4 + 2 * a] > 0.5 and pa > h:
        return pa - h
    return 0.0


@njit(**config.NJIT)
def sdf_box_open(params, grid, px, py, pz):
    """Hollow box with open faces: half extents params[0:3]; params[3:9] are 1 for an open face
    (order x-, x+, y-, y+, z-, z+), 0 for a closed one.

    The solid is what lies outside the box on the inner side of every open face's plane and
    beyond at least one closed face: an open top leaves the space above the walls' rim free, an
    open side lets the flow leave along the floor. Exact distances both ways (so the continuous
    collision's sphere tracing stays valid): outside the solid, the distance to the nearest closed
    face's region (a point of it with the other coordinates clamped to the open planes); inside,
    the distance to the box or to the nearest open face's half-space. With every face closed this
    is :func:`sdf_box_container` (which the builder uses then, unchanged).
    """
    p = (px, py, pz)
    ex = (_beyond_open(params, 0, px), _beyond_open(params, 1, py), _beyond_open(params, 2, pz))
    solid = False
    if ex[0] == 0.0 and ex[1] == 0.0 and ex[2] == 0.0:
        for k in range(6):
            s = 1.0 if k % 2 else -1.0
            if params[3 + k] < 0.5 and s * p[k // 2] >= params[k // 2]:
                solid = True
    if solid:
        d, nx, ny, nz = _box_distance(params[0], params[1], params[2], px, py, pz)
        best, bx, by, bz = d, -nx, -ny, -nz
        for k in range(6):
            a = k // 2
            s = 1.0 if k % 2 else -1.0
            gap = params[a] - s * p[a]
            if params[3 + k] > 0.5 and gap < best:
                best, bx, by, bz = gap, (s if a == 0 else 0.0), (s if a == 1 else 0.0), (s if a == 2 else 0.0)
        return -best, bx, by, bz
    # Free: a far value when every face is open (nothing to collide with).
    best, bx, by, bz = 1e10, 0.0, 0.0, 1.0
    for k in range(6):
        if params[3 + k] > 0.5:
            continue
        a = k // 2
        s = 1.0 if k % 2 else -1.0
        # p - q for the nearest point q of this closed face's region.
        gx = -s * max(0.0, params[0] - s * px) if a == 0 else ex[0]
        gy = -s * max(0.0, params[1] - s * py) if a == 1 else ex[1]
        gz = -s * max(0.0, params[2] - s * pz) if a == 2 else ex[2]
        dist = math.sqrt(gx * gx + gy * gy + gz * gz)
        if dist < best:
            best = dist
            if dist > 0.0:
                bx, by, bz = gx / dist, gy / dist, gz / dist
            else:  # on the face: its inward normal
                bx, by, bz = (-s if a == 0 else 0.0), (-s if a == 1 else 0.0), (-s if a == 2 else 0.0)
    return best, bx, by, bz
