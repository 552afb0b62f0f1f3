"""Whole-array kernels the substep needs where numpy is slow or single-threaded.

numpy's ``x.min(axis=0)`` strides across the rows of an (n, 3) array, and its fancy indexing
runs on one thread; a substep of the bench's dam break paid about 1.5 ms for them.
"""

from __future__ import annotations

import numpy as np

from . import config
from .kernel_cache import njit, prange


@njit(**config.NJIT)
def bounds(x, lo, hi):
    """Smallest and largest coordinate of the points (n,3), n > 0, into lo and hi (3,), NaN if any
    coordinate is NaN (as numpy's): x.min(axis=0) strides across rows and took 0.5 ms for 24,000
    points, this takes 0.02."""
    nan = False
    for c in range(3):
        lo[c] = x[0, c]
        hi[c] = x[0, c]
    for i in range(x.shape[0]):
        for c in range(3):
            v = x[i, c]
            if v < lo[c]:
                lo[c] = v
            elif v > hi[c]:
                hi[c] = v
            elif v != v:
                nan = True
    if nan:
        lo[:] = np.nan
        hi[:] = np.nan


@njit(**config.NJIT_PARALLEL)
def take_rows(a, order, out):
    """out[k] = a[order[k]] for the rows of (n,w) arrays, in parallel."""
    for k in prange(order.shape[0]):
        for c in range(a.shape[1]):
            out[k, c] = a[order[k], c]


@njit(**config.NJIT_PARALLEL)
def step_rows(x, a, v, out):
    """out = x + a v for (n,3) arrays (numpy's ``x + a * v``, the same bytes, in parallel: numpy's
    temporaries cost a million-particle substep about 10 ms each on one thread). ``out`` may be ``x``."""
    for i in prange(x.shape[0]):
        for c in range(3):
            out[i, c] = x[i, c] + a * v[i, c]


@njit(**config.NJIT_PARALLEL)
def copy_rows(a, out):
    """out[:] = a for (n,3) arrays, in parallel (numpy's copy runs on one thread)."""
    for i in prange(a.shape[0]):
        for c in range(3):
            out[i, c] = a[i, c]


@njit(**config.NJIT_PARALLEL)
def drift(x, v, x_prev, dt):
    """x_prev = x, then x += dt v (the prediction of Clavet's Algorithm 1), in parallel."""
    for i in prange(x.shape[0]):
        for c in range(3):
            x_prev[i, c] = x[i, c]
            x[i, c] = x[i, c] + dt * v[i, c]


@njit(**config.NJIT_PARALLEL)
def velocities_from_positions(x, x_prev, dt, v):
    """v = (x - x_prev) / dt, in parallel."""
    for i in prange(x.shape[0]):
        for c in range(3):
            v[i, c] = (x[i, c] - x_prev[i, c]) / dt


@njit(**config.NJIT_PARALLEL)
def add_to_rows(v, dv):
    """v[i] += dv for every row of (n,3) ``v`` and a (3,) ``dv``, in parallel."""
    for i in prange(v.shape[0]):
        for c in range(3):
            v[i, c] = v[i, c] + dv[c]


@njit(**config.NJIT_PARALLEL)
def mechanical_energies(x, v, material, densities, volume, g, e, m):
    """Each particle's mass m = densities[material] volume (kg) and mechanical energy
    e = m (|v|²/2 - g·x) (J), in parallel: numpy's statements (``blowup.BlowUpWatch.energies``) in the
    same arithmetic, without their six temporaries."""
    for i in prange(x.shape[0]):
        mi = densities[material[i]] * volume
        v2 = v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2]
        gx = x[i, 0] * g[0] + x[i, 1] * g[1] + x[i, 2] * g[2]
        m[i] = mi
        e[i] = mi * (0.5 * v2 - gx)


@njit(**config.NJIT)
def kinetic_energy_sum(v, mass):
    """Σ ½ m_i |v_i|² of (n,3) velocities and (n,) masses, summed in index order on one thread.

    ``np.dot(mass, speeds²)`` hands the sum to the BLAS library, which splits it over its own
    threads above 10,000 particles: they then spin for about a tenth of a second beside numba's
    and, measured on a 16-core machine, held the dam break's substep at 58 ms instead of 28 ms
    (and the sum depended on the BLAS thread count)."""
    total = 0.0
    for i in range(v.shape[0]):
        total += mass[i] * (v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
    return 0.5 * total


@njit(**config.NJIT)
def _add_partial(partials, n, x):
    """Add x to Shewchuk's non-overlapping partials[:n] (in place); returns the new count, or -1,
    the partials untouched, when the array is full (the count can grow by one)."""
    if n == partials.shape[0]:
        return -1
    i = 0
    for j in range(n):
        y = partials[j]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    n = i
    if x != 0.0:
        partials[n] = x
        n += 1
    return n


@njit(**config.NJIT)
def _round_partials(partials, n):
    """The correctly rounded sum of the non-overlapping partials[:n] (CPython's math_fsum ending)."""
    hi = 0.0
    if n > 0:
        n -= 1
        hi = partials[n]
        lo = 0.0
        while n > 0:
            x = hi
            n -= 1
            y = partials[n]
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                break
        # Half-way cases: round as if the partials below were added (CPython's math_fsum).
        if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or (lo > 0.0 and partials[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            if y == x - hi:
                hi = x
    return hi


@njit(**config.NJIT)
def _exact_sum_serial(a):
    partials = np.empty(32)
    n = 0
    for k in range(a.shape[0]):
        m = _add_partial(partials, n, a[k])
        if m < 0:  # values spread over hundreds of binary orders of magnitude: grow
            grown = np.empty(2 * partials.shape[0])
            grown[:n] = partials[:n]
            partials = grown
            m = _add_partial(partials, n, a[k])
        n = m
    return _round_partials(partials, n)


# Values per block of exact_sum's parallel pass (fewer: one pass, no parallel start).
EXACT_SUM_BLOCK = 65_536


@njit(**config.NJIT_PARALLEL)
def exact_sum(a):
    """The correctly rounded sum of the finite values of ``a`` (1-D float64): ``math.fsum``'s result
    (Shewchuk's non-overlapping partials and CPython's final rounding), which no summation order
    changes, at about a fourth of its cost on one thread. Above ``EXACT_SUM_BLOCK`` values each block
    keeps its own exact partials in parallel and the blocks' partials are summed exactly together:
    the same correctly rounded result."""
    n = a.shape[0]
    blocks = (n + EXACT_SUM_BLOCK - 1) // EXACT_SUM_BLOCK
    if blocks <= 1:
        return _exact_sum_serial(a)
    width = 64
    partials = np.empty((blocks, width))
    counts = np.zeros(blocks, np.int64)
    for b in prange(blocks):
        m = 0
        for k in range(b * EXACT_SUM_BLOCK, min(n, (b + 1) * EXACT_SUM_BLOCK)):
            m = _add_partial(partials[b], m, a[k])
            if m < 0:
                break
        counts[b] = m
    if counts.min() < 0:  # a block's values outgrew its row: the serial pass grows as it needs
        return _exact_sum_serial(a)
    flat = np.empty(counts.sum())
    at = 0
    for b in range(blocks):
        flat[at:at + counts[b]] = partials[b, :counts[b]]
        at += counts[b]
    return _exact_sum_serial(flat)


# Rows per block of the conjugate-gradient solves' dot products: each block summed in particle order,
# the blocks in parallel, their sums added in block order. The result depends on the block size, not on the thread
# count; below one block (every scene up to 65,536 particles) it is the plain sum in particle order.
# Over a million particles one dot product took 2.9 ms on one thread, and an iteration has three.
DOT_BLOCK = 65_536


@njit(**config.NJIT_PARALLEL)
def dot_rows(a, b):
    """Σ a·b over (n,3) arrays, deterministic at any thread count (``DOT_BLOCK``)."""
    n = a.shape[0]
    blocks = (n + DOT_BLOCK - 1) // DOT_BLOCK
    if blocks <= 1:  # no parallel start for one block
        s = 0.0
        for i in range(n):
            s += a[i, 0] * b[i, 0] + a[i, 1] * b[i, 1] + a[i, 2] * b[i, 2]
        return s
    partial = np.zeros(blocks)
    for k in prange(blocks):
        s = 0.0
        for i in range(k * DOT_BLOCK, min(n, (k + 1) * DOT_BLOCK)):
            s += a[i, 0] * b[i, 0] + a[i, 1] * b[i, 1] + a[i, 2] * b[i, 2]
        partial[k] = s
    total = 0.0
    for k in range(blocks):
        total += partial[k]
    return total


@njit(**config.NJIT_PARALLEL)
def axpy_rows(alpha, a, b):
    """b += alpha a."""
    for i in prange(a.shape[0]):
        b[i, 0] += alpha * a[i, 0]
        b[i, 1] += alpha * a[i, 1]
        b[i, 2] += alpha * a[i, 2]


@njit(**config.NJIT_PARALLEL)
def xpby_rows(a, beta, b):
    """b = a + beta b."""
    for i in prange(a.shape[0]):
        b[i, 0] = a[i, 0] + beta * b[i, 0]
        b[i, 1] = a[i, 1] + beta * b[i, 1]
        b[i, 2] = a[i, 2] + beta * b[i, 2]
