"""Numba kernels of the density relaxation (Clavet 2005, thesis Algorithm 3, eqs. 4.1-4.6) with the
colliders' terms: the fluid missing behind them as a fixed lattice (``boundary.lattice_fill``)
and flat walls as mirrors (``boundary.mirror``, whose image helpers are inlined here). The term is
``relaxation_clavet2005``.

Conventions and deviations, each for a stated reason (the model's docstring has the physics):

* **Whole pair terms**, **sequential, in parallel** and **coincident particles**: as in
  ``springs_clavet2005_kernels`` (Gauss-Seidel by supercell colour, deterministic and
  independent of the thread count; a pair's displacement applied whole and equal and opposite, so
  momentum between particles is conserved to round-off).
* **Kernel forms written out.** The pair weights (1-q)² and (1-q)³ are the
  ``clavet_density``/``clavet_near`` entries of ``core.kernels`` without their
  normalisation, written out in the loops the compiler vectorises
  (tests/core/test_naive_reference.py pins this arithmetic to the slow references).
* **Materials.** Pair terms between materials use the acting particle's pressure (eq. 4.2 with
  its own k, ρ0).
* **A cap on each pair's push** (``PAIR_CAP``), which never acts at rest.
"""

from __future__ import annotations

import math

import numpy as np

from ..boundary.mirror_kernels import image_densities, planes_near, push_images
from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.pair_kernels import weight_sums

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
    the slope by a factor 0.6-2.5 within a pass, measured in tests/core/test_lattice.py)."""
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
                              planes, plane_of, backward, mass, held, held_dx, rho, rho_near, wall_dx):
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
        gradients (n,3) at x_ref (``boundary.lattice_fill.wall_terms``); at x they are taken as
        ρ_w + (2/h) g·(x - x_ref) and ρ^near_w + (3/h) g^near·(x - x_ref).
    planes : (P,4) float64, flat walls n·x = c (n the unit normal into the liquid), m;
    plane_of : (n,3) int64, the planes (rows of ``planes``) within reach of each particle, -1 for
        none: the liquid behind them is the mirror image of the liquid in front (``wall_mirror``).
    mass : per-material particle mass (any unit), empty when all materials have one density. With
        masses, i's pressure pushes a pair with the impulse it gives a pair of its own kind: i takes its
        whole share of -D_ij and j moves m_i / m_j of D_ij, so the pair's momentum is kept and a particle of
        another density in the liquid is pushed as the liquid it displaces would be (Archimedes);
        without, each takes its whole share.
    held : per-material uint8, 1 for a material whose particles the passes do not move (a solid's: its own
        solve moves them, ``relaxation_clavet2005``); only read with ``mass``.
    held_dx : (n,3) float64, accumulated: the displacement the passes would have given each held particle
        (m_i / m_j of each push), which it takes as a velocity through its own solve.
    backward : visit the colours, and each supercell's particles, in reverse order (symmetric
        Gauss-Seidel when passes alternate: a one-way sweep drifts a resting drop along the
        sweep, measured as a steady elongation of a zero-gravity drop under surface tension).
    rho, rho_near : (n,) float64 out: each particle's densities when it was relaxed.
    wall_dx : (n,3) float64, accumulated: the displacement the colliders gave each particle
        (the colliders receive it equal and opposite: ``walls.Walls.received``).
    """
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
            # The images of the neighbours (and self) in up to 3 walls, 7 subsets each (boundary.mirror).
            iu = np.empty((7, 7 * (width + 1)))
            ij = np.empty((2, 7 * (width + 1)), np.int64)
            for t in range(colour_units[c, u], colour_units[c, u + 1]):
                lo = bucket_start[colour_buckets[t]]
                hi = bucket_start[colour_buckets[t] + 1]
                # One loop per direction: a loop whose index is chosen by the direction inside it ran the
                # forward sweeps 9 % slower (1.44-1.51 against 1.32-1.37 ms a pass, the same particles).
                if backward:
                    for i in range(hi - 1, lo - 1, -1):
                        if colour[i] == c:
                            _relax_one(i, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, x_ref, wall_rho,
                                       wall_rho_near, wall_g, wall_g_near, planes, plane_of, mass, held, held_dx, rho,
                                       rho_near, wall_dx, h, ux, uy, uz, w, iu, ij)
                else:
                    for i in range(lo, hi):
                        if colour[i] == c:
                            _relax_one(i, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, x_ref, wall_rho,
                                       wall_rho_near, wall_g, wall_g_near, planes, plane_of, mass, held, held_dx, rho,
                                       rho_near, wall_dx, h, ux, uy, uz, w, iu, ij)


@njit(**config.NJIT_INLINE)
def _relax_one(i, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, x_ref, wall_rho, wall_rho_near, wall_g,
               wall_g_near, planes, plane_of, mass, held, held_dx, rho, rho_near, wall_dx, h, ux, uy, uz, w, iu, ij):
    """Relax particle i (the body of :func:`double_density_relaxation`'s sweeps). Under 31 arguments: CPython
    3.11 compiles a longer call into one numba cannot inline."""
    inv_h = 1.0 / h
    cap = PAIR_CAP * h
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
    k = planes_near(i, plane_of)
    mi = 0
    if k:
        md, mdn, mi = image_densities(i, xi, yi, zi, x, nbr, nk, planes, plane_of, k, inv_h, ux, uy, uz,
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
        mx, my, mz = push_images(i, p, pn, x, planes, plane_of, k, cap, wall_dx, mi, iu, ij, mat, held)
    if mass.shape[0]:
        sx, sy, sz = _push_neighbours_by_mass(i, p, pn, x, nbr, nk, ux, uy, uz, w, cap, mat, mass, held, held_dx)
    else:
        sx, sy, sz = _push_neighbours(i, p, pn, x, nbr, nk, ux, uy, uz, w, cap)
    wx, wy, wz = _wall_push(i, p, pn, wall_g, wall_g_near, wall_dx)
    x[i, 0] = xi + sx + wx + mx
    x[i, 1] = yi + sy + wy + my
    x[i, 2] = zi + sz + wz + mz


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
    # Two partial sums per density (weight_sums): passes 15.7 -> 13.0 ms a substep on the bench's dam
    # break with these and the two sums of _push_neighbours.
    return weight_sums(w, nk)


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


@njit(**config.NJIT_INLINE)
def _push_neighbours_by_mass(i, p, pn, x, nbr, nk, ux, uy, uz, w, cap, mat, mass, held, held_dx):
    """:func:`_push_neighbours` with the impulse of i's pressure on each pair, m_i D_ij: i takes its whole
    share, j m_i / m_j of it (into ``held_dx`` for a held j, which stays where it is). Sharing D_ij by mass
    instead (i 2 m_j / (m_i + m_j), j 2 m_i / (m_i + m_j)) gives a particle of density ρ_j among the liquid's
    2 ρ_j / (ρ_i + ρ_j) of the push the liquid gives its own: a body that does not push back floats too low."""
    sx = 0.0
    sy = 0.0
    sz = 0.0
    mi = mass[mat[i]]
    for kk in range(nk):
        a = w[kk]
        if a == 0.0:
            continue
        j = nbr[i, kk]
        mj = mass[mat[j]]
        fi = min((p + pn * a) * a, cap)
        fj = fi * mi / mj
        if held[mat[j]]:
            held_dx[j, 0] += fj * ux[kk]
            held_dx[j, 1] += fj * uy[kk]
            held_dx[j, 2] += fj * uz[kk]
        else:
            x[j, 0] += fj * ux[kk]
            x[j, 1] += fj * uy[kk]
            x[j, 2] += fj * uz[kk]
        sx -= fi * ux[kk]
        sy -= fi * uy[kk]
        sz -= fi * uz[kk]
    return sx, sy, sz


@njit(**config.NJIT)
def compression_sums(rho, mat, rho0, owned, sums, counts, tops):
    """Per material m with owned[m]: the sum and number of its particles' positive compressions
    ρ/ρ0[m] - 1, and the largest (0 if none), into sums, counts and tops (per material; zeroed here).
    One loop over the particles: the same figures from numpy masks cost 0.1 ms a pass on the dam break.

    rho : (n,) densities the pass measured; mat : (n,) uint8; rho0 : per-material rest density;
    owned : per-material bool, the materials this model relaxes.
    """
    sums[:] = 0.0
    counts[:] = 0
    tops[:] = 0.0
    if rho0.shape[0] == 1 and owned[0]:
        # One material (most scenes): sums in registers and the sign test as a select, the same
        # figures in the same order (70 -> 23 us a pass on the dam break's 24,000 particles).
        r0 = rho0[0]
        s = 0.0
        k = 0
        top = 0.0
        for i in range(rho.shape[0]):
            e = rho[i] / r0 - 1.0
            positive = e > 0.0
            s += e if positive else 0.0
            k += positive
            top = e if e > top else top
        sums[0] = s
        counts[0] = k
        tops[0] = top
        return
    for i in range(rho.shape[0]):
        m = mat[i]
        if not owned[m]:
            continue
        e = rho[i] / rho0[m] - 1.0
        if e > 0.0:
            sums[m] += e
            counts[m] += 1
            if e > tops[m]:
                tops[m] = e
