"""Numba kernels of surface tension as the gradient of a colour-field surface energy (draft)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .. import config


@njit(**config.NJIT)
def _wendland_q(q):
    """dw/dq / q and d²w/dq² of the Wendland C2 kernel w(q) = (1-q)⁴ (1+4q), q < 1."""
    a = 1.0 - q
    a3 = a * a * a
    return -20.0 * a3, 20.0 * a * a * (4.0 * q - 1.0)


@njit(**config.NJIT_PARALLEL)
def colour_gradient(x, nbr, count, h, inv_w0, g):
    """g_i = ∇c_i, c_i = Σ_j w(q_ij) / W0 (Wendland C2, W0 its lattice sum), Jacobi. 1/m."""
    n = x.shape[0]
    inv_h = 1.0 / h
    for i in prange(n):
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for kk in range(count[i]):
            j = nbr[i, kk]
            ex = x[i, 0] - x[j, 0]
            ey = x[i, 1] - x[j, 1]
            ez = x[i, 2] - x[j, 2]
            q = math.sqrt(ex * ex + ey * ey + ez * ez) * inv_h
            if q >= 1.0:
                continue
            a = 1.0 - q
            f = -20.0 * a * a * a * inv_h * inv_h  # (dw/dq / q) / h²: ∇w = f x_ij
            sx += f * ex
            sy += f * ey
            sz += f * ez
        g[i, 0] = sx * inv_w0
        g[i, 1] = sy * inv_w0
        g[i, 2] = sz * inv_w0


@njit(**config.NJIT)
def _direction(gx, gy, gz, h, lo, hi):
    """u = φ'(m) ĝ with m = |g| h: φ' ramps from 0 (m <= lo) to 1 (m >= hi)."""
    mm = math.sqrt(gx * gx + gy * gy + gz * gz)
    m = mm * h
    if m <= lo:
        return 0.0, 0.0, 0.0
    d = 1.0 if m >= hi else (m - lo) / (hi - lo)
    d /= mm
    return d * gx, d * gy, d * gz


@njit(**config.NJIT_PARALLEL)
def surface_energy_impulses(x, v, g, nbr, count, mat, coef, h, lo, hi, dt):
    """v_i -= Δt c Σ_j H_ij (u_i - u_j): minus the gradient of E = Σ_k φ(|g_k| h), Jacobi."""
    n = x.shape[0]
    inv_h = 1.0 / h
    inv_h2 = inv_h * inv_h
    for i in prange(n):
        ci = coef[mat[i]]
        uix, uiy, uiz = _direction(g[i, 0], g[i, 1], g[i, 2], h, lo, hi)
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for kk in range(count[i]):
            j = nbr[i, kk]
            c = 0.5 * (ci + coef[mat[j]])
            if c == 0.0:
                continue
            ujx, ujy, ujz = _direction(g[j, 0], g[j, 1], g[j, 2], h, lo, hi)
            dx = uix - ujx
            dy = uiy - ujy
            dz = uiz - ujz
            if dx == 0.0 and dy == 0.0 and dz == 0.0:
                continue
            ex = x[i, 0] - x[j, 0]
            ey = x[i, 1] - x[j, 1]
            ez = x[i, 2] - x[j, 2]
            r = math.sqrt(ex * ex + ey * ey + ez * ez)
            q = r * inv_h
            if q >= 1.0 or r == 0.0:
                continue
            t, nn = _wendland_q(q)
            ex /= r
            ey /= r
            ez /= r
            # H d = (w_qq e e·d + (w_q/q)(d - e e·d)) / h²
            ed = ex * dx + ey * dy + ez * dz
            hx = (nn * ed * ex + t * (dx - ed * ex)) * inv_h2
            hy = (nn * ed * ey + t * (dy - ed * ey)) * inv_h2
            hz = (nn * ed * ez + t * (dz - ed * ez)) * inv_h2
            sx += c * hx
            sy += c * hy
            sz += c * hz
        v[i, 0] -= dt * sx
        v[i, 1] -= dt * sy
        v[i, 2] -= dt * sz
