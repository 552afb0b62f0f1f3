"""The colliders of a substep, sampled once, as every consumer asks them (``StepContext.walls``).

``Simulation`` places every collider once per substep, at its end, and hands this one view to the terms,
the contact pass and the world passes: signed distances (heat's held surfaces, the sph model's walls),
the solid share of lattice cells, the mirrored walls and the fluid behind the others (the density
relaxation's, :meth:`Walls.relaxation_walls`), the no-slip blocks (the implicit viscosity's,
:meth:`Walls.no_slip_blocks`; Morris' explicit one's, :meth:`Walls.no_slip_sums`), the static colliders
on the pressure projection's cells (:meth:`Walls.static_cells`), the particles the contact pass must
look at (``clearance``, measured at the substep's start) and where what the colliders receive goes
(``reports``: the contact pass's, and the terms' own record of what they gave the particles at the
walls, :meth:`Walls.received`, which the colliders receive equal and opposite).
"""

from __future__ import annotations

import numpy as np

from ..colliders import Collider


class Walls:
    """The colliders as they stand at one time, queried by the models (``StepContext.walls``)."""

    def __init__(self, placed: list[tuple[Collider, np.ndarray, np.ndarray]], scratch: dict | None = None,
                 spacing: float = 0.0, h: float = 0.0, cells=None):
        self.placed = placed
        self.spacing, self.h = spacing, h
        # The static colliders on the projection's cells (``static_cells.WallCells``), kept for the bake.
        if cells is None:
            from .static_cells import WallCells

            cells = WallCells()
        self.cells = cells
        self._static: list = []
        # Buffers kept by the caller from one substep to the next: a large array allocated afresh
        # every substep costs its page faults each time (measured: 3 of the 4 ms the boundary
        # shares took per substep on the bench's dam break).
        self.scratch = {} if scratch is None else scratch
        # (collider index, positions, velocity changes) the models' boundary terms gave particles,
        # and beside each the particles' masses (kg) where ``masses`` knows them, else None.
        self.given: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.given_mass: list[np.ndarray | None] = []
        # (n,) kg, each particle's mass, set by ``Simulation`` when a collider is a body that must know
        # what it received in kg m/s (``core/passes/bodies.py``); None: reports per unit particle mass.
        self.masses: np.ndarray | None = None
        # Set by ``Simulation`` for the substep: the contact pass's pre-filter (``colliders.contact.
        # clearance.Clearance``) and the frame's ``colliders.contact.reports.ColliderReports``.
        self.clearance = None
        self.reports = None
        # Set by ``Simulation`` for the substep: each collider's (R, t) at the substep's start and the
        # substep's length, s: what a moving collider's velocity is read from (:meth:`velocity_at`).
        self.before: list | None = None
        self.dt = 0.0
        # (n,) int64 set by a term that gave particles a collider's friction itself this substep (the elastic
        # solve's Coulomb friction, ``terms.elasticity_becker2009_friction``): that collider's index in
        # ``placed``, -1 for none. The contact pass then removes no tangential velocity from them for it.
        self.friction_given: np.ndarray | None = None

    def received(self, x: np.ndarray, dv: np.ndarray, dt: float = 1.0, mass: np.ndarray | None = None,
                 collider: int | None = None) -> None:
        """Record the velocity changes ``dv / dt`` (n,3) that the colliders' boundary terms gave the
        particles at ``x`` (``dt``: the substep, when ``dv`` holds displacements); each particle's goes
        to its nearest collider, or all to ``collider`` (``Simulation`` adds the equal and opposite
        impulse to that collider's contact report). ``mass`` (n,) kg: what the rows stand for, where they
        are not the particles (a body's points on the grid projection); by default the particles' (:attr:`masses`).
        Only the rows that moved are divided and copied: the whole array, every substep, cost more than
        the rest of this."""
        moved = np.flatnonzero((dv[:, 0] != 0.0) | (dv[:, 1] != 0.0) | (dv[:, 2] != 0.0))
        if not len(moved):
            return
        if mass is None:
            mass = self.masses if self.masses is not None and len(self.masses) == len(x) else None
        masses = mass
        if collider is not None:
            self.given.append((collider, x[moved], dv[moved] / dt))
            self.given_mass.append(None if masses is None else masses[moved])
            return
        if len(self.placed) == 1:
            self.given.append((0, x[moved], dv[moved] / dt))
            self.given_mass.append(None if masses is None else masses[moved])
            return
        dv = dv[moved] / dt
        pts = np.ascontiguousarray(x[moved])
        dists = np.stack([self._distance_to(c, rot, pos, pts) for c, rot, pos in self.placed])
        nearest = np.argmin(dists, axis=0)
        for k in range(len(self.placed)):
            mine = nearest == k
            if mine.any():
                self.given.append((k, x[moved[mine]], dv[mine]))
                self.given_mass.append(None if masses is None else masses[moved[mine]])

    def static(self) -> Walls | None:
        """The colliders that never move (None if there are none): the walls whose velocity is zero
        (the implicit viscosity's no-slip term holds fluid at the wall's velocity)."""
        if not self._static:
            placed = [p for p in self.placed if not p[0].moving and p[0].rebuild is None]
            self._static.append(Walls(placed, self.scratch, self.spacing, self.h, self.cells) if placed else None)
        return self._static[0]

    def subset(self, placed: list) -> Walls:
        """Some of these colliders as a ``Walls`` of their own, sharing the scratch buffers (the ones a
        mirror does not take: ``mirror.wall_mirror``)."""
        return Walls(placed, self.scratch)

    # -- what the terms take from the colliders ---------------------------------------------------
    def relaxation_walls(self, x: np.ndarray):
        """The density relaxation's boundary at positions ``x``: the mirrored planes, each particle's,
        and the other colliders' fluid (``mirror.relaxation_walls``)."""
        from .mirror import relaxation_walls

        return relaxation_walls(x, self, self.spacing, self.h)

    def no_slip_blocks(self, x: np.ndarray) -> np.ndarray:
        """(n,6) the static colliders' no-slip blocks at positions ``x`` (``lattice_fill.wall_viscosity_blocks``)."""
        from .lattice_fill import wall_viscosity_blocks

        return wall_viscosity_blocks(x, self.static(), self.spacing, self.h)

    def no_slip_sums(self, x: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """(n,c) a viscous term's no-slip share of the static colliders at positions ``x``, from its weight
        per lattice offset (``lattice_fill.no_slip_sums_of``; Morris' explicit viscosity's)."""
        from .lattice_fill import no_slip_sums_of

        return no_slip_sums_of(x, self.static(), self.spacing, self.h, weights)

    def static_cells(self, index: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (m) from the centres of cells ``index`` (k,3, of width ``d``) to the static
        colliders, and the share of a full cell's content they leave each (``static_cells.WallCells``)."""
        return self.cells(self.static(), index, d)

    @staticmethod
    def _distance_to(c, rot, pos, points: np.ndarray) -> np.ndarray:
        from ..colliders.contact.response import placed_distances

        d = np.empty(len(points))
        placed_distances(c.shape.code, c.shape.params, c.shape.grid, np.ascontiguousarray(rot, np.float64),
                         np.ascontiguousarray(pos, np.float64), np.ascontiguousarray(points, np.float64), d)
        return d

    def moving(self) -> list[int]:
        """The colliders that move as rigid bodies (keyframed or dynamic), by index: the grid projection's
        moving solid cells (a collider rebuilt every frame, a deforming mesh, is not among them)."""
        return [k for k, (c, _, _) in enumerate(self.placed) if c.moving and c.rebuild is None]

    def velocity_at(self, k: int, points: np.ndarray) -> np.ndarray:
        """(k,3) m/s, the velocity over the substep of collider ``k``'s material point now at ``points``
        (its pose at the substep's start, :attr:`before`, to its pose now, at fixed velocity)."""
        _, rot, pos = self.placed[k]
        if self.before is None or self.dt <= 0.0:
            return np.zeros(points.shape)
        r0, t0 = self.before[k]
        local = np.einsum("ij,ik->jk", rot, (points - pos).T).T  # R^T (p - t), row by row
        return (points - (np.einsum("ij,kj->ki", np.asarray(r0), local) + t0)) / self.dt

    def distance_to(self, k: int, points: np.ndarray) -> np.ndarray:
        """(k,) signed distance (m) from each point to collider ``k``'s surface, negative inside."""
        c, rot, pos = self.placed[k]
        return self._distance_to(c, rot, pos, points)

    def distance(self, points: np.ndarray) -> np.ndarray:
        """(k,) signed distance (m) from each point to the nearest collider surface, negative inside."""
        best = np.full(len(points), np.inf)
        for c, rot, pos in self.placed:
            np.minimum(best, self._distance_to(c, rot, pos, points), out=best)
        return best

    def nearest(self, points: np.ndarray) -> np.ndarray:
        """(k,) int64 index into ``placed`` of the collider whose surface is nearest each point."""
        pts = np.ascontiguousarray(points, np.float64)
        return np.argmin(np.stack([self._distance_to(c, rot, pos, pts) for c, rot, pos in self.placed]), axis=0)

    def normals(self, points: np.ndarray, step: float) -> np.ndarray:
        """(k,3) unit normal of the nearest collider surface at each point (out of the colliders): the
        distance's gradient by central differences of ``step`` m."""
        grad = np.empty((len(points), 3))
        for axis in range(3):
            shift = np.zeros(3)
            shift[axis] = step
            grad[:, axis] = self.distance(points + shift) - self.distance(points - shift)
        norm = np.linalg.norm(grad, axis=1)
        return grad / np.where(norm > 0.0, norm, 1.0)[:, None]

    def _buffer(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A (rows, cols) float64 view of the scratch buffer ``name``, grown (by a quarter more) when short."""
        buf = self.scratch.get(name)
        if buf is None or buf.shape[0] < rows or buf.shape[1] != cols:
            buf = self.scratch[name] = np.empty((max(rows + rows // 4, 1), cols))
        return buf[:rows]

    def solid_share(self, centres: np.ndarray, offsets: np.ndarray, spacing: float) -> np.ndarray:
        """(k,m) share of the lattice cell at centres[a] + offsets[b] inside any collider (``solid_share``),
        in a buffer kept for the next call (valid until then)."""
        from ..colliders.shapes.sdf_dispatch import EXACT_DISTANCES
        from .solid_share_kernels import solid_share

        share = self._buffer("share", len(centres), len(offsets))
        share.fill(0.0)
        radii = np.linalg.norm(offsets, axis=1)
        for c, rot, pos in self.placed:
            # A sampled or composed field may change faster than 1 per metre (trilinear: up to sqrt 3).
            lipschitz = 1.0 if c.shape.code in EXACT_DISTANCES else 2.0
            solid_share(c.shape.code, c.shape.params, c.shape.grid, np.ascontiguousarray(rot, np.float64),
                        np.ascontiguousarray(pos, np.float64), centres, offsets, radii, lipschitz, spacing, share)
        return share
