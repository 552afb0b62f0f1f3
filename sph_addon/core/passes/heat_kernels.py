"""Numba kernels of heat conduction (``heat``): the SPH Laplacian of Cleary & Monaghan 1999 between
particles, and the walls held at a temperature.

Each row touches only its own particle, so the results are the same at any thread count.
"""

from __future__ import annotations

import math

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.kernels import cubic_spline_dw


@njit(**config.NJIT_PARALLEL)
def moments(x, mat, nbr, count, k_mat, volume, h, ghost_conducting, ghost_any, conducting, present):
    """Each particle's neighbourhood moment Σ_j V 2 r_ij |W'(r_ij)| (the trace of the pair sum's second
    moment, 6 for a full neighbourhood in the continuum), over its conducting neighbours plus
    ``ghost_conducting`` into ``conducting``, and over all its neighbours plus ``ghost_any`` into
    ``present`` (the ghosts: what held surfaces, and any collider, stand for)."""
    for i in prange(x.shape[0]):
        c = ghost_conducting[i]
        a = ghost_any[i]
        for kk in range(count[i]):
            j = nbr[i, kk]
            r = math.sqrt((x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2)
            if r >= h or r == 0.0:
                continue
            w = 2.0 * volume * r * (-cubic_spline_dw(r, h))
            a += w
            if k_mat[mat[j]] > 0.0:
                c += w
        conducting[i] = c
        present[i] = a


@njit(**config.NJIT_PARALLEL)
def conduction_rates(x, temp, mat, nbr, count, k_mat, volume, h, norm, wall_gain, wall_temp, air_gain, ambient,
                     rate, diag):
    """Heat gained per volume and time by each particle, W/m³, and the rate's diagonal, W/(m³ K).

    rate_i = Σ_j V 2 k_ij (C_i + C_j)/2 (T_j - T_i) |W'(r_ij)| / r_ij + wall_gain_i (wall_temp_i - T_i)
    + air_gain_i (ambient - T_i), with k_ij = 2 k_i k_j / (k_i + k_j) (Cleary & Monaghan 1999, eq. 9 for
    equal volumes V) and C = ``norm`` each particle's neighbourhood normalisation (``heat.Heat``): the
    pair terms stay antisymmetric, so the heat Σ V ρ c T they exchange sums to zero. ``wall_gain`` and
    ``air_gain`` (W/(m³ K)): the held surfaces' and the air's shares; ``diag`` = what multiplies -T_i,
    the bound of a stable explicit step.

    Parameters
    ----------
    x : (n,3) m; temp : (n,) °C; mat : (n,) uint8; nbr, count : neighbour rows.
    k_mat : (n_materials,) W/(m K); volume : V, m³; h : support, m; norm : (n,).
    wall_gain : (n,) W/(m³ K); wall_temp : (n,) °C (where wall_gain > 0); air_gain : (n,) W/(m³ K);
    ambient : °C. rate, diag : (n,) outputs.
    """
    for i in prange(x.shape[0]):
        ki = k_mat[mat[i]]
        s = 0.0
        d = 0.0
        if ki > 0.0:
            for kk in range(count[i]):
                j = nbr[i, kk]
                kj = k_mat[mat[j]]
                if kj <= 0.0:
                    continue
                r = math.sqrt((x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2)
                if r >= h or r == 0.0:
                    continue
                w = volume * (2.0 * ki * kj / (ki + kj)) * (norm[i] + norm[j]) * (-cubic_spline_dw(r, h)) / r
                s += w * (temp[j] - temp[i])
                d += w
        g = wall_gain[i]
        if g > 0.0:
            s += g * (wall_temp[i] - temp[i])
            d += g
        g = air_gain[i]
        if g > 0.0:
            s += g * (ambient - temp[i])
            d += g
        rate[i] = s
        diag[i] = d


@njit(**config.NJIT_PARALLEL)
def add_heat(temp, rate, rho_c, mat, dt):
    """T_i += dt rate_i / (ρ c)_i, °C; ``rho_c`` (n_materials,) J/(m³ K)."""
    for i in prange(temp.shape[0]):
        temp[i] += dt * rate[i] / rho_c[mat[i]]
