"""Numba kernel of Clavet's quadratic pair viscosity (thesis Algorithm 4, the β term), swept by
supercell colour as the relaxation is (``relaxation_clavet2005_kernels``): sequential impulses in
parallel, deterministic and independent of the thread count, each applied equal and opposite.

The linear term σ of Algorithm 4 is replaced by a kinematic viscosity solved implicitly
(``viscosity_weiler2018``); only β stays here. Pair terms between materials take the mean of the
two β. Coincident particles (r = 0) are left out: their direction is undefined.
"""

from __future__ import annotations

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.pair_kernels import pair_offset


@njit(**config.NJIT_PARALLEL)
def viscosity_impulses(x, v, nbr, count, mat, beta, h, dt, bucket_start, colour, colour_buckets, colour_units):
    """Quadratic viscosity impulses, Clavet Algorithm 4 with σ = 0, pair after pair (Gauss-Seidel).

    The linear term σ of Algorithm 4 is replaced by the implicit viscosity
    (``viscosity_weiler2018_kernels``); what is left is β, which keeps fast
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
            ex, ey, ez, r = pair_offset(x, i, j)
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
