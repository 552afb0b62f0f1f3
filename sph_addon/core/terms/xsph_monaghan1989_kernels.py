"""XSPH velocity smoothing (Monaghan 1989, "On the problem of penetration in particle methods",
J. Comput. Phys. 82; as position-based fluids use it, Macklin & Müller 2013): a numba kernel.

Not one of the project's papers' equations (../shared/papers/): the viscoelastic model applies it
in its velocity stage to damp particle-scale noise (``viscoelastic_clavet2005.XSPH``).
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange

# Particles per parallel iteration of smooth_velocities (each allocates its rows' weights once).
XSPH_BLOCK = 64


@njit(**config.NJIT_PARALLEL)
def smooth_velocities(x, v, nbr, count, mat, coef, mass, h, rho0, dv):
    """XSPH velocity smoothing (Monaghan 1989; as in Macklin & Müller 2013), Jacobi form.

    v_i += c Σ_j (2 m_j / (m_i + m_j)) (v_j - v_i) (1-q)² / ρ0, c the pair's mean per-material
    coefficient: each particle moves a share c of the way towards its neighbours' mean velocity,
    so particle-scale noise decays within a few substeps while flows longer than h
    are untouched (the numerical viscosity ~ c h²/Δt vanishes as the spacing falls).
    The factor 2 m_j / (m_i + m_j) is Monaghan's m_j / ρ̄_ij over the particle volume (one spacing
    cubed for every material): m_i Δv_i = -m_j Δv_j for every pair, so momentum is conserved between
    materials of different densities (a liquid beside a solid) too; between equal masses it is 1.

    Parameters
    ----------
    x, v : (n,3) positions (m) and velocities (m/s); ``v`` is mutated.
    nbr, count : neighbour rows. mat : (n,) uint8; coef : per-material c (dimensionless).
    mass : per-material particle mass (any unit, one for every material present in a one-density world).
    h : interaction radius, m; rho0 : lattice density Σ (1-q)². dv : (n,3) scratch.
    """
    n = x.shape[0]
    inv_h = 1.0 / h
    inv_rho0 = 1.0 / rho0
    width = nbr.shape[1]
    # One coefficient and one mass for every material (most scenes): the pairs' means need no material
    # lookups, 0.5 (c + c) = c and 2 m / (m + m) = 1 exactly (1.15-1.20 -> 0.82-0.85 ms on the bench's dam
    # break, with the loops below).
    uniform = np.all(coef == coef[0]) and np.all(mass == mass[0])
    for b in prange((n + XSPH_BLOCK - 1) // XSPH_BLOCK):
        w = np.empty(width)
        for i in range(b * XSPH_BLOCK, min(n, (b + 1) * XSPH_BLOCK)):
            ci = coef[mat[i]]
            nk = count[i]
            xi = x[i, 0]
            yi = x[i, 1]
            zi = x[i, 2]
            # Squared distances first, then the weights in a loop the compiler vectorises; a pair
            # beyond h or without smoothing weighs 0, which leaves the sums as skipping it did.
            for kk in range(nk):
                j = nbr[i, kk]
                ex = x[j, 0] - xi
                ey = x[j, 1] - yi
                ez = x[j, 2] - zi
                w[kk] = ex * ex + ey * ey + ez * ez
            if uniform:
                for kk in range(nk):
                    a = 1.0 - math.sqrt(w[kk]) * inv_h
                    w[kk] = ci * a * a * inv_rho0 if a > 0.0 else 0.0  # ci = 0 weighs 0 too
            else:
                mi = mass[mat[i]]
                for kk in range(nk):
                    a = 1.0 - math.sqrt(w[kk]) * inv_h
                    mj = mass[mat[nbr[i, kk]]]
                    c = 0.5 * (ci + coef[mat[nbr[i, kk]]]) * (2.0 * mj / (mi + mj))
                    w[kk] = c * a * a * inv_rho0 if (a > 0.0 and c != 0.0) else 0.0
            sx = 0.0
            sy = 0.0
            sz = 0.0
            vx = v[i, 0]
            vy = v[i, 1]
            vz = v[i, 2]
            for kk in range(nk):
                j = nbr[i, kk]
                sx += w[kk] * (v[j, 0] - vx)
                sy += w[kk] * (v[j, 1] - vy)
                sz += w[kk] * (v[j, 2] - vz)
            dv[i, 0] = sx
            dv[i, 1] = sy
            dv[i, 2] = sz
    for i in prange(n):
        v[i, 0] += dv[i, 0]
        v[i, 1] += dv[i, 1]
        v[i, 2] += dv[i, 2]
