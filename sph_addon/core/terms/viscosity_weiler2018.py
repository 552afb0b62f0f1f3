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

import numpy as np

from ..lattice import viscosity_lattice_constant
from .base import VELOCITY, ImplicitForces, Term, ViscosityModifier

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

    def __init__(self, setup):
        super().__init__(setup)
        # Per material ν. Particles carry equal masses throughout the engine (relaxation, collisions,
        # scheme coupling), so the solve weighs every particle alike (M = I, η = ν): viscous momentum
        # between materials of different densities is exchanged as between equal masses, like every
        # other pair term, until particles carry a mass.
        self.nu = self.per_material("kinematic_viscosity")
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

    def _solve(self, ctx, blocks) -> None:
        """Backward Euler on the viscous term (Weiler et al. 2018) and the implicit forces, in one
        system solved by CG.

        Implicit forces: v = v* + Δt a(x + θ Δt v), linearised about the current x: the system gains
        θ Δt² K pair blocks (positive semi-definite, so it stays symmetric positive definite), the
        right-hand side v* + Δt a(x).

        The guess is the right-hand side; the solve stops at a residual of ``TOLERANCE`` times its
        norm or at ``MAX_ITERATIONS`` (counted in the frame statistics). The residual left is spread
        evenly over the particles (a uniform velocity shift, which the operator does not see), so the
        total momentum is exactly that of v*: the viscous and pair terms are internal forces.
        Colliders at rest hold the fluid next to them (no slip), and receive the drag they exert in
        their contact reports.
        """
        from ..array_kernels import copy_rows
        from . import viscosity_weiler2018_kernels as kernels

        n = ctx.n
        eta = self.nu[ctx.material]
        for modifier in self.modifiers:
            if modifier.acts:
                eta = eta + modifier.added_viscosity(ctx)
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
        if len(self._unit_mass) != n:
            self._unit_mass = np.ones(n)
        v = np.empty_like(rhs)
        copy_rows(rhs, v)  # numpy's copy runs on one thread
        with ctx.workspace.borrow((3,), (3,), (3,), (3,), (3, 3)) as (r, z, p, ap, inv):
            it, res = kernels.solve(ctx.x, v, ctx.nbr, ctx.count, self._unit_mass, eta, coeff, wall_b, sj, sw, se,
                                    rhs, TOLERANCE, MAX_ITERATIONS, inv, r, z, p, ap)
        held = np.flatnonzero(np.any(wall_b != 0.0, axis=1))
        if not len(held):
            v += (ctx.v.sum(axis=0) - v.sum(axis=0)) / n
        else:
            # What the walls' no-slip term took from each particle, -Δt K ν B_i v_i (the operator's
            # wall part at the solution), goes to the colliders equal and opposite: viscous drag.
            wb = wall_b[held][:, [[0, 3, 4], [3, 1, 5], [4, 5, 2]]]
            drag = np.zeros((n, 3))
            drag[held] = -coeff[0] * eta[held, None] * np.einsum("kij,kj->ki", wb, v[held])
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
