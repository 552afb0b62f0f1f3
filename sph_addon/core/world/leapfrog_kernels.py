"""Numba kernels of the leapfrog scheme with individual time steps (``integrators.Leapfrog``).

Every kernel walks the scheme's particles (``rows``, world indices) in parallel; each row touches
only its own particle (the level limiter reads its neighbours' levels from the previous pass), so
the results are the same at any thread count.
"""

from __future__ import annotations

import math

from ..numerics import config
from ..numerics.kernel_cache import njit, prange


@njit(**config.NJIT_PARALLEL)
def levels_from_steps(substep, limit, acc, spacing, max_level, level):
    """Level l_i: the smallest with substep / 2^l ≤ min(``limit[i]``, 0.25 (s / |a_i|)^½) (s), clipped to
    [0, max_level] (uint8); ``acc`` (k,3) m/s², ``spacing`` s m."""
    for r in prange(limit.shape[0]):
        a = math.sqrt(acc[r, 0] * acc[r, 0] + acc[r, 1] * acc[r, 1] + acc[r, 2] * acc[r, 2])
        lim = min(limit[r], 0.25 * math.sqrt(spacing / a)) if a > 0.0 else limit[r]
        if not lim < math.inf:
            level[r] = 0
            continue
        ratio = substep / lim
        lv = 0
        while lv < max_level and ratio > 1.0 + 1e-12:
            ratio *= 0.5
            lv += 1
        level[r] = lv


@njit(**config.NJIT_PARALLEL)
def limit_neighbour_levels(rows, nbr, count, world_level, gap, level_out):
    """One pass of the neighbour limiter: l_i ≥ max_j l_j - ``gap`` over i's neighbours j.

    ``world_level`` (n,) uint8 holds the levels of the previous pass (0 for particles of other
    schemes); ``level_out`` (k,) uint8 gets the new levels of ``rows``. Returns nothing; the caller
    repeats until no level changes.
    """
    for r in prange(rows.shape[0]):
        i = rows[r]
        lv = world_level[i]
        for kk in range(count[i]):
            lj = world_level[nbr[i, kk]] - gap
            if lj > lv:
                lv = lj
        level_out[r] = lv


@njit(**config.NJIT_PARALLEL)
def kick(v, acc, rows, level, top, k, half_substep, at_end, given, wall):
    """Half a kick, v_i += (Δt / 2^{l_i+1}) a_i, for the particles whose step starts at micro-step
    ``k`` (``at_end`` false) or ends after it (``at_end`` true); a step of level l spans 2^(top-l)
    micro-steps. ``acc`` (k,3) is row-indexed like ``rows``. With ``given`` (k,3, row-indexed; (0,3) for
    none), the same kick of ``wall`` (n,3, world-indexed), the colliders' share of the accelerations, is
    added to it: what the colliders gave the particles, m/s."""
    report = given.shape[0] > 0
    for r in prange(rows.shape[0]):
        lv = level[r]
        stride = 1 << (top - lv)
        kk = k + 1 if at_end else k
        if kk % stride != 0:
            continue
        i = rows[r]
        f = half_substep / (1 << lv)
        v[i, 0] += f * acc[r, 0]
        v[i, 1] += f * acc[r, 1]
        v[i, 2] += f * acc[r, 2]
        if report:
            given[r, 0] += f * wall[i, 0]
            given[r, 1] += f * wall[i, 1]
            given[r, 2] += f * wall[i, 2]


@njit(**config.NJIT_PARALLEL)
def drift(x, v, x_prev, rows, dt):
    """x_prev = x; x += dt v for ``rows``."""
    for r in prange(rows.shape[0]):
        i = rows[r]
        for a in range(3):
            x_prev[i, a] = x[i, a]
            x[i, a] += dt * v[i, a]


@njit(**config.NJIT_PARALLEL)
def keep_collisions(x, v, x_prev, rows, dt):
    """v += (x - (x_prev + dt v)) / dt for ``rows``: what a collision moved a drifted particle becomes
    its velocity change (the same sum as :func:`drift`, so an untouched particle gets exactly 0)."""
    inv = 1.0 / dt
    for r in prange(rows.shape[0]):
        i = rows[r]
        for a in range(3):
            moved = x[i, a] - (x_prev[i, a] + dt * v[i, a])
            if moved != 0.0:
                v[i, a] += moved * inv


@njit(**config.NJIT)
def ending(rows, level, top, k, out_rows, out_pos):
    """The particles whose step ends after micro-step ``k``: their world indices into ``out_rows`` and
    their positions in ``rows`` into ``out_pos``; returns how many."""
    m = 0
    for r in range(rows.shape[0]):
        if (k + 1) % (1 << (top - level[r])) == 0:
            out_rows[m] = rows[r]
            out_pos[m] = r
            m += 1
    return m

