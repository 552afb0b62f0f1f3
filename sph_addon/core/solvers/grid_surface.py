"""Where the liquid's free surface lies on the grid projection's cells (``grid_projection``): each
cell's content over what a full cell holds beside the walls, the cell kinds it gives, and the ghost
fluid's factors at the faces between fluid and air.

Why. A cell's content is the particles' trilinear weights at its centre, 1 in the bulk. A resting
pool's top row of cells holds 0.875 and the row above 0.125: the surface, where the content
crosses 1/2, lies exactly at the lattice's top (a full cell's 8 particles, 2 a spacing along each
axis). Two things went wrong when the surface was placed at the centre of the first cell without
particles:

* A surface particle that rose by a fraction of a spacing into the cell above made that cell fluid
  and moved the surface of its column up by a whole cell: the pressure below it jumped by a cell's
  hydrostatic head, and the surface layer around it was kicked sideways (bursts of 20-40 particles at
  1-2 cm/s in a resting pool, about once a second). With the surface placed where the content
  crosses 1/2 (Gibou, Fedkiw, Cheng & Kang 2002, "A second-order-accurate symmetric discretization
  of the Poisson equation on irregular domains"; Enright, Nguyen & Fedkiw 2003 for free surfaces),
  the pressure moves with the particles, continuously.
* Beside a wall the particles beyond it are missing, so a cell there holds 0.875 of a full one (a
  wall at its face): the surface read from the raw content sits a tenth of a cell lower along every
  wall, a pressure drop that pulled liquid up the walls (a false meniscus, 3 cm/s at 1.25 cm
  spacing). The content is divided by the share of the cell's weights that falls outside the
  static colliders (``WallCells``), measured once per cell and kept: static colliders never move.
"""

from __future__ import annotations

import numpy as np

# The cells' content (1: full) at which the free surface lies.
SURFACE_FILL = 0.5
# The smallest θ, the fraction of the way from a fluid cell's centre to an air cell's where the
# surface lies: 1 / θ is the face's weight in the solve, and its clamp keeps the matrix's diagonal
# within 100 times its neighbours'. Measured before the walls' share was added: the pool and the
# dam break read the same at 0.001 and 0.01; at 0.15 and above the dam break's coarse front moves
# by 4 %; at 1 (no ghost fluid) the resting pool's bursts come back.
THETA_MIN = 0.01
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
        close = np.flatnonzero(out[:, 0] < np.sqrt(3.0) * d)
        if len(close):
            share = static.solid_share(np.ascontiguousarray(centres[close]), self.offsets * d, d / _SUB)
            out[close, 1] = np.maximum(np.einsum("ij,j->i", 1.0 - share, self.weights), _REFERENCE_MIN)
        return out


def face_sides(a: np.ndarray, axis: int, outside) -> tuple[np.ndarray, np.ndarray]:
    """The values of the cell array ``a`` on the low and on the high side of every face normal to
    ``axis`` (arrays one longer along it), ``outside`` beyond the grid."""
    pad = [(0, 0)] * 3
    pad[axis] = (1, 1)
    p = np.pad(a, pad, constant_values=outside)
    return (p[tuple(slice(0, -1) if b == axis else slice(None) for b in range(3))],
            p[tuple(slice(1, None) if b == axis else slice(None) for b in range(3))])


def surface_factor(kind: np.ndarray, fill: np.ndarray, axis: int) -> np.ndarray:
    """1 / θ on the faces normal to ``axis`` between a fluid and an air cell, 1 elsewhere: θ the
    fraction of the way from the fluid cell's centre to the air cell's at which ``fill`` (the cells'
    content over a full cell's) crosses ``SURFACE_FILL`` (the ghost fluid's Dirichlet condition:
    Gibou et al. 2002, eq. 5; Enright et al. 2003), clipped below at ``THETA_MIN``."""
    from .grid_projection_kernels import AIR, FLUID

    k_lo, k_hi = face_sides(kind, axis, AIR)
    f_lo, f_hi = face_sides(fill, axis, 0.0)
    low_fluid = k_lo == FLUID
    inner = np.where(low_fluid, f_lo, f_hi)
    outer = np.where(low_fluid, f_hi, f_lo)
    surface = (low_fluid & (k_hi == AIR)) | ((k_lo == AIR) & (k_hi == FLUID))
    theta = (inner - SURFACE_FILL) / np.maximum(inner - outer, 1e-12)
    return np.where(surface, 1.0 / np.clip(theta, THETA_MIN, 1.0), 1.0)
