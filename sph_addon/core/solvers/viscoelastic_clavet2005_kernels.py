"""Numba kernels of the viscoelastic model (see viscoelastic_clavet2005 for the method notes).

Viscoelastic fluids by prediction-relaxation.

Reference: S. Clavet, *Animation de fluides viscoélastiques à base de
particules*, M.Sc. thesis, Université de Montréal, 2005 (English short form:
Clavet, Beaudoin, Poulin, "Particle-based Viscoelastic Fluid Simulation",
SCA 2005). Implemented here: viscosity impulses (Algorithm 4), springs with
plasticity (Algorithm 5, eqs. 5.1-5.2; dynamic springs from the SCA paper,
springs made once from a mould as in thesis fig. 5.3) and double density
relaxation (Algorithm 3, eqs. 4.1-4.6).

Conventions and deviations, each for a stated reason:

* **Whole pair terms.** Like the thesis (not the SCA paper, which splits each
  pair term half and half), a pair's displacement or impulse is applied whole
  to each particle, so stiffness values match the thesis' scale.
* **Jacobi instead of Gauss-Seidel.** The thesis applies each pair term
  immediately (sequential loops). That cannot run in parallel and depends on
  particle order. Here every stage first computes all pair terms from the same
  positions/velocities and each particle gathers the terms of its own pairs
  (``prange`` over particles, no races). Each pair's two terms are computed from
  bitwise-identical inputs, so they cancel exactly and linear momentum is
  conserved to round-off (tested). The sequential form is self-limiting at high
  viscosity; the Jacobi form is not, so viscosity impulses are scaled per pair
  by ``min(1, 1/2 / max(W_i, W_j))`` where ``W_i`` is the sum of particle
  ``i``'s impulse coefficients: a particle can never lose more than its approach
  velocity, whatever σ and Δt, and the scaling is symmetric so momentum is kept.
* **Rest density relative to the lattice.** ρ0 in eq. 4.2 is given as a ratio to
  the density of the particle lattice the sources create (so it does not
  change meaning when the artist changes the particle spacing or h).
* **Springs are stored per particle**, in both endpoints' rows, keyed by the
  partner's stable id. Both copies evolve from identical inputs, so they stay
  equal and the pair stays symmetric.
* **Materials.** Springs only join particles of the same material. Pair terms
  between materials use each particle's own pressure (eq. 4.2 with its own k,
  ρ0) and the mean of the two viscosities.
"""

from __future__ import annotations

import math

from numba import njit, prange

from .. import config
from .viscoelastic_clavet2005 import SPRINGS_DYNAMIC, SPRINGS_MOULD, SPRINGS_NONE


@njit(**config.NJIT_PARALLEL)
def viscosity_impulses(x, v, nbr, count, mat, sigma, beta, h, dt, weight, dv):
    """Viscosity impulses, Clavet Algorithm 4, in symmetric Jacobi form (see module notes).

    Parameters
    ----------
    x, v : (n,3) float64 positions (m) and velocities (m/s); ``v`` is mutated.
    nbr, count : neighbour rows (n,K) int32 and lengths (n,) int32.
    mat : (n,) uint8 material index; sigma (1/s), beta (1/m) : per-material arrays.
    h : interaction radius, m; dt : step, s.
    weight, dv : (n,) and (n,3) float64 scratch buffers.
    """
    n = x.shape[0]
    inv_h = 1.0 / h
    for i in prange(n):
        w = 0.0
        for k in range(count[i]):
            j = nbr[i, k]
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            q = r * inv_h
            if q >= 1.0 or r == 0.0:
                continue
            u = ((v[i, 0] - v[j, 0]) * ex + (v[i, 1] - v[j, 1]) * ey + (v[i, 2] - v[j, 2]) * ez) / r
            if u > 0.0:
                s = 0.5 * (sigma[mat[i]] + sigma[mat[j]])
                b = 0.5 * (beta[mat[i]] + beta[mat[j]])
                w += dt * (1.0 - q) * (s + b * u)
        weight[i] = w
    for i in prange(n):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for k in range(count[i]):
            j = nbr[i, k]
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            q = r * inv_h
            if q >= 1.0 or r == 0.0:
                continue
            u = ((v[i, 0] - v[j, 0]) * ex + (v[i, 1] - v[j, 1]) * ey + (v[i, 2] - v[j, 2]) * ez) / r
            if u > 0.0:
                s = 0.5 * (sigma[mat[i]] + sigma[mat[j]])
                b = 0.5 * (beta[mat[i]] + beta[mat[j]])
                wmax = max(weight[i], weight[j])
                scale = 1.0 if wmax <= 0.5 else 0.5 / wmax
                mag = scale * dt * (1.0 - q) * (s * u + b * u * u) / r
                ax -= mag * ex
                ay -= mag * ey
                az -= mag * ez
        dv[i, 0] = ax
        dv[i, 1] = ay
        dv[i, 2] = az
    for i in prange(n):
        v[i, 0] += dv[i, 0]
        v[i, 1] += dv[i, 1]
        v[i, 2] += dv[i, 2]


@njit(**config.NJIT_PARALLEL)
def double_density_relaxation(x, nbr, count, mat, k, k_near, rho0, h, dt, rho, rho_near, dx):
    """Double density relaxation, Clavet Algorithm 3 (eqs. 4.1-4.6), symmetric Jacobi form.

    Every pair contributes ``D = Δt² ((P_i + P_j)(1-q) + (P_i^near + P_j^near)(1-q)²) r̂_ij``,
    the sum of the two whole terms the thesis applies when visiting i and then j.

    Parameters
    ----------
    x : (n,3) float64 predicted positions, m; mutated.
    nbr, count : neighbour rows.
    mat : (n,) uint8; k (m/s^2), k_near (m/s^2), rho0 (lattice units) : per-material arrays.
    h : interaction radius, m; dt : step, s.
    rho, rho_near : (n,) float64 out: densities (eqs. 4.1, 4.3) before the displacement.
    dx : (n,3) float64 scratch.
    """
    n = x.shape[0]
    inv_h = 1.0 / h
    for i in prange(n):
        d = 0.0
        dn = 0.0
        for kk in range(count[i]):
            j = nbr[i, kk]
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            q = math.sqrt(ex * ex + ey * ey + ez * ez) * inv_h
            if q < 1.0:
                a = 1.0 - q
                d += a * a
                dn += a * a * a
        rho[i] = d
        rho_near[i] = dn
    dt2 = dt * dt
    for i in prange(n):
        pi = k[mat[i]] * (rho[i] - rho0[mat[i]])
        pni = k_near[mat[i]] * rho_near[i]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for kk in range(count[i]):
            j = nbr[i, kk]
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            q = r * inv_h
            if q >= 1.0 or r == 0.0:
                continue
            pj = k[mat[j]] * (rho[j] - rho0[mat[j]])
            pnj = k_near[mat[j]] * rho_near[j]
            a = 1.0 - q
            mag = dt2 * ((pi + pj) * a + (pni + pnj) * a * a) / r
            sx -= mag * ex
            sy -= mag * ey
            sz -= mag * ez
        dx[i, 0] = sx
        dx[i, 1] = sy
        dx[i, 2] = sz
    for i in prange(n):
        x[i, 0] += dx[i, 0]
        x[i, 1] += dx[i, 1]
        x[i, 2] += dx[i, 2]


@njit(**config.NJIT_PARALLEL)
def add_springs(x, ids, mat, source, bonded, nbr, count, mode, h, partner, rest, used_out):
    """Create springs (SCA 2005 Algorithm 5 preamble; thesis fig. 5.3 for moulds).

    Dynamic materials: every same-material neighbour pair with q < 1 and no spring
    gets one of rest length h. Mould materials: particles not yet bonded get springs
    to same-material, same-source, not-yet-bonded neighbours with their current
    distance as rest length (then ``bonded`` is set by the caller).

    Parameters
    ----------
    x : (n,3) positions, m. ids : (n,) int64 stable ids. mat : (n,) uint8.
    source : (n,) int16. bonded : (n,) uint8. mode : per-material spring mode.
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
        m = mode[mi]
        used = 0
        for s in range(width):
            if partner[i, s] >= 0:
                used += 1
        if m == SPRINGS_NONE or (m == SPRINGS_MOULD and bonded[i] != 0):
            used_out[i] = used
            continue
        for kk in range(count[i]):
            j = nbr[i, kk]
            if mat[j] != mi:
                continue
            if m == SPRINGS_MOULD and (bonded[j] != 0 or source[j] != source[i]):
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
                rest[i, free] = h if m == SPRINGS_DYNAMIC else r
        used_out[i] = used


@njit(**config.NJIT_PARALLEL)
def springs_plasticity_and_displacements(x, mat, index_of_id, partner, rest, k_spring, alpha, gamma,
                                          h, dt, dx):
    """Spring plasticity (Clavet eq. 5.2) then spring displacements (Algorithm 5), Jacobi form.

    Rest lengths change by ΔL = Δt α sign(r-L) max(0, |r-L| - γL); springs whose
    partner is gone or whose L reaches h are removed (SCA 2005), since the factor
    (1 - L/h) of Algorithm 5 would otherwise reverse the force. Each particle then
    moves by -D for every spring, D = Δt² k_spring (1 - L/h)(L - r) r̂_ij.

    Parameters
    ----------
    x : (n,3) predicted positions, m; mutated.
    index_of_id : (max_id+1,) int64 current index of each id, -1 if gone.
    partner, rest : (n,S) spring rows; mutated (plasticity, removal).
    k_spring (1/s^2), alpha (1/s), gamma : per-material arrays.
    dx : (n,3) scratch.
    """
    n = x.shape[0]
    width = partner.shape[1]
    dt2 = dt * dt
    for i in prange(n):
        mi = mat[i]
        ks = k_spring[mi]
        al = alpha[mi]
        ga = gamma[mi]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for s in range(width):
            pid = partner[i, s]
            if pid < 0:
                continue
            j = index_of_id[pid] if pid < index_of_id.shape[0] else -1
            if j < 0:
                partner[i, s] = -1
                continue
            ex = x[j, 0] - x[i, 0]
            ey = x[j, 1] - x[i, 1]
            ez = x[j, 2] - x[i, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            L = rest[i, s]
            if al > 0.0:
                dev = r - L
                excess = abs(dev) - ga * L
                if excess > 0.0:
                    L += dt * al * excess * (1.0 if dev > 0.0 else -1.0)
                    rest[i, s] = L
            if L >= h:
                partner[i, s] = -1
                continue
            if r == 0.0:
                continue
            mag = dt2 * ks * (1.0 - L / h) * (L - r) / r
            sx -= mag * ex
            sy -= mag * ey
            sz -= mag * ez
        dx[i, 0] = sx
        dx[i, 1] = sy
        dx[i, 2] = sz
    for i in prange(n):
        x[i, 0] += dx[i, 0]
        x[i, 1] += dx[i, 1]
        x[i, 2] += dx[i, 2]
