"""Numba kernels of the viscoelastic model (Clavet 2005; see viscoelastic_clavet2005 for the model).

Reference: S. Clavet, *Animation de fluides viscoélastiques à base de
particules*, M.Sc. thesis, Université de Montréal, 2005: viscosity impulses
(Algorithm 4), spring creation and plasticity (Algorithm 5, eqs. 5.1-5.2; dynamic
springs from the SCA 2005 paper, mould springs as in thesis fig. 5.3) and
double density relaxation (Algorithm 3, eqs. 4.1-4.6).

Conventions and deviations, each for a stated reason:

* **Whole pair terms.** Like the thesis (not the SCA paper, which splits each
  pair term half and half), a pair's displacement or impulse is applied whole,
  so stiffness values match the thesis' scale.
* **Sequential, in parallel.** Relaxation and viscosity are Gauss-Seidel as in
  the thesis: each particle (or pair) acts on the positions (velocities) left
  by the ones before it, which is what lets the method take long steps (thesis
  section 3.3). The visiting order is by supercell colour (neighbors.py):
  supercells of one colour have disjoint neighbourhoods and run in parallel,
  each one's particles in order. The result is deterministic and independent
  of the thread count; each term is applied equal and opposite, so momentum is
  conserved to round-off (tested).
* **Springs** are stored per particle, in both endpoints' rows, keyed by the
  partner's stable id, and their rest lengths updated in Jacobi form (each row
  from the same positions); both copies evolve from identical inputs and stay
  equal. Their forces are not Algorithm 5's explicit displacements but a
  backward-Euler solve with the viscosity (``implicit_viscosity_kernels``).
* **Coincident particles** (r = 0) are left out of every pair term: their
  direction r̂_ij is undefined (the thesis counts them in ρ with q = 0).
* **Kernel forms written out.** The pair weights (1-q)² and (1-q)³ are the
  ``clavet_density``/``clavet_near`` entries of ``core.kernels`` without their
  normalisation; they are written out here rather than called from there
  because numba's disk cache of these kernels is invalidated only by edits to
  this file, never to a module they call (tests/core/test_naive_reference.py
  pins this arithmetic to the slow references).
* **Materials.** Springs only join particles of the same material. Pair terms
  between materials use the acting particle's pressure (eq. 4.2 with its own k,
  ρ0) and the mean of the two β.
* **Viscosity.** Algorithm 4's linear term σ (1/s, tuned per resolution) is
  replaced by a kinematic viscosity ν solved implicitly
  (``implicit_viscosity_kernels``); only the quadratic term β stays here.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .. import config


@njit(**config.NJIT_PARALLEL)
def viscosity_impulses(x, v, nbr, count, mat, beta, h, dt, bucket_start, colour, colour_buckets, colour_units):
    """Quadratic viscosity impulses, Clavet Algorithm 4 with σ = 0, pair after pair (Gauss-Seidel).

    The linear term σ of Algorithm 4 is replaced by the implicit viscosity
    (``implicit_viscosity_kernels``); what is left is β, which keeps fast
    approaching particles from passing through each other. Each pair is
    visited once, from its lower-index particle; the impulse I = Δt (1-q) β u²
    r̂_ij is applied at once (v_i -= I, v_j += I), so later pairs see the updated
    velocities as in the thesis. Deviation: I is capped at u/2, the impulse that
    exactly stops the pair's approach, so a large β cannot reverse it.

    Parameters
    ----------
    x, v : (n,3) float64 positions (m) and velocities (m/s); ``v`` is mutated.
    nbr, count : neighbour rows (n,K) int32 and lengths (n,) int32.
    mat : (n,) uint8; beta (1/m) : per-material array (a pair uses the mean).
    h : interaction radius, m; dt : step, s.
    bucket_start, colour, colour_buckets, colour_units : from ``NeighborSearch.sort`` (race-free
    colouring and its balanced units, see neighbors.py); passed in, not read from that module, so this
    disk-cached kernel never holds a stale constant.
    """
    inv_h = 1.0 / h
    for c in range(colour_units.shape[0]):
        for u in prange(colour_units.shape[1] - 1):
            for t in range(colour_units[c, u], colour_units[c, u + 1]):
                b = colour_buckets[t]
                _viscosity_bucket(x, v, nbr, count, mat, beta, inv_h, dt, bucket_start[b], bucket_start[b + 1],
                                  colour, c)


@njit(**config.NJIT)
def _viscosity_bucket(x, v, nbr, count, mat, beta, inv_h, dt, lo, hi, colour, c):
    """:func:`viscosity_impulses` for the particles of colour c in one bucket, lo to hi."""
    for i in range(lo, hi):
        if colour[i] != c:
            continue
        for kk in range(count[i]):
            j = nbr[i, kk]
            if j < i:
                continue
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            q = r * inv_h
            if q >= 1.0 or r == 0.0:
                continue
            ex /= r
            ey /= r
            ez /= r
            u = (v[i, 0] - v[j, 0]) * ex + (v[i, 1] - v[j, 1]) * ey + (v[i, 2] - v[j, 2]) * ez
            if u <= 0.0:
                continue
            bb = 0.5 * (beta[mat[i]] + beta[mat[j]])
            imp = min(dt * (1.0 - q) * bb * u * u, 0.5 * u)
            v[i, 0] -= imp * ex
            v[i, 1] -= imp * ey
            v[i, 2] -= imp * ez
            v[j, 0] += imp * ex
            v[j, 1] += imp * ey
            v[j, 2] += imp * ez


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
                              backward, rho, rho_near, wall_dx):
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
    backward : visit the colours, and each supercell's particles, in reverse order (symmetric
        Gauss-Seidel when passes alternate: a one-way sweep drifts a resting drop along the
        sweep, measured as a steady elongation of a zero-gravity drop under surface tension).
    rho, rho_near : (n,) float64 out: each particle's densities when it was relaxed.
    wall_dx : (n,3) float64, accumulated: the displacement the colliders gave each particle
        (the colliders receive it equal and opposite: ``walls.Walls.received``).
    """
    inv_h = 1.0 / h
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
            for t in range(colour_units[c, u], colour_units[c, u + 1]):
                lo = bucket_start[colour_buckets[t]]
                hi = bucket_start[colour_buckets[t] + 1]
                # One loop per direction: a loop whose index is chosen by the direction inside it ran the
                # forward sweeps 9 % slower (1.44-1.51 against 1.32-1.37 ms a pass, the same particles).
                if backward:
                    for i in range(hi - 1, lo - 1, -1):
                        _relax_one(i, c, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, colour, x_ref, wall_rho,
                                   wall_rho_near, wall_g, wall_g_near, rho, rho_near, wall_dx, inv_h, ux, uy, uz, w)
                else:
                    for i in range(lo, hi):
                        _relax_one(i, c, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, colour, x_ref, wall_rho,
                                   wall_rho_near, wall_g, wall_g_near, rho, rho_near, wall_dx, inv_h, ux, uy, uz, w)


@njit(**config.NJIT_INLINE)
def _relax_one(i, c, x, nbr, count, mat, gain, gain_near, rho0, rho0_near, colour, x_ref, wall_rho, wall_rho_near,
               wall_g, wall_g_near, rho, rho_near, wall_dx, inv_h, ux, uy, uz, w):
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
    rho[i] = d
    rho_near[i] = dn
    m = mat[i]
    p = gain[m] * max(d - rho0[m], 0.0)
    pn = gain_near[m] * max(dn - rho0_near[m], 0.0)
    if p == 0.0 and pn == 0.0:
        return
    sx, sy, sz = _push_neighbours(i, p, pn, x, nbr, nk, ux, uy, uz, w)
    wx, wy, wz = _wall_push(i, p, pn, wall_g, wall_g_near, wall_dx)
    x[i, 0] = xi + sx + wx
    x[i, 1] = yi + sy + wy
    x[i, 2] = zi + sz + wz


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
    # Two partial sums per density: a single chain waits on each addition (passes 15.7 -> 13.0 ms a
    # substep on the bench's dam break with this and the two sums of _push_neighbours).
    d0 = 0.0
    d1 = 0.0
    dn0 = 0.0
    dn1 = 0.0
    for k in range(nk // 2):
        a0 = w[2 * k]
        a1 = w[2 * k + 1]
        d0 += a0 * a0
        d1 += a1 * a1
        dn0 += a0 * a0 * a0
        dn1 += a1 * a1 * a1
    if nk % 2:
        a0 = w[nk - 1]
        d0 += a0 * a0
        dn0 += a0 * a0 * a0
    return d0 + d1, dn0 + dn1


@njit(**config.NJIT_INLINE)
def _push_neighbours(i, p, pn, x, nbr, nk, ux, uy, uz, w):
    """Move each neighbour j of i by D_ij = (P Δt² (1-q) + P^near Δt² (1-q)²) r̂_ij (eq. 4.6) and
    return the sum of -D_ij, i's own move (in two partial sums, as in _pair_weights)."""
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
        mag = (p + pn * a) * a
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


@njit(**config.NJIT_PARALLEL)
def add_springs(x, ids, mat, source, bonded, nbr, count, dynamic, mould, h, partner, rest, used_out):
    """Create springs (SCA 2005 Algorithm 5 preamble; thesis fig. 5.3 for moulds).

    Dynamic materials: every same-material neighbour pair with q < 1 and no spring
    gets one with its current distance as rest length, so it is stress-free when made
    and its elasticity is set by E alone (SCA 2005 gives it rest length h, which
    exerts nothing until plasticity has shortened it: an elasticity that depended on
    the history). Mould materials: particles not yet bonded get springs to
    same-material, same-source, not-yet-bonded neighbours with their current
    distance as rest length (then ``bonded`` is set by the caller).

    Parameters
    ----------
    x : (n,3) positions, m. ids : (n,) int64 stable ids. mat : (n,) uint8.
    source : (n,) int16. bonded : (n,) uint8.
    dynamic, mould : per-material uint8 flags of the spring mode (neither: no springs).
    partner : (n,S) int64, mutated: partner ids, -1 for a free slot.
    rest : (n,S) float64, mutated: rest lengths L, m.

    used_out : (n,) int64, mutated: slots each row needed. Where that exceeds S the
    caller grows S and calls again; rows are completed on the second call because
    existing springs are skipped.
    """
    n = x.shape[0]
    width = partner.shape[1]
    inv_h = 1.0 / h
    for i in prange(n):
        mi = mat[i]
        is_dynamic = dynamic[mi] != 0
        is_mould = mould[mi] != 0
        used = 0
        for s in range(width):
            if partner[i, s] >= 0:
                used += 1
        if not (is_dynamic or is_mould) or (is_mould and bonded[i] != 0):
            used_out[i] = used
            continue
        for kk in range(count[i]):
            j = nbr[i, kk]
            if mat[j] != mi:
                continue
            if is_mould and (bonded[j] != 0 or source[j] != source[i]):
                continue
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            if r * inv_h >= 1.0:
                continue
            pid = ids[j]
            exists = False
            free = -1
            for s in range(width):
                p = partner[i, s]
                if p == pid:
                    exists = True
                    break
                if p < 0 and free < 0:
                    free = s
            if exists:
                continue
            used += 1
            if free >= 0:
                partner[i, free] = pid
                rest[i, free] = r
        used_out[i] = used


@njit(**config.NJIT_PARALLEL)
def spring_plasticity(x, mat, index_of_id, partner, rest, alpha, gamma, relax, h, dt):
    """Maxwell relaxation, spring plasticity (Clavet eq. 5.2) and spring removal, on the predicted positions.

    Maxwell relaxation first: L += (r - L) c with c = 1 - exp(-Δt/τ) (``relax``). A spring is then
    a spring in series with a dashpot: held at a fixed length r, its extension r - L, hence its
    force, decays exactly as exp(-t/τ) whatever the substep; with the network's shear modulus
    G = E/3 its dashpot is a viscosity η = G τ. Then Clavet's plasticity on top: rest lengths
    change by ΔL = Δt α sign(r-L) max(0, |r-L| - γL); springs whose
    partner is gone or whose L reaches h are removed (SCA 2005), since the factor
    (1 - L/h) of Algorithm 5 would otherwise reverse the force. Deviation from
    Algorithm 5: the springs' displacements are not applied here; their forces are
    solved implicitly with the velocities (``implicit_viscosity_kernels.spring_terms``),
    so the substep no longer depends on k_spring.

    Parameters
    ----------
    x : (n,3) predicted positions, m (read).
    index_of_id : (max_id+1,) int64 current index of each id, -1 if gone.
    partner, rest : (n,S) spring rows; mutated (plasticity, removal).
    alpha (1/s), gamma : per-material arrays.
    relax : per-material share 1 - exp(-Δt/τ) of (r - L) removed this substep (0: no relaxation).
    """
    n = x.shape[0]
    width = partner.shape[1]
    for i in prange(n):
        mi = mat[i]
        al = alpha[mi]
        ga = gamma[mi]
        c = relax[mi]
        for s in range(width):
            pid = partner[i, s]
            if pid < 0:
                continue
            j = index_of_id[pid] if pid < index_of_id.shape[0] else -1
            if j < 0:
                partner[i, s] = -1
                continue
            L = rest[i, s]
            if al > 0.0 or c > 0.0:
                ex = x[j, 0] - x[i, 0]
                ey = x[j, 1] - x[i, 1]
                ez = x[j, 2] - x[i, 2]
                r = math.sqrt(ex * ex + ey * ey + ez * ez)
                if c > 0.0:
                    L += (r - L) * c
                    rest[i, s] = L
                dev = r - L
                excess = abs(dev) - ga * L
                if excess > 0.0:
                    L += dt * al * excess * (1.0 if dev > 0.0 else -1.0)
                    rest[i, s] = L
            if L >= h:
                partner[i, s] = -1
