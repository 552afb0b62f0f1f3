"""Numba kernels of the mirrored walls (``boundary.mirror``): which walls each particle reaches, and
the inline helpers with which the density relaxation (``terms.relaxation_clavet2005_kernels``) counts
the images of a particle's neighbours in its densities and pushes them (method of images)."""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.pair_kernels import weight_sums


@njit(**config.NJIT_PARALLEL)
def nearest_planes(x, planes, group, reach, plane_of, best):
    """The nearest three planes within ``reach`` (m) of each particle, nearest first, into plane_of.

    x : (n,3) positions; planes : (P,4) n·x = c with n into the liquid; group : (P,) int64, the
    collider each plane belongs to (a tank's faces share one: a particle beyond any of them is
    outside that tank and mirrors none of them); plane_of : (n,3) int64, filled with -1 by the
    caller, out; best : (n,3) float64 scratch, the listed planes' distances (rows in place of
    small arrays allocated per particle, which took most of the call's time).
    """
    n_planes = planes.shape[0]
    for i in prange(x.shape[0]):
        for b in range(3):
            best[i, b] = np.inf
        p0 = 0
        while p0 < n_planes:
            p1 = p0
            while p1 < n_planes and group[p1] == group[p0]:
                p1 += 1
            inside = True
            for a in range(p0, p1):
                if planes[a, 0] * x[i, 0] + planes[a, 1] * x[i, 1] + planes[a, 2] * x[i, 2] - planes[a, 3] < 0.0:
                    inside = False
            if inside:
                for a in range(p0, p1):
                    d = planes[a, 0] * x[i, 0] + planes[a, 1] * x[i, 1] + planes[a, 2] * x[i, 2] - planes[a, 3]
                    if d < reach and d < best[i, 2] and not _listed(planes, plane_of, i, a):
                        b = 2
                        while b > 0 and d < best[i, b - 1]:
                            best[i, b] = best[i, b - 1]
                            plane_of[i, b] = plane_of[i, b - 1]
                            b -= 1
                        best[i, b] = d
                        plane_of[i, b] = a
            p0 = p1


@njit(**config.NJIT)
def _listed(planes, plane_of, i, a):
    """Whether plane a is already in particle i's list (the same plane from another collider)."""
    for b in range(3):
        o = plane_of[i, b]
        if o >= 0 and (abs(planes[o, 0] - planes[a, 0]) + abs(planes[o, 1] - planes[a, 1])
                       + abs(planes[o, 2] - planes[a, 2]) + abs(planes[o, 3] - planes[a, 3])) < 1e-9:
            return True
    return False


@njit(**config.NJIT_INLINE)
def planes_near(i, plane_of):
    """How many walls particle i mirrors its neighbours in (plane_of's leading entries that are set)."""
    k = 0
    while k < 3 and plane_of[i, k] >= 0:
        k += 1
    return k


@njit(**config.NJIT_INLINE)
def _image(px, py, pz, planes, plane_of, i, sub, k):
    """The point p reflected in each of particle i's first k planes whose bit is set in ``sub``."""
    for b in range(k):
        if (sub >> b) & 1:
            a = plane_of[i, b]
            nx = planes[a, 0]
            ny = planes[a, 1]
            nz = planes[a, 2]
            t = 2.0 * (nx * px + ny * py + nz * pz - planes[a, 3])
            px -= t * nx
            py -= t * ny
            pz -= t * nz
    return px, py, pz


@njit(**config.NJIT_INLINE)
def _image_move(vx, vy, vz, planes, plane_of, i, sub, k):
    """A move of an image taken back to the particle it mirrors: the reflections' linear parts in
    reverse order (they commute for the perpendicular faces of a box, not for any two planes)."""
    for bb in range(k):
        b = k - 1 - bb
        if (sub >> b) & 1:
            a = plane_of[i, b]
            nx = planes[a, 0]
            ny = planes[a, 1]
            nz = planes[a, 2]
            t = 2.0 * (nx * vx + ny * vy + nz * vz)
            vx -= t * nx
            vy -= t * ny
            vz -= t * nz
    return vx, vy, vz


@njit(**config.NJIT_INLINE)
def image_densities(i, xi, yi, zi, x, nbr, nk, planes, plane_of, k, inv_h, ux, uy, uz, w, iu, ij):
    """Σ (1-q)² and Σ (1-q)³ over the images of i and of its neighbours in its k walls (every
    non-empty subset of them: one reflection per wall, two in an edge, three in a corner), and the
    number of images within h, whose direction and 1 - q (iu, rows x y z w) and particle and
    subset (ij, rows j sub) are kept for :func:`push_images`.

    An image in a wall within h of i mirrors a point within h of it on the liquid's side, so i's
    neighbour rows hold the images that count. Perpendicular walls (a box's) take
    :func:`_orthogonal_images`; others (rare) reflect each neighbour in each subset, in order.
    """
    h = 1.0 / inv_h
    if _orthogonal(i, planes, plane_of, k):
        di0 = 0.0
        di1 = 0.0
        di2 = 0.0
        for b in range(k):
            a = plane_of[i, b]
            dib = planes[a, 0] * xi + planes[a, 1] * yi + planes[a, 2] * zi - planes[a, 3]
            if b == 0:
                di0 = dib
            elif b == 1:
                di1 = dib
            else:
                di2 = dib
        return _orthogonal_images(i, nbr, nk, planes, plane_of, k, di0, di1, di2, h, inv_h, ux, uy, uz, w, iu, ij)
    d = 0.0
    dn = 0.0
    m = 0
    for kk in range(nk + 1):
        j = nbr[i, kk] if kk < nk else i
        for sub in range(1, 1 << k):
            px, py, pz = _image(x[j, 0], x[j, 1], x[j, 2], planes, plane_of, i, sub, k)
            ex = px - xi
            ey = py - yi
            ez = pz - zi
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            a = 1.0 - r * inv_h
            if a > 0.0 and r > 0.0:
                d += a * a
                dn += a * a * a
                m = _keep_image(iu, ij, m, ex, ey, ez, r, a, j, sub)
    return d, dn, m


@njit(**config.NJIT_INLINE)
def _orthogonal(i, planes, plane_of, k):
    """Whether particle i's k walls are pairwise perpendicular (a box's faces always are)."""
    for b in range(k):
        for c in range(b):
            p, q = plane_of[i, b], plane_of[i, c]
            if abs(planes[p, 0] * planes[q, 0] + planes[p, 1] * planes[q, 1] + planes[p, 2] * planes[q, 2]) > 1e-12:
                return False
    return True


@njit(**config.NJIT_INLINE)
def _orthogonal_images(i, nbr, nk, planes, plane_of, k, di0, di1, di2, h, inv_h, ux, uy, uz, w, iu, ij):
    """:func:`image_densities` for perpendicular walls (a box's faces, one wall alone): the image of
    j in a set S of them is at |x_i - x_j^S|² = r_ij² + Σ_{b in S} 4 d_ib d_jb, with
    d_jb = d_ib + r (n_b·r̂_ij), from the real pair's r and direction that _pair_weights kept.

    Per wall, 4 d_ib d_jb of every neighbour (iu's rows 4-6); per set, the image weights in a loop of
    selects (iu's row 3, a stretch per set), their sums, then the images within h kept: split as
    _pair_weights is, so vectorised (one branchy loop cost 0.55 of a 2.4 ms pass).
    """
    nn = nk + 1
    for b in range(3):
        t = iu[4 + b]
        if b >= k:
            t[:nk] = 0.0
            continue
        a = plane_of[i, b]
        nx = planes[a, 0]
        ny = planes[a, 1]
        nz = planes[a, 2]
        dib = di0 if b == 0 else (di1 if b == 1 else di2)
        f = 4.0 * dib
        for kk in range(nk):
            t[kk] = f * (dib + h * (1.0 - w[kk]) * (nx * ux[kk] + ny * uy[kk] + nz * uz[kk]))
    t0 = iu[4]
    t1 = iu[5]
    t2 = iu[6]
    d = 0.0
    dn = 0.0
    m = 0
    for sub in range(1, 1 << k):
        s0 = 1.0 if sub & 1 else 0.0
        s1 = 1.0 if sub & 2 else 0.0
        s2 = 1.0 if sub & 4 else 0.0
        wi = iu[3, (sub - 1) * nn:sub * nn]
        for kk in range(nk):
            wk = w[kk]
            r = h * (1.0 - wk)
            r2 = r * r + s0 * t0[kk] + s1 * t1[kk] + s2 * t2[kk]
            a = 1.0 - math.sqrt(max(r2, 0.0)) * inv_h
            wi[kk] = a if (wk > 0.0 and r2 > 0.0 and a > 0.0) else 0.0
        sd, sdn = weight_sums(wi, nk)
        d += sd
        dn += sdn
        # The kept images' columns m never pass the weight being read: m counts weights read so far.
        for kk in range(nk):
            a = wi[kk]
            if a > 0.0:
                r = h * (1.0 - w[kk])
                ex = r * ux[kk]
                ey = r * uy[kk]
                ez = r * uz[kk]
                for b in range(k):
                    if (sub >> b) & 1:
                        q = plane_of[i, b]
                        dib = di0 if b == 0 else (di1 if b == 1 else di2)
                        dj = dib + r * (planes[q, 0] * ux[kk] + planes[q, 1] * uy[kk] + planes[q, 2] * uz[kk])
                        ex -= 2.0 * dj * planes[q, 0]
                        ey -= 2.0 * dj * planes[q, 1]
                        ez -= 2.0 * dj * planes[q, 2]
                m = _keep_image(iu, ij, m, ex, ey, ez, h * (1.0 - a), a, nbr[i, kk], sub)
        # i's own image in S: at 2 Σ d_ib n_b from it, on the far side of the walls.
        ex = 0.0
        ey = 0.0
        ez = 0.0
        for b in range(k):
            if (sub >> b) & 1:
                q = plane_of[i, b]
                dib = di0 if b == 0 else (di1 if b == 1 else di2)
                ex -= 2.0 * dib * planes[q, 0]
                ey -= 2.0 * dib * planes[q, 1]
                ez -= 2.0 * dib * planes[q, 2]
        ri = math.sqrt(ex * ex + ey * ey + ez * ez)
        if 0.0 < ri < h:
            a = 1.0 - ri * inv_h
            d += a * a
            dn += a * a * a
            m = _keep_image(iu, ij, m, ex, ey, ez, ri, a, i, sub)
    return d, dn, m


@njit(**config.NJIT_INLINE)
def _keep_image(iu, ij, m, ex, ey, ez, r, a, j, sub):
    """Keep image m for :func:`push_images`: its direction (offset e over r) and 1 - q in iu's
    column m, the particle it mirrors and the subset of walls in ij's; returns m + 1."""
    inv_r = 1.0 / r
    iu[0, m] = ex * inv_r
    iu[1, m] = ey * inv_r
    iu[2, m] = ez * inv_r
    iu[3, m] = a
    ij[0, m] = j
    ij[1, m] = sub
    return m + 1


@njit(**config.NJIT_INLINE)
def push_images(i, p, pn, x, planes, plane_of, k, cap, wall_dx, m, iu, ij, mat, held):
    """Push the m images :func:`image_densities` kept as real neighbours are pushed (eq. 4.6,
    capped): each image's move, reflected back, moves the particle it mirrors (so i's turn pushes
    its neighbours off the wall, the turn a fixed boundary never takes), and i takes the reaction.
    Both are the walls' doing and go to ``wall_dx``. A particle of a held material (``held[mat]``: a
    solid's, which the passes do not move) stays where it is: the image of a solid is a wall. Returns
    i's move."""
    sx = 0.0
    sy = 0.0
    sz = 0.0
    for t in range(m):
        a = iu[3, t]
        mag = min((p + pn * a) * a, cap)
        dx = mag * iu[0, t]
        dy = mag * iu[1, t]
        dz = mag * iu[2, t]
        mx, my, mz = _image_move(dx, dy, dz, planes, plane_of, i, ij[1, t], k)
        j = ij[0, t]
        sx -= dx
        sy -= dy
        sz -= dz
        if j == i:
            sx += mx
            sy += my
            sz += mz
        elif not held[mat[j]]:
            x[j, 0] += mx
            x[j, 1] += my
            x[j, 2] += mz
            wall_dx[j, 0] += mx
            wall_dx[j, 1] += my
            wall_dx[j, 2] += mz
    # All of i's move here is the walls' doing.
    wall_dx[i, 0] += sx
    wall_dx[i, 1] += sy
    wall_dx[i, 2] += sz
    return sx, sy, sz
