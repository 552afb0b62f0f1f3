"""The liquid of one baked frame as a field the whitewater particles sample: how many liquid particles lie
within h of a point, and their velocity averaged with the weight W̃(r) = 1 - r/h (Ihmsen et al. 2012,
section 6: foam moves with it, bubbles are dragged towards it, and the count classifies).

The liquid particles are sorted into the simulation's cells (``world.neighbors.NeighborSearch``: cells of
h, dense supercells or hashed ones); a query point visits the 27 cells around its own. Each point sums its
candidates in the cells' order, so a result does not depend on the thread count.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..world.neighbors import NeighborSearch, _cell_key


@njit(**config.NJIT)
def sample_point(px, py, pz, x, v, cell, start, dense, sdims, mask, lo, inv_cell, h):
    """(count, Σ W̃ v_x, Σ W̃ v_y, Σ W̃ v_z, Σ W̃) of the liquid particles within h of the point (px, py, pz);
    ``x, v, cell, start, dense, sdims, mask, lo`` are a sorted frame (:meth:`LiquidField.arrays`)."""
    c = 0.0
    wsum = 0.0
    sx = 0.0
    sy = 0.0
    sz = 0.0
    if x.shape[0] == 0:
        return c, sx, sy, sz, wsum
    h2 = h * h
    bx = np.int64(math.floor(px * inv_cell)) - lo[0]
    by = np.int64(math.floor(py * inv_cell)) - lo[1]
    bz = np.int64(math.floor(pz * inv_cell)) - lo[2]
    for t in range(27):
        cx = bx + t % 3 - 1
        cy = by + (t // 3) % 3 - 1
        cz = bz + t // 9 - 1
        # The dense grid covers the particles' cells only: a cell outside it holds none.
        if dense and (cx < 0 or cy < 0 or cz < 0 or cx >= 2 * sdims[0] or cy >= 2 * sdims[1]
                      or cz >= 2 * sdims[2]):
            continue
        key = _cell_key(cx, cy, cz, dense, sdims, mask)
        for j in range(start[key], start[key + 1]):
            if not dense and (cell[j, 0] != cx or cell[j, 1] != cy or cell[j, 2] != cz):
                continue
            dx = px - x[j, 0]
            dy = py - x[j, 1]
            dz = pz - x[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 < h2:
                c += 1.0
                w = 1.0 - math.sqrt(r2) / h
                wsum += w
                sx += w * v[j, 0]
                sy += w * v[j, 1]
                sz += w * v[j, 2]
    return c, sx, sy, sz, wsum


@njit(**config.NJIT_PARALLEL)
def _sample(p, x, v, cell, start, dense, sdims, mask, lo, inv_cell, h, count, vel, weight):
    """:func:`sample_point` at every point of ``p``."""
    for i in prange(p.shape[0]):
        count[i], vel[i, 0], vel[i, 1], vel[i, 2], weight[i] = sample_point(
            p[i, 0], p[i, 1], p[i, 2], x, v, cell, start, dense, sdims, mask, lo, inv_cell, h)


class LiquidField:
    """The liquid particles of one frame, sorted for point queries (``order``: the sort; ``x``, ``v``: the
    particles in it; ``ns``: the ``NeighborSearch`` that sorted them, whose lists ``potentials`` reuses).

    Parameters
    ----------
    x, v : (n, 3) positions (m) and velocities (m/s) of the liquid particles.
    h : interaction radius, m.
    """

    def __init__(self, x: np.ndarray, v: np.ndarray, h: float):
        self.h = float(h)
        self.n = len(x)
        self.max_speed = float(np.sqrt((v * v).sum(axis=1)).max()) if len(v) else 0.0
        if self.n == 0:
            self.x = self.v = np.zeros((0, 3))
            self._arrays = (self.x, self.v, np.zeros((0, 3), np.int64), np.zeros(2, np.int64), True,
                            np.ones(3, np.int64), 0, np.zeros(3, np.int64), 1.0 / self.h)
            return
        self.ns = NeighborSearch(h)
        self.order = order = self.ns.sort(np.ascontiguousarray(x, np.float64))
        self.x = np.ascontiguousarray(x[order], np.float64)
        self.v = np.ascontiguousarray(v[order], np.float64)
        ns = self.ns
        self._arrays = (self.x, self.v, ns.cell, ns.cell_start, ns.dense, ns.sdims, ns.mask, ns.lo,
                        1.0 / ns.cell_size)

    def arrays(self) -> tuple:
        """What :func:`sample_point` takes after the point: x, v, cell, start, dense, sdims, mask, lo,
        1 / cell size."""
        return self._arrays

    def sample(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(count (m,), weighted velocity sum (m, 3), weight sum (m,)) at the points ``p`` (m, 3)."""
        m = len(p)
        count, vel, weight = np.zeros(m), np.zeros((m, 3)), np.zeros(m)
        if self.n == 0 or m == 0:
            return count, vel, weight
        _sample(np.ascontiguousarray(p, np.float64), *self._arrays, self.h, count, vel, weight)
        return count, vel, weight
