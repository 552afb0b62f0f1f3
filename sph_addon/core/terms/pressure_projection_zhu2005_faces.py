"""A helper of the term ``pressure_projection_zhu2005`` (Zhu & Bridson 2005): numba kernels of the grid's faces.

Which faces the solve sets and which the static colliders hold, the ghost fluid's factors at the free
surface (``pressure_projection_zhu2005_ghost_fluid``), the divergence, the solve's rows, and each
face's velocity change from the pressure.

Each is the numpy expression it replaced, element by element in the same arithmetic (the same
bytes), in parallel over the grid's first axis: on the million-particle dam break the projection's
own numpy statements took 64 ms a substep, on one thread (cProfile). Grid conventions as in
``pressure_projection_zhu2005_kernels``.
"""

from __future__ import annotations

from ..numerics import config
from ..numerics.kernel_cache import njit, prange


@njit(**config.NJIT_INLINE)
def _sides(kind, fill, axis, a, b, c, air):
    """The kinds and contents of the cells on the low and high side of face (a, b, c) normal to
    ``axis``: ``air`` and 0 beyond the grid (``pressure_projection_zhu2005_ghost_fluid.face_sides``)."""
    n = kind.shape[axis]
    m = a if axis == 0 else (b if axis == 1 else c)
    la, lb, lc = a - (axis == 0), b - (axis == 1), c - (axis == 2)
    k_lo, f_lo, k_hi, f_hi = air, 0.0, air, 0.0
    if m > 0:
        k_lo, f_lo = kind[la, lb, lc], fill[la, lb, lc]
    if m < n:
        k_hi, f_hi = kind[a, b, c], fill[a, b, c]
    return k_lo, f_lo, k_hi, f_hi


@njit(**config.NJIT_PARALLEL)
def face_terms(kind, codes, fill, axis, surface_fill, theta_min, u, w, us, solved, held, ghost, div):
    """For the faces normal to ``axis`` (``codes``: the kinds FLUID, AIR, SOLID of
    ``pressure_projection_zhu2005_kernels``, passed so that the cached kernel holds no copy): u /= w
    where w > 0; ``solved`` (fluid on a side, solid on
    neither) and ``held`` (fluid and solid: the solid's velocity ``us``, 0 where ``us`` is empty: only
    static solids); ``ghost``: 1 / θ
    between a fluid and an air cell, θ where the content crosses ``surface_fill``, clipped below at
    ``theta_min`` (``pressure_projection_zhu2005_ghost_fluid.surface_factor``), 1 elsewhere; and ``div``
    (cells) += the difference across each cell of u, the solid's on held faces (d times the divergence)."""
    fluid_code, air, solid_code = codes
    moving = us.shape[0] > 0
    fa, fb, fc = u.shape
    for a in prange(fa):
        for b in range(fb):
            for c in range(fc):
                if w[a, b, c] > 0:
                    u[a, b, c] = u[a, b, c] / w[a, b, c]
                k_lo, f_lo, k_hi, f_hi = _sides(kind, fill, axis, a, b, c, air)
                fluid = k_lo == fluid_code or k_hi == fluid_code
                solid = k_lo == solid_code or k_hi == solid_code
                solved[a, b, c] = fluid and not solid
                held[a, b, c] = fluid and solid
                low_fluid = k_lo == fluid_code
                g = 1.0
                if (low_fluid and k_hi == air) or (k_lo == air and k_hi == fluid_code):
                    inner = f_lo if low_fluid else f_hi
                    outer = f_hi if low_fluid else f_lo
                    theta = (inner - surface_fill) / max(inner - outer, 1e-12)
                    g = 1.0 / min(max(theta, theta_min), 1.0)
                ghost[a, b, c] = g
    na, nb, nc = div.shape
    for a in prange(na):
        for b in range(nb):
            for c in range(nc):
                a1, b1, c1 = a + (axis == 0), b + (axis == 1), c + (axis == 2)
                hi = (us[a1, b1, c1] if moving else 0.0) if held[a1, b1, c1] else u[a1, b1, c1]
                lo = (us[a, b, c] if moving else 0.0) if held[a, b, c] else u[a, b, c]
                div[a, b, c] += hi - lo


@njit(**config.NJIT_PARALLEL)
def solve_rows(row, div, g0, g1, g2, d, rhs, surface):
    """The solve's right-hand side (-d div) and ``surface`` (m,6): each fluid row's 1 / θ on its low
    and high face along each axis."""
    na, nb, nc = div.shape
    for a in prange(na):
        for b in range(nb):
            for c in range(nc):
                r = row[(a * nb + b) * nc + c]
                if r < 0:
                    continue
                rhs[r] = -d * div[a, b, c]
                surface[r, 0] = g0[a, b, c]
                surface[r, 1] = g0[a + 1, b, c]
                surface[r, 2] = g1[a, b, c]
                surface[r, 3] = g1[a, b + 1, c]
                surface[r, 4] = g2[a, b, c]
                surface[r, 5] = g2[a, b, c + 1]


@njit(**config.NJIT_PARALLEL)
def face_changes(pressure, axis, solved, held, ghost, u, us, inv_d, du, new):
    """Each face's velocity change: -(1/θ) Δp / d where solved, us - u where held (the solid's velocity
    ``us``; -u where it is empty: static solids), 0 elsewhere, into ``du``; u + du into ``new``. Δp
    across the face, 0 beyond the grid."""
    n = pressure.shape[axis]
    moving = us.shape[0] > 0
    fa, fb, fc = u.shape
    for a in prange(fa):
        for b in range(fb):
            for c in range(fc):
                change = 0.0
                if solved[a, b, c]:
                    m = a if axis == 0 else (b if axis == 1 else c)
                    p_lo = 0.0
                    p_hi = 0.0
                    if m > 0:
                        p_lo = pressure[a - (axis == 0), b - (axis == 1), c - (axis == 2)]
                    if m < n:
                        p_hi = pressure[a, b, c]
                    change = -ghost[a, b, c] * (p_hi - p_lo) * inv_d
                if held[a, b, c]:
                    change = us[a, b, c] - u[a, b, c] if moving else -u[a, b, c]
                du[a, b, c] = change
                new[a, b, c] = u[a, b, c] + change
