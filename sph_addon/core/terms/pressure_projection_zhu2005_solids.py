"""A helper of the term ``pressure_projection_zhu2005`` (Zhu & Bridson 2005): the solids the grid sees.

The grid projection solves for the liquid's pressure on cells. A solid that the cells do not see leaves
a hole where the pressure falls to the air's (a floating crate or jelly sank through the water preset),
so every solid in the liquid is one fluid with it on the grid, of its own density (Carlson, Mucha, van
Horn & Turk 2004, "Rigid fluid: animating the interplay between rigid bodies and fluid"):

1. each solid is a set of points of known mass and velocity: an elastic material's particles, and a
   free rigid body's lattice (``body_lattice``: points a spacing apart inside its shape, its mass
   shared among them, moving with it over the substep, ``Walls.velocity_at``);
2. their velocities go to the faces with the liquid's, weighed by their density relative to the
   liquid's (momentum on the faces), and their content to the cells (a solid's cell is full);
3. the pressure solve weighs each face's pressure gradient by its inverse density relative to the
   liquid's (∇·(1/ρ ∇p), ``face_density``), so a solid's column presses on what is under it with its
   own weight: a body floats where its weight meets the liquid's pressure, as Archimedes says;
4. each point takes the faces' change (FLIP's, the whole of it: a solid is one body, not a film):
   an elastic particle as a push its own solve takes at the next substep (the ``grid_push`` array), a rigid body
   the sum, with its moment, as the impulse it integrates at the next substep.

What the liquid and the solids gained, the walls (static and keyframed colliders) receive, so the
momentum of liquid, solids and walls is kept. Keyframed colliders move as given: their cells are solid
cells moving with them (``pressure_projection_zhu2005._moving_kinds``).
"""

from __future__ import annotations

import numpy as np


class Group:
    """One solid as the grid sees it: points (k,3) m, velocities (k,3) m/s, the mass of each (k,) kg,
    its density over the liquid's, and where the points' velocity change goes: ``rows`` of the
    particles' push (an elastic material) or ``body``, a collider's index (a rigid body)."""

    def __init__(self, x: np.ndarray, v: np.ndarray, mass: np.ndarray, ratio: float, rows=None, body=None):
        self.x, self.v, self.mass, self.ratio = np.ascontiguousarray(x), np.ascontiguousarray(v), mass, ratio
        self.rows, self.body = rows, body


def body_lattice(shape, spacing: float) -> np.ndarray:
    """(k,3) points a spacing apart inside ``shape`` (its local frame), on a lattice centred in its bounds;
    its centre alone for a shape thinner than a spacing."""
    from ..colliders.rigid_body import distances, local_bounds

    lo, hi = local_bounds(shape)
    n = np.maximum(np.floor((hi - lo) / spacing).astype(np.int64), 1)
    start = 0.5 * (lo + hi) - 0.5 * (n - 1) * spacing
    axes = [start[a] + spacing * np.arange(n[a]) for a in range(3)]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    inside = distances(shape, np.eye(3), np.zeros(3), pts) < 0.0
    return pts[inside] if inside.any() else (0.5 * (lo + hi))[None, :]


class Solids:
    """The solids of a substep near the liquid (``gather``), on the grid: :meth:`splat` adds them to the
    liquid's faces and cells, :meth:`take` gives them the faces' change."""

    def __init__(self, groups: list[Group]):
        self.groups = groups
        self._faces: list = []

    @classmethod
    def gather(cls, x: np.ndarray, v: np.ndarray, material: np.ndarray, solid: np.ndarray, densities: np.ndarray,
               walls, lattices: dict, spacing: float, liquid: float) -> Solids | None:
        """The elastic materials' particles (``solid``: per material, whether it keeps its shape;
        ``densities`` per material, kg/m³) and the free rigid bodies among ``walls`` (lattices kept in
        ``lattices`` by collider index); ``liquid``: the liquid's density. None without a solid."""
        from ..colliders.rigid_body import RigidBodyMotion

        groups = []
        for m in np.flatnonzero(solid):
            rows = np.flatnonzero(material == m)
            if len(rows):
                mass = np.full(len(rows), densities[m] * spacing**3)
                groups.append(Group(x[rows], v[rows], mass, densities[m] / liquid, rows=rows))
        if walls is not None:
            for k in walls.moving():
                c, rot, pos = walls.placed[k]
                if not isinstance(c.motion, RigidBodyMotion) or c.motion.scripted:
                    continue
                if k not in lattices:
                    lattices[k] = body_lattice(c.shape, spacing)
                local = lattices[k]
                pts = np.einsum("ij,kj->ki", rot, local) + pos
                each = c.motion.mass / len(local)
                groups.append(Group(pts, walls.velocity_at(k, pts), np.full(len(local), each),
                                    each / (liquid * spacing**3), body=k))
        return cls(groups) if groups else None

    def near(self, bounds: np.ndarray, reach: float) -> Solids | None:
        """Only the points within ``reach`` (m) of ``bounds`` (the liquid's); None if none is."""
        kept = []
        for g in self.groups:
            close = np.all((g.x >= bounds[0] - reach) & (g.x <= bounds[1] + reach), axis=1)
            if close.all():
                kept.append(g)
            elif close.any():
                rows = None if g.rows is None else g.rows[close]
                kept.append(Group(g.x[close], g.v[close], g.mass[close], g.ratio, rows=rows, body=g.body))
        return Solids(kept) if kept else None

    def bounds(self) -> np.ndarray:
        pts = np.concatenate([g.x for g in self.groups])
        return np.stack([pts.min(axis=0), pts.max(axis=0)])

    def splat(self, u: list, w: list, fill: np.ndarray, origin: np.ndarray, inv_d: float, full: float) -> list:
        """Add each group's momentum (velocity times its density ratio) and weight to the faces' sums ``u``,
        ``w`` (per axis) and its content to ``fill`` (over ``full``, a full cell's); returns each face's
        inverse density relative to the liquid's (``face_density``), per axis."""
        import numba

        from . import pressure_projection_zhu2005_kernels as k

        plain = [wa.copy() for wa in w]  # the liquid's weights alone
        volume = [np.zeros(wa.shape) for wa in w]
        for g in self.groups:
            gu, gw = [np.zeros(wa.shape) for wa in w], [np.zeros(wa.shape) for wa in w]
            gf = np.zeros(fill.shape)
            k.splat(g.x, g.v, np.ones(len(g.x), np.bool_), origin, inv_d, *gu, *gw, gf, numba.get_num_threads())
            fill += gf / full
            for axis in range(3):
                u[axis] += g.ratio * gu[axis]
                w[axis] += g.ratio * gw[axis]
                volume[axis] += gw[axis]
        return [face_density(plain[a], w[a], volume[a]) for a in range(3)]

    def take(self, du: list, new: list, known: list, fill: np.ndarray, origin: np.ndarray, inv_d: float,
             push: np.ndarray | None, walls, unit: float) -> np.ndarray:
        """Give each group the faces' change at its points (FLIP's, whole, no PIC share): an elastic
        material's particles in ``push`` (m/s), a body through ``walls.received`` (kg m/s, in rows of
        ``unit`` kg, the liquid's particle mass, as the contact reports count). Returns the momentum the
        solids gained, kg m/s."""
        from . import pressure_projection_zhu2005_kernels as k

        gained = np.zeros(3)
        whole = np.array([-2.0, -1.0])  # a ramp below any content: every point takes the whole change
        for g in self.groups:
            dv = np.empty(g.x.shape)
            k.velocity_changes(g.x, g.v, np.ones(len(g.x), np.bool_), origin, inv_d, *du, *new, *known, fill, whole,
                               0.0, dv)
            momentum = g.mass[:, None] * dv
            gained += momentum.sum(axis=0)
            if g.rows is not None and push is not None:
                push[g.rows] += dv
            elif g.body is not None:
                walls.received(g.x, -momentum / unit, mass=np.full(len(g.x), unit), collider=g.body)
        return gained


def face_density(liquid_weight: np.ndarray, weighted: np.ndarray, solid_weight: np.ndarray) -> np.ndarray:
    """Each face's inverse density relative to the liquid's: (liquid + solid weights) over (liquid weight
    + density ratio times solid weight), 1 where neither reaches the face."""
    total = liquid_weight + solid_weight
    return np.where(weighted > 0.0, total / np.where(weighted > 0.0, weighted, 1.0), 1.0)
