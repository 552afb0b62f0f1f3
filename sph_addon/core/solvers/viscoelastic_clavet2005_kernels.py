"""Numba kernels of the viscoelastic model (Clavet 2005; see viscoelastic_clavet2005 for the model).

Reference: S. Clavet, *Animation de fluides viscoélastiques à base de
particules*, M.Sc. thesis, Université de Montréal, 2005: viscosity impulses
(Algorithm 4), spring creation and plasticity (Algorithm 5, eqs. 5.1-5.2; dynamic
springs from the SCA 2005 paper, mould springs as in thesis fig. 5.3); the density
relaxation (Algorithm 3) is in ``density_relaxation_kernels``.

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
* **Kernel forms written out** (as in ``density_relaxation_kernels``): numba's disk cache of these
  kernels is invalidated only by edits to this file, never to a module they call
  (tests/core/test_naive_reference.py pins this arithmetic to the slow references).
* **Materials.** Springs only join particles of the same material. Pair terms
  between materials use the acting particle's pressure (eq. 4.2 with its own k,
  ρ0) and the mean of the two β.
* **Viscosity.** Algorithm 4's linear term σ (1/s, tuned per resolution) is
  replaced by a kinematic viscosity ν solved implicitly
  (``implicit_viscosity_kernels``); only the quadratic term β stays here.
"""

from __future__ import annotations

import math

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
