"""The static colliders on the pressure projection's cells, measured once per cell and kept
(``terms.pressure_projection_zhu2005``): each cell centre's signed distance to them and the share of
a full cell's content they leave it (``terms.pressure_projection_zhu2005_ghost_fluid`` divides the
content by it).
"""

from __future__ import annotations

import numpy as np

# Sub-cells a cell width along each axis at which the walls' share of a cell's weights (-1 to 1
# cells) is measured: the weights are linear on each, so the midpoint rule is exact for flat walls on
# the quarter cells (8 sub-cells each way, 512 a cell: 4096 at 8 a width cost the bench's dam break
# 0.4 s of its 3.6 as its liquid reached new cells).
_SUB = 4


# The fewest weights a cell keeps beside walls (a cell whose centre lies well inside one).
_REFERENCE_MIN = 0.05


# Global cell indices are packed into one int64 key, 21 bits a coordinate: ±1,048,576 cells from the
# origin (±10 km at cells of a centimetre); beyond that ``WallCells`` refuses rather than mix cells.
_OFFSET = 1 << 20


_STRIDE = 1 << 21


class WallCells:
    """Per cell of the grid, the signed distance from its centre to the static colliders and the
    share of a full cell's content the walls leave it (1 away from them), measured once per cell
    and kept for the bake: both are functions of the static geometry alone, so a resumed bake
    measures the same, and a substep looks its cells up instead of evaluating the fields again."""

    def __init__(self):
        self.keys = np.empty(0, np.int64)
        self.values = np.empty((0, 2))
        t = (np.arange(2 * _SUB) + 0.5) / _SUB - 1.0
        self.offsets = np.stack(np.meshgrid(t, t, t, indexing="ij"), -1).reshape(-1, 3)  # in cells
        w = np.prod(1.0 - np.abs(self.offsets), axis=1)
        self.weights = w / w.sum()

    def __call__(self, static, index: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
        """(distance (k,), m; reference (k,)) of the cells at global ``index`` (k,3), width ``d`` m,
        their centres at (index + 1/2) d; ``static``: the static colliders' ``Walls``."""
        if len(index) and np.abs(index).max() >= _OFFSET:
            raise ValueError(f"liquid {np.abs(index).max() * d:.4g} m from the origin along an axis: the grid "
                             f"projection's cells reach {_OFFSET * d:.4g} m at this spacing; move the scene "
                             "closer to the origin")
        key = ((index[:, 0] + _OFFSET) * _STRIDE + index[:, 1] + _OFFSET) * _STRIDE + index[:, 2] + _OFFSET
        at = np.searchsorted(self.keys, key)
        known = np.zeros(len(key), bool)
        inside = at < len(self.keys)
        known[inside] = self.keys[at[inside]] == key[inside]
        out = np.empty((len(key), 2))
        out[known] = self.values[at[known]]
        missing = np.flatnonzero(~known)
        if len(missing):
            new = self._measure(static, index[missing], d)
            out[missing] = new
            order = np.argsort(key[missing])
            where = at[missing][order]
            self.keys = np.insert(self.keys, where, key[missing][order])
            self.values = np.insert(self.values, where, new[order], axis=0)
        return out[:, 0], out[:, 1]

    def _measure(self, static, index: np.ndarray, d: float) -> np.ndarray:
        """(k,2): the distance at each cell's centre and the share of its weights outside the walls
        (sub-cells' solid shares from the fields, ``Walls.solid_share``), for cells within reach of
        a wall (√3 d: the weights span a cube of half-width d)."""
        centres = np.ascontiguousarray((index + 0.5) * d)
        out = np.ones((len(index), 2))
        out[:, 0] = static.distance(centres)
        out[:, 1] = self.references(static, centres, out[:, 0], d)
        return out

    def references(self, walls, centres: np.ndarray, distance: np.ndarray, d: float) -> np.ndarray:
        """(k,) the share of a full cell's content that ``walls`` leave each cell of width ``d`` centred at
        ``centres`` (k,3), 1 beyond reach of them (``distance`` from the centres, m): for the static
        colliders once per cell, for the moving ones every substep (their cells change)."""
        out = np.ones(len(centres))
        close = np.flatnonzero(distance < np.sqrt(3.0) * d)
        if len(close):
            share = walls.solid_share(np.ascontiguousarray(centres[close]), self.offsets * d, d / _SUB)
            out[close] = np.maximum(np.einsum("ij,j->i", 1.0 - share, self.weights), _REFERENCE_MIN)
        return out
