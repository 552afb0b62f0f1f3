"""Numba kernel of the contacts between solid particles (Macklin et al. 2014, section 6.1: particles
as spheres of the spacing's diameter, pushed apart on the predicted positions)."""

from __future__ import annotations

import math

from ..numerics import config
from ..numerics.kernel_cache import njit, prange

# Melting rest partners are pushed apart only when closer than this many spacings, and to it: the mush may
# pack as a liquid does.
MELTING = 0.9


@njit(**config.NJIT_PARALLEL)
def contact_push(x, rest, mat, source, solid, bonded, melt, nbr, count, mass, spacing, h, out):
    """Each bonded solid particle's share of pushing apart the solid particles that are closer than the
    spacing and are not rest partners (other bodies, or folds of its own): for such a pair it moves
    by (s - r) m_j / (m_i + m_j) away from j, so the pair is separated and its momentum kept. Rest partners
    melting (``melt`` φ > 0, the larger of the two) are pushed by that share times φ: their elastic energy
    fades as 1 - φ (``phase``), and this keeps the mush from collapsing."""
    for i in prange(x.shape[0]):
        out[i, 0] = 0.0
        out[i, 1] = 0.0
        out[i, 2] = 0.0
        mi = mat[i]
        if not solid[mi] or not bonded[i]:
            continue
        for kk in range(count[i]):
            j = nbr[i, kk]
            mj = mat[j]
            if j == i or not solid[mj] or not bonded[j]:
                continue
            dx = x[j, 0] - x[i, 0]
            dy = x[j, 1] - x[i, 1]
            dz = x[j, 2] - x[i, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 >= spacing * spacing or r2 == 0.0:
                continue
            weight, reach = 1.0, spacing
            if mj == mi and source[j] == source[i]:
                ex = rest[j, 0] - rest[i, 0]
                ey = rest[j, 1] - rest[i, 1]
                ez = rest[j, 2] - rest[i, 2]
                if ex * ex + ey * ey + ez * ez < h * h:
                    weight = max(melt[i], melt[j])
                    reach = MELTING * spacing
                    if weight <= 0.0 or r2 >= reach * reach:
                        continue
            r = math.sqrt(r2)
            share = weight * (reach - r) / r * mass[mj] / (mass[mi] + mass[mj])
            out[i, 0] -= share * dx
            out[i, 1] -= share * dy
            out[i, 2] -= share * dz
