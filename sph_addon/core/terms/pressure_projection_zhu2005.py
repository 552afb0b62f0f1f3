"""Pressure projection with FLIP's transfers (Zhu & Bridson 2005) on a coarse MAC grid (Harlow & Welch
1965): the long-wavelength part of a liquid's pressure, solved before each substep's prediction,
where the relaxation's passes are slowest.

Why. The density relaxation (Clavet 2005, Algorithm 3, run to a tolerance) moves particles against
their neighbours, so a pass carries a correction a few particles far. A column of water under
gravity needs one that reaches from the floor to the surface: the passes crept along that mode (0.02-
0.03 points of compression a pass), a fresh pool fell into its tolerance before
they caught it, and its correction came back as velocity (CHANGELOG.md, method notes). Grid fluid solvers
solve that mode directly: the pressure Poisson equation on cells (Harlow & Welch 1965's MAC grid;
Zhu & Bridson 2005, "Animating Sand as a Fluid", for the particle-grid transfers, FLIP's delta).

What. Every substep, after the velocity stage (gravity, viscosity, surface tension are in v):

1. cells of width ``CELL_WIDTH`` h; the particles' velocities go to the faces and their weights to
   the cell centres (trilinear, as FLIP's particle-to-grid step): a cell's content, 1 when full;
2. a cell whose content, over what a full cell holds beside the walls, reaches 1/2 is fluid; another
   next to fluid whose centre lies inside a static collider solid; any other air
   (``pressure_projection_zhu2005_ghost_fluid``); faces between fluid and solid take the solid's
   velocity, 0 (static colliders only: a moving one is left to the relaxation's wall terms and the
   collisions, as before);
3. -∇²p = -∇·u over the fluid cells (7-point Laplacian, no flux into solid; towards air p = 0 where
   the content crosses 1/2, between the cell centres: the ghost fluid's 1 / θ), by conjugate
   gradients preconditioned by the diagonal, to ``TOLERANCE``; u -= ∇p on the faces between fluid
   and non-solid cells;
4. each particle gains the velocity change of the faces around it (FLIP: the change, not the grid's
   velocity, so the grid adds no viscosity), weights renormalised over the faces that have one.

The relaxation's passes then see only the compression the grid cannot resolve (a cell is two
spacings) and the density error left from earlier substeps, which they correct as before, to the
material's tolerance: the grid moves velocities, never positions.

Deviations and their reasons:

* The surface lies where the content crosses 1/2 (``pressure_projection_zhu2005_ghost_fluid``): with a
  cell fluid as soon as it held one particle, a surface particle rising into the cell above moved its
  column's surface a whole cell, which kicked the resting pool's surface sideways (1-2 cm/s). The
  content is smooth in the positions, so a fluid cell's lattice is never cut into air inside the
  liquid (a threshold on the particle count was).
* Fluid cells sealed off from air by solid cells (a closed pocket) are left out: their pressure is
  undetermined. A closed tank filled to its lid is therefore left to the relaxation.
* Only bodies that touch a static solid through fluid are projected: a drop, a splash or a falling
  thread carries no weight, and the relaxation alone holds it together as before (bit for bit).
* Each particle takes a weight of the change, from the cells' content at it (``WEIGHT_RAMP``): films
  and sheets one or two particles thick are left to the relaxation (projected, they spread on until
  their particles lost their neighbours).
* A share of each particle's velocity relaxes towards the grid's (PIC's share of a FLIP/PIC blend,
  ``PIC_VISCOSITY``), against the noise FLIP keeps.
* Momentum: what the held faces gave the liquid goes to the colliders' contact reports
  (``Walls.received``), at those faces, so momentum between liquid and colliders balances exactly.
* The solve starts from the pressure each particle carried out of the last one (``grid_pressure``, a
  particle array, so a resumed bake starts where the straight one does).
"""

from __future__ import annotations

import math

import numpy as np

from .base import VELOCITY, ArraySpec, Term
from .pressure_projection_zhu2005_ghost_fluid import SURFACE_FILL, THETA_MIN

# Cell width in units of the support radius h (two spacings at h = 2 s: eight particles a cell, as
# FLIP's usual 2x2x2 per cell).
CELL_WIDTH = 1.0
# Relative residual at which the pressure solve stops, and its cap (reported when reached).
TOLERANCE = 1e-5
MAX_ITERATIONS = 1000
# The weight of a particle's change rises from 0 to 1 as the cells' content at it (1: a full cell;
# solid cells count as full) rises over this range: 1 in the bulk and along walls (1.0), 0.75-1 in
# a pool's top layer, 0 in a film or a sheet one or two particles thick, which the relaxation
# alone holds (CHANGELOG.md, method notes: projected, a film spread on, a weight that switched with a cell's
# particle count threw a resting pool's surface up).
WEIGHT_RAMP = (0.45, 0.6)
# The viscosity (m²/s) of the particles' relaxation towards the grid's velocity (PIC's share of the
# FLIP/PIC blend): a share 1 - exp(-Δt/τ) a substep with τ = Δ² / (π² PIC_VISCOSITY), Δ the cell, so
# that the blend damps as one viscosity in physical units at every resolution (a fixed τ made a
# coarse dam break viscous: its front 6 % slow at a/spacing = 10). 1.5e-3 m²/s: τ = 0.17 s at h = 5
# cm, where it halves the resting pool's 90th percentile at 2 s (0.44 -> 0.22 cm/s,
# CHANGELOG.md, method notes); the dam break's Reynolds number sqrt(g a) a / ν is still 2000 at a = 1 m.
PIC_VISCOSITY = 1.5e-3

# The per-particle array (m/s, declared by the solid's term, ``elasticity_becker2009``) that receives the
# velocity the grid's pressure gave each of a solid's particles in the last substep.
GRID_PUSH = "grid_push"


def _grown(mask: np.ndarray) -> np.ndarray:
    """``mask`` with the six neighbours of each of its cells. At the grid's edges it wraps around, to
    the opposite margin cell: one that holds no particle, so no face the solve reads."""
    out = mask.copy()
    for axis in range(3):
        for shift in (1, -1):
            out |= np.roll(mask, shift, axis=axis)
    return out


class GridProjection:
    """The projection's statistics and the last substep's length; :meth:`project` runs it on one
    substep's velocities."""

    def __init__(self):
        self.reset_stats()
        self.last_dt = 0.0  # the last solve's substep, s (0: none; checkpointed by the term)

    def reset_stats(self) -> None:
        self.stats = {"iterations": 0, "calls": 0, "iterations_max": 0, "residual": 0.0, "capped": 0}

    def frame_stats(self) -> dict[str, int | float]:
        """The frame's solves (mean and largest iterations a substep, solves that reached the cap), reset."""
        st = self.stats
        out = {"projection_iterations": round(st["iterations"] / max(st["calls"], 1), 3),
               "projection_iterations_max": st["iterations_max"], "projection_capped": st["capped"]}
        self.reset_stats()
        return out

    def project(self, x: np.ndarray, v: np.ndarray, sel: np.ndarray, walls, h: float, dt: float,
                pressure_at: np.ndarray, solids=None, unit: float = 1.0, push: np.ndarray | None = None) -> None:
        """Project ``v`` (n,3, m/s, in place) of the rows where ``sel`` onto the grid's divergence-free
        fields; ``walls``: the substep's ``Walls`` (None without colliders: nothing to project);
        ``pressure_at`` (n,): each particle's cell's pressure after the last solve, m²/s, updated.

        ``solids`` (``pressure_projection_zhu2005_solids.Solids``, or None): the elastic materials' particles
        and the free bodies, one fluid with the liquid on the grid; ``unit``: the liquid's particle mass, kg;
        ``push`` (n,3): where the elastic particles' velocity change goes (m/s)."""
        import numba

        from ..numerics.array_kernels import step_rows
        from . import pressure_projection_zhu2005_faces as kf
        from . import pressure_projection_zhu2005_kernels as k

        bounds = np.empty((2, 3))
        if walls is None or not k.selected_bounds(x, sel, bounds):
            return
        d = CELL_WIDTH * h
        inv_d = 1.0 / d
        solids = solids.near(bounds, 2.0 * d) if solids is not None else None
        if solids is not None:
            reach = solids.bounds()
            bounds = np.stack([np.minimum(bounds[0], reach[0]), np.maximum(bounds[1], reach[1])])
        lo = np.floor(bounds[0] * inv_d).astype(np.int64) - 1
        dims = tuple(int(n) for n in np.floor(bounds[1] * inv_d).astype(np.int64) - lo + 2)
        origin = lo * d
        cell = np.empty(len(x), np.int64)
        k.particle_cells(x, sel, origin, inv_d, *dims, cell)
        counts = np.zeros(math.prod(dims), np.int64)
        carried = np.zeros(counts.size)  # the pressures the particles carry from the last solve, summed
        k.cell_sums(cell, pressure_at, counts, carried)
        faces = [tuple(n + (a == axis) for a, n in enumerate(dims)) for axis in range(3)]
        u = [np.zeros(f) for f in faces]
        w = [np.zeros(f) for f in faces]
        fill = np.zeros(dims)
        k.splat(x, v, sel, origin, inv_d, *u, *w, fill, numba.get_num_threads())
        fill /= CELL_WIDTH**3 * 8.0
        density = solids.splat(u, w, fill, origin, inv_d, CELL_WIDTH**3 * 8.0) if solids is not None else None
        kind, fill, us = self._all_kinds(fill, counts.reshape(dims), lo, d, walls, faces)
        flat = kind.reshape(-1)
        row = np.empty(flat.size, np.int64)
        nbr = np.empty((int(np.count_nonzero(flat == k.FLUID)), 6), np.int64)
        m = k.fluid_rows(flat, *dims, row, nbr)
        if m == 0:
            return
        div = np.zeros(dims)  # d times the divergence (static solids' faces held at 0)
        solved, held = [np.empty(f, np.bool_) for f in faces], [np.empty(f, np.bool_) for f in faces]
        ghost = [np.empty(f) for f in faces]
        for axis in range(3):
            kf.face_terms(kind, (k.FLUID, k.AIR, k.SOLID), fill, axis, SURFACE_FILL, THETA_MIN, u[axis], w[axis],
                          us[axis], solved[axis], held[axis], ghost[axis], div)
            if density is not None:  # ∇·(1/ρ ∇p): each face's gradient over its density (the solids')
                ghost[axis] *= density[axis]
        fill[kind == k.SOLID] = 1.0
        cells = np.flatnonzero(row >= 0)
        rhs = np.empty(m)
        surface = np.empty((m, 6))  # 1 / θ towards each neighbour (used where it is air)
        kf.solve_rows(row, div, *ghost, d, rhs, surface)
        # The guess: the pressure the particles now in each cell carried from the last solve (kept with
        # them, so a resumed bake starts where the straight one does), for the same substep's length.
        scale = dt / self.last_dt if self.last_dt > 0.0 else 0.0
        p = scale * carried[cells] / np.maximum(counts[cells], 1)
        it, res = k.solve(nbr, surface, m, rhs, p, TOLERANCE, MAX_ITERATIONS, *(np.empty(m) for _ in range(3)))
        pressure = np.zeros(flat.size)
        pressure[cells] = p
        k.pressures_at_particles(cell, pressure, pressure_at)
        self.last_dt = dt
        pressure = pressure.reshape(dims)
        du, new = [np.empty(f) for f in faces], [np.empty(f) for f in faces]
        for axis in range(3):
            kf.face_changes(pressure, axis, solved[axis], held[axis], ghost[axis], u[axis], us[axis], inv_d, du[axis],
                            new[axis])
        dv = np.empty_like(v)
        share = -math.expm1(-dt * PIC_VISCOSITY * (math.pi / d) ** 2)
        k.velocity_changes(x, v, sel, origin, inv_d, *du, *new, *(s | f for s, f in zip(solved, held)), fill,
                           np.array(WEIGHT_RAMP), share, dv)
        step_rows(v, 1.0, dv, v)  # v += dv in parallel (1.0 dv is dv: the same sums)
        total = dv.sum(axis=0)
        if solids is not None:
            known = [s | f for s, f in zip(solved, held)]
            total = total + solids.take(du, new, known, fill, origin, inv_d, push, walls, unit) / unit
        self._report(walls, total, origin, d, held, u, w, us)
        st = self.stats
        st["iterations"] += it
        st["calls"] += 1
        st["iterations_max"] = max(st["iterations_max"], it)
        st["residual"] = max(st["residual"], res)
        st["capped"] += int(it >= MAX_ITERATIONS and res > TOLERANCE)

    @staticmethod
    def _report(walls, total: np.ndarray, origin: np.ndarray, d: float, held: list, u: list, w: list,
                us: list) -> None:
        """Give the colliders the velocity change ``total`` (summed over the particles, m/s, the solids'
        momentum counted in the liquid's particle masses) the projection gave the liquid and the solids,
        spread over the faces where they held it, as each face's change times the particles' weight
        there, at the faces' centres (``Walls.received``)."""
        points, shares = [], []
        for axis in range(3):
            idx = np.argwhere(held[axis])
            if not len(idx):
                continue
            offset = np.full(3, 0.5)
            offset[axis] = 0.0
            points.append(origin + (idx + offset) * d)
            share = np.zeros((len(idx), 3))
            change = -u[axis][held[axis]] if us[axis].shape[0] == 0 else us[axis][held[axis]] - u[axis][held[axis]]
            share[:, axis] = change * w[axis][held[axis]]
            shares.append(share)
        if not points:
            return
        points, shares = np.concatenate(points), np.concatenate(shares)
        # Each face takes its share of the total along each axis (evenly where no face pushed along
        # it): the colliders receive exactly what the particles gained.
        size = np.abs(shares)
        sums = size.sum(axis=0)
        weight = np.where(sums > 0.0, size / np.where(sums > 0.0, sums, 1.0), 1.0 / len(points))
        walls.received(points, weight * total)

    def _kinds(self, fill: np.ndarray, counts: np.ndarray, lo: np.ndarray, d: float, walls) -> tuple:
        """Cell kinds, and ``fill`` over a full cell's content beside the static colliders
        (``pressure_projection_zhu2005_ghost_fluid``): fluid where that reaches the surface's
        ``SURFACE_FILL`` (and the centre lies outside the static colliders, or particles are in the
        cell); among the other cells next to fluid, solid where the centre is inside a static collider
        (only those matter to the solve); air elsewhere. ``lo``: the grid's first cell, global index."""
        from . import pressure_projection_zhu2005_kernels as k

        static = walls.static()
        if static is None:
            return np.where(fill >= SURFACE_FILL, k.FLUID, k.AIR).astype(np.int8), fill
        cand = np.flatnonzero(_grown(fill > 0.0).reshape(-1))  # every cell fluid or next to it
        dist, reference = walls.static_cells(lo + np.stack(np.unravel_index(cand, fill.shape), axis=1), d)
        inside = np.zeros(fill.size, bool)
        inside[cand] = dist < 0.0
        return _by_content(fill, counts, cand, reference, inside)

    def _all_kinds(self, fill: np.ndarray, counts: np.ndarray, lo: np.ndarray, d: float, walls, faces: list) -> tuple:
        """(kind, fill, us): the cells' kinds and contents (:meth:`_kinds`, :meth:`_moving_kinds` where
        keyframed colliders move) and each face's held velocity per axis (empty: static solids only)."""
        moving = _keyframed(walls)
        if not moving:
            kind, fill = self._kinds(fill, counts, lo, d, walls)
            return kind, fill, [np.zeros((0, 0, 0))] * 3
        kind, fill, vcell = self._moving_kinds(fill, counts, lo, d, walls, moving)
        return kind, fill, [_held_velocity(kind, vcell, axis, f) for axis, f in enumerate(faces)]

    def _moving_kinds(self, fill: np.ndarray, counts: np.ndarray, lo: np.ndarray, d: float, walls,
                      moving: list) -> tuple:
        """:meth:`_kinds` with keyframed colliders (``moving``, by index): a cell whose centre lies inside
        one is a solid cell moving with it. Returns (kind, fill, vcell), ``vcell`` (cells, 3) the velocity
        of each solid cell, m/s (a keyframed collider's at the cell's centre over the substep, 0 for the
        static ones)."""

        cand = np.flatnonzero(_grown(fill > 0.0).reshape(-1))  # every cell fluid or next to it
        index = lo + np.stack(np.unravel_index(cand, fill.shape), axis=1)
        inside = np.zeros(fill.size, bool)
        reference = np.ones(len(cand))
        if walls.static() is not None:
            dist, reference = walls.static_cells(index, d)
            inside[cand] = dist < 0.0
        vcell = np.zeros((fill.size, 3))
        centres = np.ascontiguousarray((index + 0.5) * d)
        dist = np.stack([walls.distance_to(m, centres) for m in moving])
        nearest = np.argmin(dist, axis=0)
        dist = dist[nearest, np.arange(len(cand))]
        mine = walls.subset([walls.placed[m] for m in moving])
        # The content the moving colliders leave a cell beside them, with the static ones' (where both
        # reach a cell, the share of each is counted: the reference only grows).
        reference = np.maximum(reference + walls.cells.references(mine, centres, dist, d) - 1.0, 0.05)
        into = dist < 0.0
        inside[cand[into]] = True
        for j, m in enumerate(moving):
            at = into & (nearest == j)
            vcell[cand[at]] = walls.velocity_at(m, centres[at])
        kind, fill = _by_content(fill, counts, cand, reference, inside)
        return kind, fill, vcell.reshape(fill.shape + (3,))


def _by_content(fill: np.ndarray, counts: np.ndarray, cand: np.ndarray, reference: np.ndarray,
                inside: np.ndarray) -> tuple:
    """(kind, fill): the candidate cells' ``fill`` over the content the colliders leave them
    (``reference``), fluid where that reaches ``SURFACE_FILL`` (outside the colliders, ``inside`` flat,
    or holding particles), solid where a cell next to fluid lies inside one, air elsewhere."""
    from . import pressure_projection_zhu2005_kernels as k

    fill = fill.copy()
    fill.reshape(-1)[cand] /= reference
    inside = inside.reshape(fill.shape)
    fluid = (fill >= SURFACE_FILL) & (~inside | (counts > 0))
    kind = np.where(fluid, k.FLUID, k.AIR).astype(np.int8)
    kind[_grown(fluid) & ~fluid & inside] = k.SOLID
    return kind, fill


def _keyframed(walls) -> list[int]:
    """The moving colliders whose motion is given (keyframed, or a dynamic one still scripted): solid
    cells moving with them. A free body is one fluid with the liquid instead
    (``pressure_projection_zhu2005_solids``)."""
    from ..colliders.rigid_body import RigidBodyMotion

    if walls is None:
        return []
    return [k for k in walls.moving() if not isinstance(walls.placed[k][0].motion, RigidBodyMotion)
            or walls.placed[k][0].motion.scripted]


def _held_velocity(kind: np.ndarray, vcell: np.ndarray, axis: int, shape: tuple) -> np.ndarray:
    """The velocity along ``axis`` of the solid cell beside each face normal to it (0 where neither side is
    solid): what a held face is set to (``pressure_projection_zhu2005_faces``)."""
    from . import pressure_projection_zhu2005_kernels as k

    vs = np.where(kind == k.SOLID, vcell[..., axis], 0.0)
    out = np.zeros(shape)
    n = kind.shape[axis]
    high = [slice(None)] * 3
    high[axis] = slice(0, n)  # faces whose high side is cell m
    low = [slice(None)] * 3
    low[axis] = slice(1, n + 1)  # faces whose low side is cell m
    out[tuple(high)] += vs
    out[tuple(low)] += vs
    return out


PROJECTION_CHOICES = ("grid", "none")


class PressureProjectionZhu2005(Term):
    """The grid projection of the materials whose ``pressure_projection`` is ``"grid"`` (velocity stage,
    last: after every other velocity term, before the prediction)."""

    name = "pressure_projection_zhu2005"
    citation = "Y. Zhu, R. Bridson, Animating Sand as a Fluid, SIGGRAPH 2005 (MAC grid: Harlow & Welch 1965)"
    stage = VELOCITY
    parameters = ("pressure_projection",)
    arrays = {"grid_pressure": ArraySpec((), np.float64, 0,
                                         "the grid projection's pressure in the particle's cell, m²/s")}

    def __init__(self, setup):
        super().__init__(setup)
        self.projected = self.per_material("pressure_projection", bool, lambda c: c == "grid")
        self.grid = GridProjection()
        self.solids = np.zeros(setup.n_materials, bool)
        self.solids[:len(setup.solids)] = setup.solids
        self.densities = np.asarray(setup.densities, np.float64)
        self.lattices: dict = {}  # each free body's points, by collider index (``_solids.body_lattice``)

    def active_arrays(self):
        return self.arrays if self.projected.any() else {}

    def apply(self, ctx) -> None:
        from .pressure_projection_zhu2005_solids import Solids

        if not self.projected.any() or ctx.walls is None:  # without colliders nothing is projected
            return
        sel = self.projected[ctx.material]
        liquid = float(self.densities[self.projected].mean())  # kg/m³ (the liquids' mean where several)
        solids = Solids.gather(ctx.x, ctx.v, ctx.material, self.solids, self.densities, ctx.walls, self.lattices,
                               ctx.spacing, liquid)
        self.grid.project(ctx.x, ctx.v, sel, ctx.walls, ctx.h, ctx.dt, ctx.arrays.get("grid_pressure"), solids,
                          liquid * ctx.spacing**3, ctx.arrays.get(GRID_PUSH))

    def frame_stats(self, world) -> dict[str, int | float]:
        return self.grid.frame_stats()

    def state_dict(self) -> dict:
        return {"projection_dt": self.grid.last_dt}

    def load_state_dict(self, state: dict) -> None:
        self.grid.last_dt = float(state.get("projection_dt", 0.0))
