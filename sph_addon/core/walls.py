"""The colliders as they stand at one time, as the material models see them (``StepContext.walls``).

``Simulation`` places every collider at the end of a substep and hands the models
this view: signed distances, the solid share of lattice cells (boundary density),
and a record of the velocity changes the walls' boundary terms gave particles, so
the colliders receive them equal and opposite in their contact reports.
"""

from __future__ import annotations

import numpy as np

from .colliders import Collider


class Walls:
    """The colliders as they stand at one time, queried by the models (``StepContext.walls``)."""

    def __init__(self, placed: list[tuple[Collider, np.ndarray, np.ndarray]], scratch: dict | None = None):
        self.placed = placed
        # Buffers kept by the caller from one substep to the next: a large array allocated afresh
        # every substep costs its page faults each time (measured: 3 of the 4 ms the boundary
        # shares took per substep on the bench's dam break).
        self.scratch = {} if scratch is None else scratch
        # (collider index, positions, velocity changes) the models' boundary terms gave particles.
        self.given: list[tuple[int, np.ndarray, np.ndarray]] = []

    def received(self, x: np.ndarray, dv: np.ndarray, dt: float = 1.0) -> None:
        """Record the velocity changes ``dv / dt`` (n,3) that the colliders' boundary terms gave the
        particles at ``x`` (``dt``: the substep, when ``dv`` holds displacements); each particle's goes
        to its nearest collider (``Simulation`` adds the equal and opposite impulse to that collider's
        contact report). Only the rows that moved are divided and copied: the whole array, every
        substep, cost more than the rest of this."""
        moved = np.flatnonzero((dv[:, 0] != 0.0) | (dv[:, 1] != 0.0) | (dv[:, 2] != 0.0))
        if not len(moved):
            return
        if len(self.placed) == 1:
            self.given.append((0, x[moved], dv[moved] / dt))
            return
        dv = dv[moved] / dt
        pts = np.ascontiguousarray(x[moved])
        dists = np.stack([self._distance_to(c, rot, pos, pts) for c, rot, pos in self.placed])
        nearest = np.argmin(dists, axis=0)
        for k in range(len(self.placed)):
            mine = nearest == k
            if mine.any():
                self.given.append((k, x[moved[mine]], dv[mine]))

    def static(self) -> Walls | None:
        """The colliders that never move (None if there are none): the walls whose velocity is zero
        (the implicit viscosity's no-slip term holds fluid at the wall's velocity)."""
        placed = [p for p in self.placed if not p[0].moving and p[0].rebuild is None]
        return Walls(placed, self.scratch) if placed else None

    @staticmethod
    def _distance_to(c, rot, pos, points: np.ndarray) -> np.ndarray:
        from .colliders.response import placed_distances

        d = np.empty(len(points))
        placed_distances(c.shape.code, c.shape.params, c.shape.grid, np.ascontiguousarray(rot, np.float64),
                         np.ascontiguousarray(pos, np.float64), np.ascontiguousarray(points, np.float64), d)
        return d

    def distance(self, points: np.ndarray) -> np.ndarray:
        """(k,) signed distance (m) from each point to the nearest collider surface, negative inside."""
        best = np.full(len(points), np.inf)
        for c, rot, pos in self.placed:
            np.minimum(best, self._distance_to(c, rot, pos, points), out=best)
        return best

    def _buffer(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A (rows, cols) float64 view of the scratch buffer ``name``, grown (by a quarter more) when short."""
        buf = self.scratch.get(name)
        if buf is None or buf.shape[0] < rows or buf.shape[1] != cols:
            buf = self.scratch[name] = np.empty((max(rows + rows // 4, 1), cols))
        return buf[:rows]

    def solid_share(self, centres: np.ndarray, offsets: np.ndarray, spacing: float) -> np.ndarray:
        """(k,m) share of the lattice cell at centres[a] + offsets[b] inside any collider (``solid_share``),
        in a buffer kept for the next call (valid until then)."""
        from .colliders.boundary_volume import solid_share
        from .colliders.sdf_dispatch import EXACT_DISTANCES

        share = self._buffer("share", len(centres), len(offsets))
        share.fill(0.0)
        radii = np.linalg.norm(offsets, axis=1)
        for c, rot, pos in self.placed:
            # A sampled or composed field may change faster than 1 per metre (trilinear: up to sqrt 3).
            lipschitz = 1.0 if c.shape.code in EXACT_DISTANCES else 2.0
            solid_share(c.shape.code, c.shape.params, c.shape.grid, np.ascontiguousarray(rot, np.float64),
                        np.ascontiguousarray(pos, np.float64), centres, offsets, radii, lipschitz, spacing, share)
        return share
