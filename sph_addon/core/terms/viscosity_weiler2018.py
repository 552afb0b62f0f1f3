"""Implicit viscosity (Weiler, Koschier, Brand & Bender 2018, "A Physically Consistent Implicit
Viscosity Solver for SPH Fluids"): backward Euler on the viscous term, v - v* = Δt ν ∇²v, solved by a
matrix-free, block-Jacobi preconditioned conjugate gradient (``viscosity_weiler2018_kernels``, whose
docstring has the operator and the deviations from the paper).

The same system takes the terms that add to the viscosity (a yield stress:
:class:`~.base.ViscosityModifier`) and the pair forces that are solved implicitly (springs:
:class:`~.base.ImplicitForces`), found among the model's terms. Colliders at rest hold the fluid
next to them (no slip, ``ctx.walls.no_slip_blocks``) and receive the drag they exert.

Acts on every material through its ``kinematic_viscosity`` (m²/s). The solve runs when a modifier or
an implicit force acts, or when the largest viscosity is resolved by the particles: when the shortest
wave they carry (k = π/s) loses at least ``RESOLVED`` of its amplitude a substep (ν Δt k²). Water
(1e-6 m²/s) at 5 cm and Δt = 6 ms: 2.4e-5, skipped; it is solved from ~1 cm down.
"""

from __future__ import annotations

import logging
import math
from types import SimpleNamespace
from typing import ClassVar

import numpy as np

from ..numerics.lattice import viscosity_lattice_constant
from .base import VELOCITY, ArraySpec, ImplicitForces, Term, ViscosityModifier, Workspace

log = logging.getLogger(__name__)
# Relative residual |A v - ρ v*| / |ρ v*| at which CG stops, and its cap. 1e-6 keeps the decay rate
# of a shear wave within 0.1 % of the converged solve's (measured on the shear-wave test at
# ν Δt K = 0.5-50).
TOLERANCE = 1e-6
MAX_ITERATIONS = 500
RESOLVED = 1e-4


class ViscosityWeiler2018(Term):
    """The implicit viscosity solve (velocity stage)."""

    name = "viscosity_weiler2018"
    citation = ("M. Weiler, D. Koschier, M. Brand, J. Bender, A Physically Consistent Implicit Viscosity Solver "
                "for SPH Fluids, Computer Graphics Forum 37(2), 2018")
    stage = VELOCITY
    parameters = ("kinematic_viscosity",)
    # Whether the solve takes the materials' own ν; False for a model that applies ν explicitly and
    # solves here only what the modifiers add (:class:`AddedViscosityWeiler2018`).
    own_viscosity: ClassVar[bool] = True

    def __init__(self, setup):
        super().__init__(setup)
        # Per material ν. Where every particle has one density the solve runs on unit masses (M = I, η = ν,
        # the same bytes as ever); where densities differ (a liquid beside a solid, oil on water) each row
        # weighs its density (``_masses``), so viscous momentum is exchanged pairwise: m_i Δv_i = -m_j Δv_j.
        self.nu = self.per_material("kinematic_viscosity") if self.own_viscosity else np.zeros(setup.n_materials)
        density = np.asarray(setup.densities, np.float64)
        self._density = density if len(density) == setup.n_materials else np.ones(setup.n_materials)
        self.viscosity_k = viscosity_lattice_constant(setup.spacing, setup.h)
        self.modifiers: list[ViscosityModifier] = []
        self.implicit: list[ImplicitForces] = []
        self._unit_mass = np.ones(0)
        self._no_pairs = None
        self._reset_stats()

    def link(self, terms: list[Term]) -> None:
        self.modifiers = [t for t in terms if isinstance(t, ViscosityModifier)]
        self.implicit = [t for t in terms if isinstance(t, ImplicitForces)]
        if len(self.implicit) > 1:
            raise ValueError(f"{self.name} solves one term's implicit forces, not {[t.name for t in self.implicit]}")

    @property
    def acts(self) -> bool:
        return bool(np.any(self.nu > 0) or any(m.acts for m in self.modifiers)
                    or any(t.acts for t in self.implicit))

    def apply(self, ctx) -> None:
        self.stats["substeps"] += 1
        blocks = self.implicit[0].implicit_blocks(ctx) if self.implicit else None
        nu = float(np.max(self.nu))
        if (blocks is not None or any(m.acts for m in self.modifiers)
                or nu * ctx.dt * (math.pi / ctx.spacing) ** 2 >= RESOLVED):
            self._solve(ctx, blocks)

    def _solve(self, ctx, blocks, first: np.ndarray | None = None) -> None:
        """Backward Euler on the viscous term (Weiler et al. 2018) and the implicit forces, in one
        system solved by CG.

        Implicit forces: v = v* + Δt a(x + θ Δt v), linearised about the current x: the system gains
        θ Δt² K pair blocks (positive semi-definite, so it stays symmetric positive definite), the
        right-hand side v* + Δt a(x).

        The guess is the right-hand side; the solve stops at a residual of ``TOLERANCE`` times its
        norm or at ``MAX_ITERATIONS`` (counted in the frame statistics). The residual left is spread
        over the particles as a uniform velocity shift (which the operator does not see), so the
        total momentum is exactly that of v*: the viscous and pair terms are internal forces. Where
        the particles' densities differ, M = diag(ρ_i) and η = ρ ν as the kernels' system states
        (Weiler's own form; per the lightest density present, ``_masses``): each pair then exchanges
        m_i Δv_i = -m_j Δv_j. With M = I there, water and a 500 kg/m³ jelly lost 3e-5 of their
        momentum in 3 frames; now the residual's 1e-9 is left where walls hold the liquid.
        Colliders at rest hold the fluid next to them (no slip), and receive the drag they exert in
        their contact reports. ``first``: the viscosity to solve with (default: the materials' and
        what the modifiers add at v*).
        """
        from ..numerics.array_kernels import copy_rows
        from . import viscosity_weiler2018_kernels as kernels

        n = ctx.n
        wall_b = ctx.walls.no_slip_blocks(ctx.x) if ctx.walls is not None else np.zeros((n, 6))
        theta = self.implicit[0].theta if self.implicit else 1.0
        coeff = np.array([ctx.dt * self.viscosity_k, 1.0 / ctx.h, theta])
        if blocks is None:
            if self._no_pairs is None or len(self._no_pairs[0]) != n:
                self._no_pairs = (np.empty((n, 0), np.int64), np.empty((n, 0, 2)), np.empty((n, 0, 3)))
            sj, sw, se = self._no_pairs
            rhs = ctx.v
        else:
            sj, sw, se, rhs = blocks
            rhs += ctx.v
        v = np.empty_like(rhs)
        copy_rows(rhs, v)  # numpy's copy runs on one thread; the guess is v* (+ Δt a_s)
        eta = first if first is not None else self._viscosity(ctx, ctx.v)
        mass = self._masses(ctx)
        if mass is not None:
            # M v = M v* + Δt (L v + M a_s): the rows in momentum (per the lightest's density), η = ρ ν the
            # dynamic viscosity in the same units, the springs (one material's pairs) scaled with their rows.
            rhs, eta = rhs * mass[:, None], eta * mass
            sw = sw * mass[:, None, None]
        with ctx.workspace.borrow((3,), (3,), (3,), (3,), (3, 3)) as (r, z, p, ap, inv):
            it, res = kernels.solve(ctx.x, v, ctx.nbr, ctx.count, self._unit_masses(n) if mass is None else mass, eta,
                                    coeff, wall_b, sj, sw, se, rhs, TOLERANCE, MAX_ITERATIONS, inv, r, z, p, ap)
        held = np.flatnonzero(np.any(wall_b != 0.0, axis=1))
        if not len(held):
            if mass is None:
                v += (ctx.v.sum(axis=0) - v.sum(axis=0)) / n
            else:
                v += (mass[:, None] * (ctx.v - v)).sum(axis=0) / mass.sum()
        else:
            # What the walls' no-slip term took from each particle, -Δt K η B_i v_i (the operator's
            # wall part at the solution), goes to the colliders equal and opposite: viscous drag.
            wb = wall_b[held][:, [[0, 3, 4], [3, 1, 5], [4, 5, 2]]]
            drag = np.zeros((n, 3))
            drag[held] = -coeff[0] * eta[held, None] * np.einsum("kij,kj->ki", wb, v[held])
            if mass is not None:
                drag[held] /= mass[held, None]
            ctx.walls.received(ctx.x, drag)
        copy_rows(v, ctx.v)
        st = self.stats
        st["iterations"] += it
        st["iterations_max"] = max(st["iterations_max"], it)
        st["residual"] = max(st["residual"], res)
        if it >= MAX_ITERATIONS and res > TOLERANCE:
            st["capped"] += 1
            log.warning("viscosity solve stopped at its cap of %d iterations with relative residual %.3g",
                        MAX_ITERATIONS, res)

    def _masses(self, ctx) -> np.ndarray | None:
        """(n,) each particle's density over the lightest's present (its mass: one volume for all), or None
        where every particle has one density: the solve then runs on unit masses (``_unit_masses``), the
        same bytes."""
        density = self._density[ctx.material]
        if not len(density) or np.all(density == density[0]):
            return None
        return density / density.min()

    def _unit_masses(self, n: int) -> np.ndarray:
        """n ones, kept from one solve to the next."""
        if len(self._unit_mass) != n:
            self._unit_mass = np.ones(n)
        return self._unit_mass

    def _viscosity(self, ctx, v: np.ndarray) -> np.ndarray:
        """(n,) kinematic viscosity of each particle, m²/s: its material's and what the modifiers add
        at velocities ``v``."""
        eta = self.nu[ctx.material]
        for modifier in self.modifiers:
            if modifier.acts:
                eta = eta + modifier.added_viscosity(ctx, v)
        return eta

    def _reset_stats(self) -> None:
        self.stats = {"substeps": 0, "iterations": 0, "iterations_max": 0, "residual": 0.0, "capped": 0}

    def frame_stats(self, world) -> dict[str, int | float]:
        """The solve's iterations (mean over the frame's substeps and largest), the largest residual
        left, and the solves that reached the cap; nothing where no material is viscous."""
        st = self.stats
        out = {}
        if self.acts:
            out = {"viscosity_iterations": round(st["iterations"] / max(st["substeps"], 1), 3),
                   "viscosity_iterations_max": st["iterations_max"],
                   "viscosity_residual": float(f"{st['residual']:.3g}"), "viscosity_capped": st["capped"]}
        self._reset_stats()
        return out


class AddedViscosityWeiler2018(ViscosityWeiler2018):
    """The same solve for the viscosity its modifiers add (a yield stress) only: for a model whose
    own ν is an explicit force (``sph``), so a stiff paste is not held to the explicit step.

    It solves for the particles of the materials its modifiers act on alone (:meth:`apply`): they are
    held together and to the walls they touch (no slip: a paste sticks where it touches), not to
    particles of other materials (with the pair viscosity the mean of both particles', half the
    putty's, a putty ball stayed where it landed in water), and a few putty balls in a pool cost what
    they alone cost. Its scheme calls it at every micro-step; each solve takes the viscosity of the
    last one's solution (kept per particle in ``added_viscosity``): Picard's iteration carried from
    one micro-step to the next. Taken from v* instead, a lump under its own weight (8 cm of putty on a
    floor) crept down 2 mm per 0.5 s; three Picard sweeps a micro-step held it at three times the cost.
    """

    own_viscosity = False
    arrays = {"added_viscosity": ArraySpec((), np.float64, math.nan,
                                           "viscosity the modifiers (a yield stress) gave the particle at the last "
                                           "solve's solution, m²/s: the next solve's")}

    def __init__(self, setup):
        super().__init__(setup)
        self._part = Workspace()
        self._mine = np.zeros(setup.n_materials, bool)  # the materials a modifier acts on

    def link(self, terms: list[Term]) -> None:
        super().link(terms)
        for m in self.modifiers:
            if m.acts:
                self._mine |= m.materials()

    def active_arrays(self):
        return self.arrays if self._mine.any() else {}

    def apply(self, ctx) -> None:
        self.stats["substeps"] += 1
        if not self._mine.any():
            return
        rows = np.flatnonzero(self._mine[ctx.material])
        if not len(rows):
            return
        part = _part_of(ctx, rows, self._part)
        kept = ctx.arrays["added_viscosity"]
        first = kept[rows]
        fresh = ~np.isfinite(first)
        if fresh.any():
            first[fresh] = self._viscosity(part, part.v)[fresh]
        self._solve(part, None, first)
        ctx.v[rows] = part.v
        kept[rows] = self._viscosity(part, part.v)


def _part_of(ctx, rows: np.ndarray, workspace: Workspace) -> SimpleNamespace:
    """The particles ``rows`` of ``ctx`` as a context of their own: positions, velocities (copies),
    materials, and neighbour rows renumbered among them, a neighbour outside pointing at the particle
    itself (a coincident pair, which carries nothing)."""
    index = np.full(ctx.n, -1, np.int64)
    index[rows] = np.arange(len(rows))
    nbr = index[ctx.nbr[rows]]
    nbr = np.where(nbr < 0, np.arange(len(rows))[:, None], nbr).astype(ctx.nbr.dtype)
    workspace.resize(len(rows))
    walls = None if ctx.walls is None else _PartWalls(ctx, rows)
    return SimpleNamespace(n=len(rows), x=np.ascontiguousarray(ctx.x[rows]), v=np.ascontiguousarray(ctx.v[rows]),
                           nbr=nbr, count=np.ascontiguousarray(ctx.count[rows]), material=ctx.material[rows],
                           h=ctx.h, dt=ctx.dt, spacing=ctx.spacing, walls=walls, workspace=workspace)


class _PartWalls:
    """The walls of a context seen by some of its particles: what those give the colliders is
    reported at the whole world's rows (the reports weigh each row by its particle's mass)."""

    def __init__(self, ctx, rows: np.ndarray):
        self.ctx, self.rows = ctx, rows

    def no_slip_blocks(self, x: np.ndarray) -> np.ndarray:
        return self.ctx.walls.no_slip_blocks(x)

    def received(self, x: np.ndarray, dv: np.ndarray) -> None:
        full = np.zeros((self.ctx.n, 3))
        full[self.rows] = dv
        self.ctx.walls.received(self.ctx.x, full)
