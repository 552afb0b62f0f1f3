"""A helper of the term ``elasticity_becker2009``: the corrected kernel gradient of Becker et al. 2009.

The corrected kernel gradient of the corotated SPH solid (Becker et al. 2009, eq. 14-15): each particle's
weights g_ij = ω(|d_ij|) C_i p(d_ij) of its rest partners, C_i from a weighted least-squares fit of its
neighbourhood that is quadratic where the neighbourhood spans it (``elasticity_becker2009_kernels``'
docstring says why and what it changed)."""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit
from ..numerics.kernels import cubic_spline_shape

# A Cholesky pivot under this share of its diagonal entry: the quadratic fit is not determined there. A
# lattice's pivots stay above 0.03 at support factors 1.2-5 but for the few just over 2 (3.5e-4 at 2.02:
# neighbours two spacings out enter with weights near zero). A liquid that froze can leave pivots of 1e-5,
# whose monomials' coefficients made gradient weights 10^4 times a lattice's (a lava crust's edge) and
# its solve stop short of the tolerance.
FIT_TOLERANCE = 1e-3


@njit(**config.NJIT)
def rest_partner(rest, partner, index_of_id, i, kk):
    """Particle i's kk-th rest partner: (its index j, the rest offset d_ij = x⁰_j - x⁰_i); j = -1 past
    the row's last partner, -2 for a partner no longer in the world (an outflow took it)."""
    pid = partner[i, kk]
    if pid < 0:
        return -1, 0.0, 0.0, 0.0
    j = index_of_id[pid]
    if j < 0:
        return -2, 0.0, 0.0, 0.0
    return j, rest[j, 0] - rest[i, 0], rest[j, 1] - rest[i, 1], rest[j, 2] - rest[i, 2]


@njit(**config.NJIT)
def grad_weight(r, h):
    """ω(r) = -W'(r)/r of the cubic spline with support h (q ≤ 1), up to its constant factor 6 k / h²."""
    q = r / h
    if q <= 0.5:
        return 2.0 - 3.0 * q
    if q < 1.0:
        return (1.0 - q) * (1.0 - q) / q
    return 0.0


@njit(**config.NJIT)
def kernel_weight(r, h):
    """The cubic spline W(r) with support h, up to its constant factor (the hourglass weights): its shape
    ``numerics.kernels.cubic_spline_shape``, 0 from h on."""
    q = r / h
    if q < 1.0:
        return cubic_spline_shape(q)
    return 0.0


@njit(**config.NJIT)
def _basis(dx, dy, dz, inv_h):
    """The fit's basis at a rest offset d: d, then its quadratic monomials over h (same scale as d)."""
    return (dx, dy, dz, dx * dx * inv_h, dy * dy * inv_h, dz * dz * inv_h, dx * dy * inv_h, dy * dz * inv_h,
            dx * dz * inv_h)


@njit(**config.NJIT)
def gradient_weight(corr, i, dx, dy, dz, h):
    """g_ij = ω(|d|) C_i p(d): particle i's gradient weight of the partner at rest offset d (``corr[i]``: C_i,
    3x9 row-major; the linear correction L_i in its first three columns when the fit is linear)."""
    om = grad_weight(math.sqrt(dx * dx + dy * dy + dz * dz), h)
    p = _basis(dx, dy, dz, 1.0 / h)
    gx = 0.0
    gy = 0.0
    gz = 0.0
    for c in range(9):
        gx += corr[i, c] * p[c]
        gy += corr[i, 9 + c] * p[c]
        gz += corr[i, 18 + c] * p[c]
    return om * gx, om * gy, om * gz


@njit(**config.NJIT)
def quadratic_fit(i, rest, partner, index_of_id, h, corr):
    """C_i = the first three rows of (Σ_j ω p pᵀ)⁻¹, p = ``_basis`` of the rest offsets, into ``corr[i]``.

    The quadratic monomials the neighbourhood does not determine are left out of the fit (a beam three
    particles across has two values of y at its edge, where y² = y: its curvature along y is not there
    to fit, while its curvature along the beam is): Cholesky on the basis in order, a pivot under
    ``FIT_TOLERANCE`` of its diagonal entry drops that monomial. False (``corr[i]`` untouched) when a
    linear one would be dropped (a sheet, a rod: the linear correction with its null space does those).
    """
    m = np.zeros((9, 9))
    inv_h = 1.0 / h
    for kk in range(partner.shape[1]):
        j, dx, dy, dz = rest_partner(rest, partner, index_of_id, i, kk)
        if j == -1:
            break
        if j < 0:
            continue
        om = grad_weight(math.sqrt(dx * dx + dy * dy + dz * dz), h)
        p = _basis(dx, dy, dz, inv_h)
        for r in range(9):
            for c in range(9):
                m[r, c] += om * p[r] * p[c]
    kept = np.zeros(9, np.int64)  # the monomials in the fit, in order
    nk = 0
    low = np.zeros((9, 9))  # Cholesky factor of the kept rows and columns, indexed by position in ``kept``
    for c in range(9):
        row = np.zeros(9)
        for a in range(nk):
            t = m[c, kept[a]]
            for b in range(a):
                t -= row[b] * low[a, b]
            row[a] = t / low[a, a]
        d = m[c, c]
        for b in range(nk):
            d -= row[b] * row[b]
        if d <= FIT_TOLERANCE * m[c, c] or d <= 0.0:
            if c < 3:
                return False
            continue
        for b in range(nk):
            low[nk, b] = row[b]
        low[nk, nk] = math.sqrt(d)
        kept[nk] = c
        nk += 1
    for out_row in range(3):  # solve M x = e_row on the kept monomials (the linear ones are kept[0..2])
        x = np.zeros(9)
        for r in range(nk):
            t = 1.0 if r == out_row else 0.0
            for b in range(r):
                t -= low[r, b] * x[b]
            x[r] = t / low[r, r]
        for r in range(nk - 1, -1, -1):
            t = x[r]
            for b in range(r + 1, nk):
                t -= low[b, r] * x[b]
            x[r] = t / low[r, r]
        for c in range(9):
            corr[i, 9 * out_row + c] = 0.0
        for r in range(nk):
            corr[i, 9 * out_row + kept[r]] = x[r]
    return True
