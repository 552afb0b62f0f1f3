"""A coarse grid projection of the liquid's velocities before each substep's prediction: the
long-wavelength part of the pressure, solved where the relaxation's passes are slowest.

Why. The density relaxation (Clavet 2005, Algorithm 3, run to a tolerance) moves particles against
their neighbours, so a pass carries a correction a few particles far. A column of water under
gravity needs one that reaches from the floor to the surface: the passes crept along that mode (0.02-
0.03 points of compression a pass, session 26's log), a fresh pool fell into its tolerance before
they caught it, and its correction came back as velocity (docs/materials.md). Grid fluid solvers
solve that mode directly: the pressure Poisson equation on cells (Harlow & Welch 1965's MAC grid;
Zhu & Bridson 2005, "Animating Sand as a Fluid", for the particle-grid transfers, FLIP's delta).

What. Every substep, after the velocity stage (gravity, viscosity, surface tension are in v):

1. cells of width ``CELL_WIDTH`` h; a cell holding a liquid particle is fluid, an empty cell whose
   centre lies inside a static collider solid, any other empty cell air (pressure 0);
2. the particles' velocities go to the faces (trilinear weights, as FLIP's particle-to-grid step);
   faces between fluid and solid take the solid's velocity, 0 (static colliders only: a moving one
   is left to the relaxation's wall terms and the collisions, as before);
3. -∇²p = -∇·u over the fluid cells (7-point Laplacian, p = 0 in air, no flux into solid), by
   conjugate gradients to ``TOLERANCE``; u -= ∇p on the faces between fluid and non-solid cells;
4. each particle gains the velocity change of the faces around it (FLIP: the change, not the grid's
   velocity, so the grid adds no viscosity), weights renormalised over the faces that have one.

The relaxation's passes then see only the compression the grid cannot resolve (a cell is two
spacings) and the density error left from earlier substeps, which they correct as before, to the
material's tolerance: the grid moves velocities, never positions.

Deviations and their reasons:

* A cell is fluid as soon as it holds one particle (the surface is placed up to a cell too far out:
  the passes handle what that misplaces at the surface; a threshold on the count left air cells
  inside the liquid where the grid cuts the lattice unevenly).
* Fluid cells sealed off from air by solid cells (a closed pocket) are left out: their pressure is
  undetermined. A closed tank filled to its lid is therefore left to the relaxation.
* Momentum: the solid faces' share of the velocity change goes to the colliders' contact reports
  (``Walls.received``); with no solid face touching the liquid, the mean change is removed, so the
  projection conserves momentum exactly (the discrete p = 0 surface does only up to round-off of
  the cells' layout).
"""

from __future__ import annotations

import math

import numpy as np

# Cell width in units of the support radius h (two spacings at h = 2 s: eight particles a cell, as
# FLIP's usual 2x2x2 per cell).
CELL_WIDTH = 1.0
# Relative residual at which the pressure solve stops, and its cap (reported when reached).
TOLERANCE = 1e-5
MAX_ITERATIONS = 1000
import os
FULL = float(os.environ.get('GP_FULL', '0.75'))


def _faces_known(kind: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Two boolean arrays over the faces normal to ``axis``: those between a fluid cell and a non-solid
    cell (solved), and those between a fluid cell and a solid one (held at the solid's velocity)."""
    from .grid_projection_kernels import AIR, FLUID, SOLID

    pad = [(0, 0)] * 3
    pad[axis] = (1, 1)
    k = np.pad(kind, pad, constant_values=AIR)
    lo = k[tuple(slice(0, -1) if a == axis else slice(None) for a in range(3))]
    hi = k[tuple(slice(1, None) if a == axis else slice(None) for a in range(3))]
    fluid = (lo == FLUID) | (hi == FLUID)
    solid = (lo == SOLID) | (hi == SOLID)
    return fluid & ~solid, fluid & solid


def _difference(a: np.ndarray, axis: int) -> np.ndarray:
    """The difference of a cell array across each face normal to ``axis`` (0 outside the grid)."""
    pad = [(0, 0)] * 3
    pad[axis] = (1, 1)
    p = np.pad(a, pad)
    return (p[tuple(slice(1, None) if b == axis else slice(None) for b in range(3))]
            - p[tuple(slice(0, -1) if b == axis else slice(None) for b in range(3))])


class GridProjection:
    """The projection's buffers and statistics; :meth:`project` runs it on one substep's velocities."""

    def __init__(self):
        self.reset_stats()

    def reset_stats(self) -> None:
        self.stats = {"iterations": 0, "calls": 0, "iterations_max": 0, "residual": 0.0, "capped": 0}

    def project(self, x: np.ndarray, v: np.ndarray, sel: np.ndarray, walls, h: float) -> None:
        """Project ``v`` (n,3, m/s, in place) of the rows where ``sel`` onto the grid's divergence-free
        fields; ``walls``: the substep's ``Walls`` (None without colliders)."""
        from . import grid_projection_kernels as k

        if walls is None or not sel.any():
            return
        d = CELL_WIDTH * h
        inv_d = 1.0 / d
        xs = x[sel]
        lo = np.floor(xs.min(axis=0) * inv_d) - 1.0
        dims = tuple(int(n) for n in np.floor(xs.max(axis=0) * inv_d) - lo + 2.0)
        origin = lo * d
        counts = np.empty(math.prod(dims), np.int64)
        k.cell_counts(x, sel, origin, inv_d, *dims, counts)
        kind = self._kinds(counts.reshape(dims), origin, d, walls)
        flat = kind.reshape(-1)
        row = np.empty(flat.size, np.int64)
        nbr = np.empty((int(np.count_nonzero(flat == k.FLUID)), 6), np.int64)
        m = k.fluid_rows(flat, *dims, row, nbr)
        if m == 0:
            return
        old, solved, held = [], [], []
        div = np.zeros(dims)
        for axis in range(3):
            shape = list(dims)
            shape[axis] += 1
            u, w = np.zeros(shape), np.zeros(shape)
            k.splat(x, v, sel, origin, inv_d, axis, u, w)
            np.divide(u, w, out=u, where=w > 0)
            s, f = _faces_known(kind, axis)
            old.append(u.copy())
            u[f] = 0.0  # held at the static solid's velocity
            solved.append(s)
            held.append(f)
            div += np.diff(u, axis=axis)  # d times the divergence
        cells = np.flatnonzero(row >= 0)
        rhs = np.empty(m)
        rhs[row[cells]] = -d * div.reshape(-1)[cells]
        p = np.empty(m)
        work = [np.empty(m) for _ in range(3)]
        it, res = k.solve(nbr, m, rhs, p, TOLERANCE, MAX_ITERATIONS, *work)
        pressure = np.zeros(flat.size)
        pressure[cells] = p[row[cells]]
        pressure = pressure.reshape(dims)
        dv = np.zeros_like(v)
        for axis in range(3):
            du = np.where(solved[axis], -_difference(pressure, axis) * inv_d, 0.0)
            du[held[axis]] = -old[axis][held[axis]]
            k.gather(x, sel, origin, inv_d, axis, du, solved[axis] | held[axis], dv)
        # Only particles in cells with no air beside them take the change: at the surface, where
        # a cell holds a sheet or a drop of one or two particles, the relaxation acts alone.
        dv *= self._interior(x, sel, origin, inv_d, counts.reshape(dims))[:, None]
        v += dv
        walls.received(x, dv)
        st = self.stats
        st["iterations"] += it
        st["calls"] += 1
        st["iterations_max"] = max(st["iterations_max"], it)
        st["residual"] = max(st["residual"], res)
        st["capped"] += int(it >= MAX_ITERATIONS and res > TOLERANCE)

    @staticmethod
    def _interior(x: np.ndarray, sel: np.ndarray, origin: np.ndarray, inv_d: float, counts: np.ndarray) -> np.ndarray:
        """(n,) 1.0 for the selected particles whose cell holds at least FULL of the particles a cell
        holds at rest, else 0."""
        full = counts >= FULL * CELL_WIDTH**3 * 8.0
        cell = np.floor((x - origin) * inv_d).astype(np.int64)
        np.clip(cell, 0, np.array(counts.shape) - 1, out=cell)
        return (full[cell[:, 0], cell[:, 1], cell[:, 2]] & sel).astype(np.float64)

    @staticmethod
    def _kinds(counts: np.ndarray, origin: np.ndarray, d: float, walls) -> np.ndarray:
        """Cell kinds: fluid where particles are; among the empty cells next to fluid, solid where the
        centre is inside a static collider (only those cells matter to the solve), air elsewhere."""
        from . import grid_projection_kernels as k

        fluid = counts > 0
        kind = np.where(fluid, k.FLUID, k.AIR).astype(np.int8)
        static = walls.static() if walls is not None else None
        if static is None:
            return kind
        near = np.zeros_like(fluid)
        for axis in range(3):
            for shift in (1, -1):
                near |= np.roll(fluid, shift, axis=axis)
        cand = np.flatnonzero((near & ~fluid).reshape(-1))
        if len(cand):
            centres = origin + (np.stack(np.unravel_index(cand, counts.shape), axis=1) + 0.5) * d
            inside = static.distance(np.ascontiguousarray(centres)) < 0.0
            kind.reshape(-1)[cand[inside]] = k.SOLID
        return kind
