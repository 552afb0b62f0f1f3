"""Numba kernels of the density relaxation (Clavet 2005, thesis Algorithm 3, eqs. 4.1-4.6) with the
colliders' terms: the fluid missing behind them as a fixed lattice (``liquid_units.wall_terms``)
and flat walls as mirrors (``wall_images``). The model is ``viscoelastic_clavet2005``.

Conventions and deviations, each for a stated reason (the model's docstring has the physics):

* **Whole pair terms**, **sequential, in parallel** and **coincident particles**: as in
  ``viscoelastic_clavet2005_kernels`` (Gauss-Seidel by supercell colour, deterministic and
  independent of the thread count; a pair's displacement applied whole and equal and opposite, so
  momentum between particles is conserved to round-off).
* **Kernel forms written out.** The pair weights (1-q)² and (1-q)³ are the
  ``clavet_density``/``clavet_near`` entries of ``core.kernels`` without their
  normalisation; they are written out here rather than called from there
  because numba's disk cache of these kernels is invalidated only by edits to
  this file, never to a module they call (tests/core/test_naive_reference.py
  pins this arithmetic to the slow references).
* **Materials.** Pair terms between materials use the acting particle's pressure (eq. 4.2 with
  its own k, ρ0).
* **A cap on each pair's push** (``PAIR_CAP``), which never acts at rest.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .. import config

# The largest displacement one pair term may give in a pass, in units of h. At rest a pair moves by
# ~1e-4 h a pass and the cap never acts; at impacts (a wall hit at 10 m/s, a paddle) the
# linearised push of a deeply compressed particle overshoots, throws its neighbours out at the
# next pass and the substep shrinks after it (measured with scratch mirror walls: the dam
# break's far-wall impact threw particles at 23-28 m/s and took 219 substeps; capped, 10-11 m/s and 159).
PAIR_CAP = 0.01


@njit(**config.NJIT)
def _wall_densities(i, xi, yi, zi, x_ref, wall_rho, wall_rho_near, wall_g, wall_g_near, inv_h):
    """Particle i's densities from the colliders at (xi, yi, zi): ρ_w + (2/h) g·δ and ρ^near_w +
    (3/h) g^near·δ for its move δ since x_ref, clipped at 0. The partners behind the wall are held
    where they were sampled (a fixed-partner linearisation: the re-sampled shares would change
    the slope by a factor 0.6-2.5 within a pass, measured in tests/core/test_liquid_units.py)."""
    mx = xi - x_ref[i, 0]
    my = yi - x_ref[i, 1]
    mz = zi - x_ref[i, 2]
    d = wall_rho[i] + 2.0 * inv_h * (wall_g[i, 0] * mx + wall_g[i, 1] * my + wall_g[i, 2] * mz)
    dn = wall_rho_near[i] + 3.0 * inv_h * (wall_g_near[i, 0] * mx + wall_g_near[i, 1] * my
                                          + wall_g_near[i, 2] * mz)
    return max(d, 0.0), max(dn, 0.0)


@njit(**config.NJIT)
def _wall_push(i, p, pn, wall_g, wall_g_near, wall_dx):
    """The colliders' push on particle i, -(P Δt² g + P^near Δt² g^near) (eq. 4.6 with partners that
    do not move), also added to ``wall_dx`` (what the colliders receive, equal and opposite)."""
    wx = -p * wall_g[i, 0] - pn * wall_g_near[i, 0]
    wy = -p * wall_g[i, 1] - pn * wall_g_near[i, 1]
    wz = -p * wall_g[i, 2] - pn * wall_g_near[i, 2]
    wall_dx[i, 0] += wx
    wall_dx[i, 1] += wy
    wall_dx[i, 2] += wz
    return wx, wy, wz


@njit(**config.NJIT_PARALLEL)
def double_density_relaxation(x, nbr, count, mat, gain, gain_near, rho0, rho0_near, h, bucket_start, colour,
                              colour_buckets, colour_units, x_ref, wall_rho, wall_rho_near, wall_g, wall_g_near,
                              planes, plane_of, backward, rho, rho_near, wall_dx):
    """One pass of double density relaxation (Clavet Algorithm 3, eqs. 4.1-4.6), particle after particle.

    For each particle i: density and near-density from the current positions
    (eqs. 4.1, 4.3), plus the density of the fluid missing behind a collider
    (``wall_rho``); pressures P Δt² = gain (ρ - ρ0)⁺ and P^near Δt² =
    gain_near (ρ^near - ρ0^near)⁺ (eqs. 4.2, 4.4 made one-sided, see the
    model); every neighbour j moves by D_ij = (P Δt² (1-q) + P^near Δt² (1-q)²) r̂_ij
    and i by the sum of -D_ij (eq. 4.6) plus the push of the wall along its
    normal, before the next particle is visited. The thesis visits particles
    one by one; we visit the 8 supercell colours in turn and the supercells of
    a colour in parallel (their neighbourhoods are disjoint, see neighbors.py),
    each supercell's particles in order: the same sequential algorithm,
    race-free and deterministic. Pair displacements are equal and opposite, so
    momentum is conserved between particles (the wall takes what it pushes).

    Parameters
    ----------
    x : (n,3) float64 predicted positions, m; mutated.
    nbr, count : neighbour rows.
    mat : (n,) uint8; gain, gain_near (m) : per-material k Δt², k^near Δt² (0: the material does not relax);
    rho0, rho0_near : per-material rest densities in Clavet's units (lattice sums).
    h : interaction radius, m.
    bucket_start, colour, colour_buckets, colour_units : from ``NeighborSearch.sort`` (each colour's
        supercells in units of about equal particle counts, one parallel iteration each).
    x_ref : (n,3) positions where the colliders were sampled, m.
    wall_rho, wall_rho_near, wall_g, wall_g_near : the colliders' densities (n,) and their
        gradients (n,3) at x_ref (``liquid_units.wall_terms``); at x they are taken as
        ρ_w + (2/h) g·(x - x_ref) and ρ^near_w + (3/h) g^near·(x - x_ref).
    planes : (P,4) float64, flat walls n·x = c (n the unit normal into the liquid), m;
    plane_of : (n,3) int64, the planes (rows of ``planes``) within reach of each particle, -1 for
        none: the liquid behind them is the mirror image of the liquid in front (``wall_mirror``).
    backward : visit the colours, and each supercell's particles, in reverse order (symmetric
        Gauss-Seidel when passes alternate: a one-way sweep drifts a resting drop along the
        sweep, measured as a steady elongation of a zero-gravity drop under surface tension).
    rho, rho_near : (n,) float64 out: each particle's densities when it was relaxed.
    wall_dx : (n,3) float64, accumulated: the displacement the colliders gave each particle
        (the colliders receive it equal and opposite: ``walls.Walls.received``).
    """
    inv_h = 1.0 / h
    cap = PAIR_CAP * h
    width = nbr.shape[1]
    n_colours = colour_units.shape[0]
    for cc in range(n_colours):
        c = n_colours - 1 - cc if backward else cc
        for u in prange(colour_units.shape[1] - 1):
            # Each neighbour's direction and (1 - q) from the density loop, reused by the
            # displacement loop: nothing moves i's neighbours in between, so this is the same
            # arithmetic done once (measured on the dam break: 3.2 -> 2.0 ms per pass).
            ux = np.empty(width)
            uy = np.empty(width)
            uz = np.empty(width)
            w = np.empty(width)
            # The images of the neighbours (and self) in up to 3 walls, 7 subsets each (wall_images).
            iu = np.empty((7, 7 * (width + 1)))
            ij = np.empty((2, 7 * (width + 1)), np.int64)
            for t in range(colour_units[c, u], colour_units[c, u + 1]):
                lo = bucket_start[colour_buckets[t]]
                hi = bucket_start[colour_buckets[t] + 1]
                # One loop per direction: a loop whose index is chosen by the direction inside it ran the
                # forward sweeps 9 % slower (1.44-1.51 against 1.32-1.37 ms a pass, the same particles).
                if backward:
                    for i in range(hi - 1, lo - 1, -1):
                        _relax_one(i, c, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, colour, x_ref, wall_rho,
                                   wall_rho_near, wall_g, wall_g_near, planes, plane_of, rho, rho_near, wall_dx, inv_h,
                                   cap, ux, uy, uz, w, iu, ij)
                else:
                    for i in range(lo, hi):
                        _relax_one(i, c, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, colour, x_ref, wall_rho,
                                   wall_rho_near, wall_g, wall_g_near, planes, plane_of, rho, rho_near, wall_dx, inv_h,
                                   cap, ux, uy, uz, w, iu, ij)


@njit(**config.NJIT_INLINE)
def _relax_one(i, c, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, colour, x_ref, wall_rho, wall_rho_near,
               wall_g, wall_g_near, planes, plane_of, rho, rho_near, wall_dx, inv_h, cap, ux, uy, uz, w, iu, ij):
    """Relax particle i if it has colour c (the body of :func:`double_density_relaxation`'s sweeps)."""
    if colour[i] != c:
        return
    xi = x[i, 0]
    yi = x[i, 1]
    zi = x[i, 2]
    nk = count[i]
    d, dn = _pair_weights(i, xi, yi, zi, x, nbr, nk, inv_h, ux, uy, uz, w)
    # The fluid missing behind the colliders (a boundary volume, as SPlisHSPlasH's
    # volume maps give it), linearised about where it was sampled.
    if wall_rho[i] > 0.0:
        wd, wdn = _wall_densities(i, xi, yi, zi, x_ref, wall_rho, wall_rho_near, wall_g, wall_g_near,
                                  inv_h)
        d += wd
        dn += wdn
    k = _planes_near(i, plane_of)
    mi = 0
    if k:
        md, mdn, mi = _image_densities(i, xi, yi, zi, x, nbr, nk, planes, plane_of, k, inv_h, ux, uy, uz,
                                            w, iu, ij)
        d += md
        dn += mdn
    rho[i] = d
    rho_near[i] = dn
    m = mat[i]
    p = gain[m] * max(d - rho0[m], 0.0)
    pn = gain_near[m] * max(dn - rho0_near[m], 0.0)
    if p == 0.0 and pn == 0.0:
        return
    # The images' pushes use the directions kept when the densities were summed, as the real ones do.
    mx = 0.0
    my = 0.0
    mz = 0.0
    if mi:
        mx, my, mz = _push_images(i, p, pn, x, planes, plane_of, k, cap, wall_dx, mi, iu, ij)
    sx, sy, sz = _push_neighbours(i, p, pn, x, nbr, nk, ux, uy, uz, w, cap)
    wx, wy, wz = _wall_push(i, p, pn, wall_g, wall_g_near, wall_dx)
    x[i, 0] = xi + sx + wx + mx
    x[i, 1] = yi + sy + wy + my
    x[i, 2] = zi + sz + wz + mz


@njit(**config.NJIT_INLINE)
def _planes_near(i, plane_of):
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
def _image_densities(i, xi, yi, zi, x, nbr, nk, planes, plane_of, k, inv_h, ux, uy, uz, w, iu, ij):
    """Σ (1-q)² and Σ (1-q)³ over the images of i and of its neighbours in its k walls (every
    non-empty subset of them: one reflection per wall, two in an edge, three in a corner), and the
    number of images within h, whose direction and 1 - q (iu, rows x y z w) and particle and
    subset (ij, rows j sub) are kept for :func:`_push_images`.

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
    """:func:`_image_densities` for perpendicular walls (a box's faces, one wall alone): the image of
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
        sd, sdn = _weight_sums(wi, nk)
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
def _weight_sums(a, n):
    """Σ a² and Σ a³ over a[:n], in two partial sums each (a single chain waits on each addition)."""
    d0 = 0.0
    d1 = 0.0
    dn0 = 0.0
    dn1 = 0.0
    for k in range(n // 2):
        a0 = a[2 * k]
        a1 = a[2 * k + 1]
        d0 += a0 * a0
        d1 += a1 * a1
        dn0 += a0 * a0 * a0
        dn1 += a1 * a1 * a1
    if n % 2:
        a0 = a[n - 1]
        d0 += a0 * a0
        dn0 += a0 * a0 * a0
    return d0 + d1, dn0 + dn1


@njit(**config.NJIT_INLINE)
def _keep_image(iu, ij, m, ex, ey, ez, r, a, j, sub):
    """Keep image m for :func:`_push_images`: its direction (offset e over r) and 1 - q in iu's
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
def _push_images(i, p, pn, x, planes, plane_of, k, cap, wall_dx, m, iu, ij):
    """Push the m images :func:`_image_densities` kept as real neighbours are pushed (eq. 4.6,
    capped): each image's move, reflected back, moves the particle it mirrors (so i's turn pushes
    its neighbours off the wall, the turn a fixed boundary never takes), and i takes the reaction.
    Both are the walls' doing and go to ``wall_dx``. Returns i's move."""
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
        else:
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


@njit(**config.NJIT_INLINE)
def _pair_weights(i, xi, yi, zi, x, nbr, nk, inv_h, ux, uy, uz, w):
    """Particle i's densities Σ (1-q)² and Σ (1-q)³ over its nk neighbours (eqs. 4.1, 4.3), with each
    neighbour's 1 - q (0 beyond h or coincident) into w and its direction r̂ into ux, uy, uz."""
    # The neighbours' offsets gathered first, then the square roots and divisions in a loop over
    # contiguous arrays, which the compiler vectorises (a pass 10 % faster than one loop; the same
    # values: r = 0 gives 0 × 1e300 = 0, as before).
    for kk in range(nk):
        j = nbr[i, kk]
        ux[kk] = x[j, 0] - xi
        uy[kk] = x[j, 1] - yi
        uz[kk] = x[j, 2] - zi
    for kk in range(nk):
        ex = ux[kk]
        ey = uy[kk]
        ez = uz[kk]
        r = math.sqrt(ex * ex + ey * ey + ez * ez)
        a = 1.0 - r * inv_h
        inv_r = 1.0 / max(r, 1e-300)
        w[kk] = a if (a > 0.0 and r > 0.0) else 0.0
        ux[kk] = ex * inv_r
        uy[kk] = ey * inv_r
        uz[kk] = ez * inv_r
    # Two partial sums per density (_weight_sums): passes 15.7 -> 13.0 ms a substep on the bench's dam
    # break with these and the two sums of _push_neighbours.
    return _weight_sums(w, nk)


@njit(**config.NJIT_INLINE)
def _push_neighbours(i, p, pn, x, nbr, nk, ux, uy, uz, w, cap):
    """Move each neighbour j of i by D_ij = (P Δt² (1-q) + P^near Δt² (1-q)²) r̂_ij (eq. 4.6), at most
    ``cap`` (m, ``PAIR_CAP``), and return the sum of -D_ij, i's own move (in two partial sums, as in
    _pair_weights)."""
    sx = 0.0
    sy = 0.0
    sz = 0.0
    tx = 0.0
    ty = 0.0
    tz = 0.0
    for kk in range(nk):
        a = w[kk]
        if a == 0.0:
            continue
        j = nbr[i, kk]
        mag = min((p + pn * a) * a, cap)
        dx = mag * ux[kk]
        dy = mag * uy[kk]
        dz = mag * uz[kk]
        x[j, 0] += dx
        x[j, 1] += dy
        x[j, 2] += dz
        if kk % 2:
            tx -= dx
            ty -= dy
            tz -= dz
        else:
            sx -= dx
            sy -= dy
            sz -= dz
    return sx + tx, sy + ty, sz + tz
