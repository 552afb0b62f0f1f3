"""Inline numba helpers that several terms' kernels share: a pair's geometry and weight sums.

Shared here rather than written out in each kernel module: the kernels' disk cache is keyed by a
hash of every kernel source (``kernel_cache``), so an edit here recompiles the kernels that
inline these helpers.
"""

from __future__ import annotations

import math

from . import config
from .kernel_cache import njit


@njit(**config.NJIT_INLINE)
def weight_sums(a, n):
    """Σ a² and Σ a³ over a[:n], in two partial sums each (a single chain waits on each addition)."""
    d0 = 0.0
    d1 = 0.0
    dn0 = 0.0
    dn1 = 0.0
    for k in range(n // 2):
        a0 = a[2 * k]
        a1 = a[2 * k + 1]
        d0 += a0 * a0
        d1 += a1 * a1
        dn0 += a0 * a0 * a0
        dn1 += a1 * a1 * a1
    if n % 2:
        a0 = a[n - 1]
        d0 += a0 * a0
        dn0 += a0 * a0 * a0
    return d0 + d1, dn0 + dn1


@njit(**config.NJIT_INLINE)
def pair_offset(x, i, j):
    """(x_j - x_i, |x_j - x_i|) of a pair: its offset's three components and its length, m."""
    ex = x[j, 0] - x[i, 0]
    ey = x[j, 1] - x[i, 1]
    ez = x[j, 2] - x[i, 2]
    return ex, ey, ez, math.sqrt(ex * ex + ey * ey + ez * ez)


@njit(**config.NJIT)
def pair_direction(x, i, j, inv_h):
    """(1 - q, r̂_ij) of a pair; (0, 0, 0, 0) beyond h or for coincident particles."""
    ex, ey, ez, r = pair_offset(x, i, j)
    a = 1.0 - r * inv_h
    if a <= 0.0 or r == 0.0:
        return 0.0, 0.0, 0.0, 0.0
    return a, ex / r, ey / r, ez / r
