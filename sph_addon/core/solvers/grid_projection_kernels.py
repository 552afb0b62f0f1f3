"""Numba kernels of the coarse grid projection (``grid_projection``): particles to cells and faces,
the pressure Poisson solve over the fluid cells, and the faces' velocity change back to particles.

Grid conventions: cell (a, b, c) spans origin + [a, a+1) x [b, b+1) x [c, c+1) cell widths, stored
flat at (a ny + b) nz + c. The component along axis k lives on the faces normal to k: its array has
one more entry along k, face m lying at cell m's lower side. Cell kinds: FLUID (holds particles),
AIR (empty: pressure 0), SOLID (empty with its centre inside a static collider: no flow through its
faces).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import config

FLUID = 0
AIR = 1
SOLID = 2


@njit(**config.NJIT)
def cell_counts(x, sel, origin, inv_d, nx, ny, nz, counts):
    """Particles (rows where ``sel``) per cell into ``counts`` (nx*ny*nz,) int64, zeroed here."""
    counts[:] = 0
    for p in range(x.shape[0]):
        if not sel[p]:
            continue
        a = int((x[p, 0] - origin[0]) * inv_d)
        b = int((x[p, 1] - origin[1]) * inv_d)
        c = int((x[p, 2] - origin[2]) * inv_d)
        if 0 <= a < nx and 0 <= b < ny and 0 <= c < nz:
            counts[(a * ny + b) * nz + c] += 1


@njit(**config.NJIT)
def _step(cell, k, nx, ny, nz):
    """The flat index of ``cell``'s neighbour k (0-5: -x, +x, -y, +y, -z, +z), -1 outside the grid."""
    c = cell % nz
    b = (cell // nz) % ny
    a = cell // (ny * nz)
    if k == 0:
        return cell - ny * nz if a > 0 else -1
    if k == 1:
        return cell + ny * nz if a < nx - 1 else -1
    if k == 2:
        return cell - nz if b > 0 else -1
    if k == 3:
        return cell + nz if b < ny - 1 else -1
    if k == 4:
        return cell - 1 if c > 0 else -1
    return cell + 1 if c < nz - 1 else -1


@njit(**config.NJIT)
def fluid_rows(kind, nx, ny, nz, row, nbr):
    """Number the fluid cells of the bodies that rest on a solid and reach air (``row``: their row in
    the solve, -1 for every other cell) and give each its six neighbours in ``nbr`` (m,6): a row, -1
    for air (or outside the grid), -2 for solid. Returns m.

    In ``kind``, fluid that touches no solid through fluid (a drop, a splash, a falling thread: it
    carries no weight, and the relaxation alone holds it together) is turned AIR, and fluid sealed
    off from air by solid (a pocket that cannot give way: its pressure is undetermined) SOLID."""
    n = kind.shape[0]
    row[:] = -1
    stack = np.empty(n, np.int64)
    top = 0
    for cell in range(n):
        if kind[cell] != FLUID:
            continue
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o >= 0 and kind[o] == SOLID:
                row[cell] = 0
                stack[top] = cell
                top += 1
                break
    while top > 0:
        top -= 1
        cell = stack[top]
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o >= 0 and kind[o] == FLUID and row[o] < 0:
                row[o] = 0
                stack[top] = o
                top += 1
    for cell in range(n):
        if kind[cell] == FLUID and row[cell] < 0:
            kind[cell] = AIR
    row[:] = -1
    for cell in range(n):
        if kind[cell] != FLUID:
            continue
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o < 0 or kind[o] == AIR:
                row[cell] = 0
                stack[top] = cell
                top += 1
                break
    while top > 0:
        top -= 1
        cell = stack[top]
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o >= 0 and kind[o] == FLUID and row[o] < 0:
                row[o] = 0
                stack[top] = o
                top += 1
    m = 0
    for cell in range(n):
        if kind[cell] != FLUID:
            continue
        if row[cell] < 0:
            kind[cell] = SOLID
        else:
            row[cell] = m
            m += 1
    for cell in range(n):
        r = row[cell]
        if r < 0:
            continue
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o < 0 or kind[o] == AIR:
                nbr[r, k] = -1
            elif kind[o] == SOLID:
                nbr[r, k] = -2
            else:
                nbr[r, k] = row[o]
    return m


@njit(**config.NJIT_PARALLEL)
def _laplacian(nbr, m, p, out):
    """out = -L p over the m fluid rows: Σ (p_i - p_j) over non-solid neighbours, p = 0 in air."""
    for r in prange(m):
        s = 0.0
        pr = p[r]
        for k in range(6):
            j = nbr[r, k]
            if j == -2:
                continue
            s += pr - (p[j] if j >= 0 else 0.0)
        out[r] = s


@njit(**config.NJIT)
def _dot(a, b, m):
    s = 0.0
    for r in range(m):
        s += a[r] * b[r]
    return s


@njit(**config.NJIT)
def solve(nbr, m, rhs, p, tol, max_iterations, r, d, q):
    """Conjugate gradients on -L p = rhs over the m fluid rows, from p = 0, until |r| <= tol |rhs|.
    -L is symmetric positive definite: every row's cell is connected to air (``fluid_rows``).
    r, d, q : (m,) work arrays. Returns (iterations, relative residual)."""
    for i in range(m):
        p[i] = 0.0
        r[i] = rhs[i]
        d[i] = rhs[i]
    rr = _dot(r, r, m)
    r0 = np.sqrt(rr)
    if r0 == 0.0:
        return 0, 0.0
    it = 0
    while it < max_iterations:
        _laplacian(nbr, m, d, q)
        alpha = rr / _dot(d, q, m)
        for i in range(m):
            p[i] += alpha * d[i]
            r[i] -= alpha * q[i]
        rn = _dot(r, r, m)
        it += 1
        if np.sqrt(rn) <= tol * r0:
            rr = rn
            break
        beta = rn / rr
        for i in range(m):
            d[i] = r[i] + beta * d[i]
        rr = rn
    return it, np.sqrt(rr) / r0


@njit(**config.NJIT)
def _corner(f):
    """The lower of the two grid nodes around coordinate f (in node units) and the weight of the upper."""
    a = int(np.floor(f))
    return a, f - a


@njit(**config.NJIT)
def splat(x, v, sel, origin, inv_d, axis, u, w):
    """Add each selected particle's velocity component ``axis`` to the faces normal to it, with
    trilinear weights (the faces around it), into u and the weights into w (both zeroed by the caller)."""
    nx, ny, nz = u.shape
    s0 = 0.0 if axis == 0 else 0.5
    s1 = 0.0 if axis == 1 else 0.5
    s2 = 0.0 if axis == 2 else 0.5
    for p in range(x.shape[0]):
        if not sel[p]:
            continue
        a0, t0 = _corner((x[p, 0] - origin[0]) * inv_d - s0)
        b0, t1 = _corner((x[p, 1] - origin[1]) * inv_d - s1)
        c0, t2 = _corner((x[p, 2] - origin[2]) * inv_d - s2)
        vp = v[p, axis]
        for da in range(2):
            a = a0 + da
            if a < 0 or a >= nx:
                continue
            wa = t0 if da else 1.0 - t0
            for db in range(2):
                b = b0 + db
                if b < 0 or b >= ny:
                    continue
                wb = wa * (t1 if db else 1.0 - t1)
                for dc in range(2):
                    c = c0 + dc
                    if c < 0 or c >= nz:
                        continue
                    ww = wb * (t2 if dc else 1.0 - t2)
                    u[a, b, c] += ww * vp
                    w[a, b, c] += ww


@njit(**config.NJIT_PARALLEL)
def gather(x, sel, origin, inv_d, axis, du, known, dv):
    """Each selected particle's velocity change along ``axis``: the faces' changes ``du`` around it,
    trilinear weights renormalised over the faces whose change is ``known`` (solved or held by a
    solid), so a particle beside a wall or the surface takes the change of the faces that have one."""
    nx, ny, nz = du.shape
    s0 = 0.0 if axis == 0 else 0.5
    s1 = 0.0 if axis == 1 else 0.5
    s2 = 0.0 if axis == 2 else 0.5
    for p in prange(x.shape[0]):
        dv[p, axis] = 0.0
        if not sel[p]:
            continue
        a0, t0 = _corner((x[p, 0] - origin[0]) * inv_d - s0)
        b0, t1 = _corner((x[p, 1] - origin[1]) * inv_d - s1)
        c0, t2 = _corner((x[p, 2] - origin[2]) * inv_d - s2)
        s = 0.0
        ws = 0.0
        for da in range(2):
            a = a0 + da
            if a < 0 or a >= nx:
                continue
            wa = t0 if da else 1.0 - t0
            for db in range(2):
                b = b0 + db
                if b < 0 or b >= ny:
                    continue
                wb = wa * (t1 if db else 1.0 - t1)
                for dc in range(2):
                    c = c0 + dc
                    if c < 0 or c >= nz or not known[a, b, c]:
                        continue
                    ww = wb * (t2 if dc else 1.0 - t2)
                    s += ww * du[a, b, c]
                    ws += ww
        if ws > 0.0:
            dv[p, axis] = s / ws
