"""Numba kernel of the strain rate |γ̇| the yield-stress viscosity is a function of
(``yield_papanastasiou1987``)."""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.pair_kernels import pair_direction


@njit(**config.NJIT_PARALLEL)
def strain_rates(x, v, nbr, count, inv_h, gradient_k, out):
    """out[i] = |γ̇| = sqrt(2 D:D), D the symmetric part of the velocity gradient at particle i, 1/s.

    ∂v_a/∂x_b ≈ G Σ_j (1-q) (v_j - v_i)_a r̂_b, G = 3 / Σ_o (1-q)|o| over the lattice
    (``lattice.gradient_lattice_constant``), exact for a linear field on the lattice.
    """
    n = x.shape[0]
    for i in prange(n):
        g = np.zeros((3, 3))
        for kk in range(count[i]):
            j = nbr[i, kk]
            a, ex, ey, ez = pair_direction(x, i, j, inv_h)
            if a == 0.0:
                continue
            e = (ex, ey, ez)
            for c in range(3):
                dv = a * (v[j, c] - v[i, c])
                for d in range(3):
                    g[c, d] += dv * e[d]
        s2 = 0.0
        for c in range(3):
            for d in range(3):
                sym = 0.5 * (g[c, d] + g[d, c])
                s2 += sym * sym
        out[i] = gradient_k * math.sqrt(2.0 * s2)
