"""Analytic signed distance functions: plane, box (solid or container), sphere.

Every collider shape, analytic or sampled from a mesh, exposes one numba
function with the same signature, evaluated in the collider's *local* frame::

    sdf(params: float64[:], grid: float32[:, :, :], px, py, pz) -> (d, nx, ny, nz)

``d`` is the signed distance to the collider's surface, negative inside the
solid; ``(nx, ny, nz)`` is the unit outward normal (the normalised gradient of
``d``). ``params`` holds the shape's numbers, ``grid`` its sampled field (an
unused 1x1x1 array for analytic shapes). One signature lets the collision
driver be compiled once per shape function and receive it as an argument
(STYLE.md convention 5), with no string branching inside kernels.

Clavet 2005 (thesis section 6) samples every object's distance field on a grid;
for planes, boxes and spheres the closed forms are exact and cheaper.
"""

from __future__ import annotations

import math

from numba import njit

from .. import config


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
