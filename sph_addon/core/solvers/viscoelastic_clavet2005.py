"""Viscoelastic fluids by prediction-relaxation (Clavet 2005): the model and its parameters.

Reference: S. Clavet, *Animation de fluides viscoélastiques à base de
particules*, M.Sc. thesis, Université de Montréal, 2005 (English short form:
Clavet, Beaudoin, Poulin, "Particle-based Viscoelastic Fluid Simulation",
SCA 2005).

This module declares the parameters (read by the scene validator, the docs and
the Blender UI without importing numba) and the :class:`ViscoelasticModel`
stage object; the numba kernels, imported when a model is built, are in
``viscoelastic_clavet2005_kernels`` and ``density_relaxation_kernels`` with their conventions.

Physical units (the liquid side; derivations in ``liquid_units`` and
docs/materials.md). The artist sets density ρ (kg/m³), surface tension γ (N/m)
and the largest mean compression (``density_error``); Clavet's constants follow
from them, the spacing s, the radius h and the substep Δt:

* the relaxation runs on Clavet's near density ρ^near = Σ (1-q)³ alone (eq. 4.3), ρ0^near its sum
  over the simple cubic lattice every source fills (a fill is at rest); Clavet's density Σ (1-q)²
  (eq. 4.1) has no gain: a resting liquid settles into the cubic lattice with every other column
  shifted by s/2, where Σ (1-q)² is 2 % smaller at the same number density and the pool packed
  1.6 % more particles than it was filled with (Σ (1-q)³: 0.5 %; docs/materials.md);
* P^near = k^near (ρ^near - ρ0^near)⁺ (eq. 4.4 made one-sided): a liquid has no tension of its own,
  so without surface tension it spreads to a film; Clavet's two-sided form gives every liquid a
  cohesion that grows with k, i.e. with the substep and the spacing (the gel the old presets made);
* k^near Δt² = 0.45 h / (3 Σ (1-q)⁴): under half the Newton step of one particle's constraint per
  pass (reported as k^near = k^near Δt² / Δt² by :meth:`ViscoelasticModel.derived_constants`), each
  pair's push capped at 0.01 h (``density_relaxation_kernels.PAIR_CAP``); passes repeat
  until the target is met (``_relax``), which makes the compression a property of the material
  rather than of k, Δt and s, each extrapolated along the last two (Chebyshev,
  ``relaxation_passes``); the density error keeps its meaning (Clavet's density's), the near
  density moving 1.22 times as much (``liquid_units.near_error_ratio``, at h = 2 s);
* a thin liquid's long-wavelength pressure (a column's weight, a pool at rest, a dam break's
  collapse) comes from a coarse grid projection of its velocities before the prediction
  (``grid_projection``: a MAC grid's Poisson solve with FLIP's transfers), which the passes crept
  along; they correct what is left, one pass a substep in a resting pool (docs/materials.md);
* flat walls (a closed tank's faces, the ground plane) mirror the liquid (``wall_images``); other
  colliders add the density of the fluid missing behind them (``liquid_units.wall_terms``), so the
  layer on a floor is not over-packed;
* surface tension is a continuum surface force γ κ n (Brackbill 1992) from the
  curvature of the colour field (``surface_tension_kernels``), calibrated on
  the lattice (``liquid_units.csf_tension``): a drop rings at Rayleigh's
  frequency; a pair cohesion force, tried first, made the liquid a solid with
  a yield stress (the drop froze in its deformed shape);
* XSPH smoothing (0.05 per substep) damps particle-scale noise;
* springs (Algorithm 5) with k_spring from Young's modulus (``liquid_units.spring_stiffness``) are
  not moved explicitly as in the thesis: their forces join the implicit viscosity solve, backward
  Euler linearised about the substep's start (``implicit_viscosity_kernels``, :meth:`_viscosity`),
  so E no longer limits the substep; creation and plasticity (eq. 5.2) stay in the position stage.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from . import grid_projection as grid
from . import liquid_units as units
from .base import ArraySpec, DerivedConstant, MaterialModel, ModelSetup, StepContext, WorldView
from .presets import VISCOELASTIC_PRESETS
from .relaxation_passes import ChebyshevPasses, density_errors
from .viscoelastic_clavet2005_parameters import (
    NAME,
    PARAMETERS,
    SPRING_MODES,
    SPRINGS_DYNAMIC,
    SPRINGS_MOULD,
    SPRINGS_NONE,
)
from .wall_images import relaxation_walls

log = logging.getLogger(__name__)
# XSPH velocity smoothing per substep (xsph_kernels.smooth_velocities): measured on the 0.5 m pool,
# 0.05 brings the 90th-percentile speed after 2 s from 3 cm/s to 0.9 cm/s and leaves the dam
# break's front unchanged to 1 %.
XSPH = 0.05
# Implicit viscosity solve: relative residual |A v - ρ v*| / |ρ v*| at which CG stops, and its cap.
# 1e-6 keeps the decay rate of a shear wave within 0.1 % of the converged solve's (measured on the
# shear-wave test at ν Δt K = 0.5-50).
VISCOSITY_TOLERANCE = 1e-6
VISCOSITY_MAX_ITERATIONS = 500
# The solve is skipped where the viscosity is below what the particles resolve: when the shortest
# wave they carry (k = π/s) would lose less than this share of its amplitude per substep (ν Δt k²).
# Water (1e-6 m²/s) at 5 cm and Δt = 6 ms: 2.4e-5, skipped; it is solved from ~1 cm down.
VISCOSITY_RESOLVED = 1e-4
# Springs in the implicit solve: their force is taken at x + θ Δt v, v the new velocity (``_viscosity``).
# θ = 1 is backward Euler (CHANGELOG.md, method notes, "Springs": smaller θ rang until the column fell).
SPRING_THETA = 1.0
# Longest substep of a material with springs, s, whatever its Young's modulus: the springs are
# linearised about the positions at the start of the substep and contacts are resolved after the
# solve, so in a longer substep an impact pushes a layer v Δt into the next before the springs see
# it. Measured on a 0.1 m block of E = 1 MPa dropped 5 cm at 2 cm spacing: at 2-4 substeps per frame
# (8-17 ms) it settled 8-14 % flattened and kept jittering at 0.4 m/s; at 1/180 s (6 per frame at
# 30 fps, what water takes in the material_cost scene) within 1.3 % of its height, at rest.
SPRING_MAX_DT = 1.0 / 180.0
# ... and at most this many spacings of travel per substep for their fastest particle, for the same
# reason at impacts (a jelly cube's landing, measured in docs/materials.md, "Springs at impacts").
SPRING_CFL = 0.5
# A frame fails when a substep ends with a material's mean compression this many times its target
# (``failure``): the relaxation's passes are capped, so a liquid squeezed that far has come apart.
DENSITY_BLOWUP = 10.0
# ... and at least this compression (10 %), so a strict target (0.1 %) with a low iteration cap is
# reported as capped, not as a blow-up, where the liquid still holds together.
DENSITY_BLOWUP_FLOOR = 0.1


class ViscoelasticModel(MaterialModel):
    """Every material whose model is ``viscoelastic`` (Clavet 2005), on the model contract (base.py).

    It contributes viscosity impulses and the grid projection to the velocity stage and springs plus
    density relaxation to the position stage (Clavet Algorithm 1, lines 5 and 12-16). Per-material
    constants are packed into arrays indexed by material id; materials of other models get zero
    constants, so their particles exert no viscoelastic terms of their own but are still pushed by
    viscoelastic neighbours.

    Spring state lives in the particle arrays ``spring_partner`` (n,S) int64
    (partner ids, -1 free) and ``spring_rest`` (n,S) float64, and ``bonded``
    (n,) uint8 for mould springs, so it is permuted, filtered and checkpointed
    with everything else; they are only added when a material uses springs.
    """

    name = NAME
    label = "Viscoelastic"
    description = ("Clavet 2005 prediction-relaxation: liquids, oil, honey, chocolate, mud, toothpaste, slime, "
                   "dough, plasticine, jelly, rubber")
    citation = "Clavet, Beaudoin, Poulin, Particle-based Viscoelastic Fluid Simulation, SCA 2005 (thesis 2005)"
    parameters = PARAMETERS
    presets = VISCOELASTIC_PRESETS
    integrator = "prediction_relaxation"
    arrays = {
        "spring_partner": ArraySpec((16,), np.int64, -1, "ids of spring partners, -1 for a free slot"),
        "spring_rest": ArraySpec((16,), np.float64, 0, "spring rest lengths L, m"),
        "bonded": ArraySpec((), np.uint8, 0, "1 once a mould material's particle got its springs"),
        "grid_pressure": ArraySpec((), np.float64, 0, "the grid projection's pressure in the particle's cell, m²/s"),
    }

    def __init__(self, setup: ModelSetup):
        from . import density_relaxation_kernels, relaxation_kernels
        from . import viscoelastic_clavet2005_kernels as kernels

        super().__init__(setup)
        self.k = kernels
        self.relaxation = density_relaxation_kernels.double_density_relaxation
        self.compression_sums = relaxation_kernels.compression_sums
        s, h = setup.spacing, setup.h
        owned = np.zeros(setup.n_materials, bool)
        owned[list(setup.materials)] = True
        self.owned = owned
        rho0, rho0_near = units.rest_densities(s, h)
        gain, gain_near = units.relaxation_gains(s, h)
        # Materials of other models get zero gains: they exert no pressure of their own.
        self.gain = np.where(owned, gain, 0.0)
        self.gain_near = np.where(owned, gain_near, 0.0)
        self.rho0 = np.full(setup.n_materials, rho0)
        self.rho0_near = np.full(setup.n_materials, rho0_near)
        # density_error is Clavet's density's error, as before; the passes measure the near density's.
        self.near_ratio = units.near_error_ratio(s, h)
        self.target = self.per_material("density_error")
        self.cap = int(max((p.max_iterations for p in setup.materials.values()), default=1))
        self.xsph = np.where(owned, XSPH, 0.0)
        # Surface tension by CSF (surface_tension_kernels): per-material γ/K (N/m), which turns the
        # curvature into a tension, and ρ (kg/m³); the explicit force limits the substep.
        self.tension = np.zeros(setup.n_materials)
        self.density = np.ones(setup.n_materials)
        # Clavet's k_spring (1/s², Algorithm 5) from E: liquid_units.spring_stiffness.
        self.k_spring = np.zeros(setup.n_materials)
        for m, p in setup.materials.items():
            self.tension[m] = units.csf_tension(p.surface_tension, s, h)
            self.density[m] = p.density
            self.k_spring[m] = units.spring_stiffness(p.youngs_modulus, p.density, s, h)
        self.tension_dt = min((units.surface_tension_stable_dt(p.surface_tension, p.density, s)
                                for p in setup.materials.values()), default=math.inf)
        self.beta = self.per_material("stiff_viscosity")
        # Implicit viscosity (implicit_viscosity_kernels), per material ν. Particles carry equal masses
        # throughout the engine (relaxation, collisions, scheme coupling), so the solve weighs every
        # particle alike (M = I, η = ν): viscous momentum between materials of different densities
        # is exchanged as between equal masses, like every other pair term, until particles carry a mass.
        self.nu = self.per_material("kinematic_viscosity")
        # Bingham yield stress as a viscosity τ_y / (ρ |γ̇|), regularised (Papanastasiou 1987).
        self.yield_nu = self.per_material("yield_stress") / self.density
        self.gradient_k = units.gradient_lattice_constant(s, h)
        self.viscosity_k = units.viscosity_lattice_constant(s, h)
        self.alpha = self.per_material("plasticity")
        self.gamma = self.per_material("yield_ratio")
        # Maxwell relaxation time τ (s) per material; 0 = none (``_springs`` turns it into a share per substep).
        self.tau = self.per_material("relaxation_time")
        self.mode = self.per_material("springs", np.int64, SPRING_MODES.__getitem__)
        # Per-material flags for the kernels (they read no constants from this module).
        self.dynamic = (self.mode == SPRINGS_DYNAMIC).astype(np.uint8)
        self.mould = (self.mode == SPRINGS_MOULD).astype(np.uint8)
        self.has_springs = bool(np.any(self.mode != SPRINGS_NONE))
        # The grid projection's materials: the thin liquids (``grid_projection.LIQUID_VISCOSITY``).
        self.projected = grid.projected(owned, self.nu, self.yield_nu, self.mode != SPRINGS_NONE)
        # Iterations the last substep needed and its length: the cost model's estimate.
        self.last_iterations, self.last_dt = 1, 0.0
        self.accel = ChebyshevPasses(relaxation_kernels.extrapolate)
        self.projection = grid.GridProjection()
        self._reset_stats()
        self._scratch_n = -1
        self._spring_shape = None

    @classmethod
    def derived(cls, params, spacing: float, h: float, dt: float | None = None) -> tuple[DerivedConstant, ...]:
        """Clavet's constants as a bake derives them (module ``liquid_units``): the lattice's rest
        densities, the relaxation's gains, and with a substep ``dt`` the stiffnesses k and k^near
        (m/s², eqs. 4.2, 4.4) and the longest step the surface tension allows."""
        rho0, rho0_near = units.rest_densities(spacing, h)
        gain, gain_near = units.relaxation_gains(spacing, h)
        out = [DerivedConstant("rest_density", rho0, "", "Rest density (a lattice sum)"),
               DerivedConstant("rest_density_near", rho0_near, "", "Near rest density (a lattice sum)"),
               DerivedConstant("gain_m", gain, "m", "Gain k Δt² (Clavet's density has none)"),
               DerivedConstant("gain_near_m", gain_near, "m", "Gain k_near Δt² (the relaxation uses it alone)")]
        if dt:
            out += [DerivedConstant("stiffness", gain / dt**2, "m/s^2", "Stiffness k"),
                    DerivedConstant("stiffness_near", gain_near / dt**2, "m/s^2", "Stiffness k_near")]
        tension_dt = units.surface_tension_stable_dt(params.surface_tension, params.density, spacing)
        if math.isfinite(tension_dt):
            out.append(DerivedConstant("tension_dt", tension_dt, "s", "Longest substep the surface tension allows"))
        return tuple(out)

    def active_arrays(self):
        wanted = {"grid_pressure"} if self.projected.any() else set()
        if self.has_springs:
            wanted |= {"spring_partner", "spring_rest", "bonded"}
        return {k: a for k, a in self.arrays.items() if k in wanted}

    def expected_iterations(self, dt: float) -> float:
        """Relaxation passes a substep of ``dt`` s is expected to need, from the last one measured.

        The compression a substep must undo grows with Δt² (gravity and impacts
        predict x + Δt v), and each pass removes a fixed share of it; measured on
        the dam break, passes grow about linearly with Δt (``config.ITERATIONS_DT_EXPONENT``).

        Before any substep was measured (a bake's first frame): from the compression gravity adds
        per substep, g Δt² in spacings, over the density error (``config.FIRST_FRAME_PASSES``).
        """
        from .. import config

        if self.last_dt <= 0.0:
            target = float(np.min(self.target[self.owned]))
            compression = self.setup.gravity * dt**2 / self.setup.spacing
            return max(1.0, config.FIRST_FRAME_PASSES * compression / target)
        return max(1.0, self.last_iterations * (dt / self.last_dt) ** config.ITERATIONS_DT_EXPONENT)

    def substep_cost(self, frame_dt: float, substeps: int) -> float:
        """Relative cost of a frame in ``substeps`` substeps, in units of one substep's fixed work.

        The fixed work per substep (neighbour search, viscosity, collisions) grows
        as S; the passes per substep (:meth:`expected_iterations`) shrink with the
        substep. One pass costs ``config.RELAXATION_PASS_COST`` of the fixed work
        (measured). The simulation picks the cheapest S the CFL rule allows.
        """
        from .. import config

        return substeps * (1.0 + config.RELAXATION_PASS_COST * self.expected_iterations(frame_dt / substeps))

    def max_dt(self, world: WorldView) -> float:
        """Longest substep, s: surface tension limits it (``liquid_units.surface_tension_stable_dt``),
        and springs to ``SPRING_MAX_DT`` whatever their stiffness and to ``SPRING_CFL`` spacings of
        travel for their fastest particle (impacts); relaxation passes adapt, and
        viscosity and springs are implicit, so neither E nor ν limits it (the explicit springs of
        Algorithm 5 needed 0.7 / sqrt(15 k_spring): 25 substeps per frame for jelly at 2 cm).
        """
        if not self.has_springs:
            return self.tension_dt
        v = world.v[(self.mode != SPRINGS_NONE)[world.material]]
        fastest = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if len(v) else 0.0
        impact = SPRING_CFL * self.setup.spacing / fastest if fastest > 0.0 else math.inf
        return min(self.tension_dt, SPRING_MAX_DT, impact)

    def _scratch(self, n: int) -> None:
        if n != self._scratch_n:
            self._scratch_n = n
            self.d3 = np.zeros((n, 3))
            # The relaxation's: where the walls were sampled and what they pushed (reused: page faults).
            self.x_ref, self.wall_dx = np.empty((n, 3)), np.empty((n, 3))
            self.rho = np.zeros(n)
            self.rho_near = np.zeros(n)
            # The viscosity solve's: unit masses (see __init__), CG vectors and 3x3 block inverses.
            self.unit_mass = np.ones(n)
            self.cg = [np.empty((n, 3)) for _ in range(4)]
            self.cg_inv = np.empty((n, 3, 3))

    def _spring_buffers(self, ctx: StepContext, springs: bool):
        """The spring terms' arrays (``implicit_viscosity_kernels.spring_terms``) and the solve's right-hand
        side, kept across substeps while the particle count and the spring rows' width stay the same."""
        width = ctx.arrays["spring_partner"].shape[1] if springs else 0
        if self._spring_shape != (ctx.n, width):
            self._spring_shape = (ctx.n, width)
            self._springs_buf = (np.empty((ctx.n, width), np.int64), np.empty((ctx.n, width, 2)),
                                 np.empty((ctx.n, width, 3)), np.empty((ctx.n, 3)))
        return self._springs_buf

    def velocity_stage(self, ctx: StepContext) -> None:
        """XSPH smoothing, surface tension (CSF), viscosity impulses (Algorithm 4), then the grid
        projection (``grid_projection``), before prediction."""
        self._scratch(ctx.n)
        if XSPH > 0:
            from .xsph_kernels import smooth_velocities

            smooth_velocities(ctx.x, ctx.v, ctx.nbr, ctx.count, ctx.material, self.xsph, ctx.h,
                              float(self.rho0.max()), self.d3)
        if np.any(self.tension > 0):
            from .surface_tension_kernels import surface_tension_impulses

            # Its work arrays are the relaxation's and the viscosity solve's, idle until they run
            # after it in this substep: kept, so no page faults (0.84 of 3.96 ms a call), and no
            # memory of their own. Moving the viscosity solve before it would break this.
            scratch = (self.x_ref, self.wall_dx, self.cg[0], self.cg[1], self.rho, self.rho_near,
                       self.cg[2].reshape(-1)[:ctx.n])
            surface_tension_impulses(ctx.x, ctx.v, ctx.nbr, ctx.count, ctx.material, self.tension, self.density,
                                     ctx.spacing, ctx.h, ctx.dt, scratch)
        nu = float(np.max(self.nu))
        springs = self.has_springs and ctx.n > 0 and bool(np.any(ctx.arrays["spring_partner"] >= 0))
        if (springs or np.any(self.yield_nu > 0)
                or nu * ctx.dt * (math.pi / ctx.spacing) ** 2 >= VISCOSITY_RESOLVED):
            self._viscosity(ctx, springs)
        if np.any(self.beta > 0):
            self.k.viscosity_impulses(ctx.x, ctx.v, ctx.nbr, ctx.count, ctx.material, self.beta, ctx.h, ctx.dt,
                                      ctx.bucket_start, ctx.colour, ctx.colour_buckets, ctx.colour_units)
        self.projection.project(ctx.x, ctx.v, self.projected[ctx.material], ctx.walls, ctx.h, ctx.dt,
                                ctx.arrays.get("grid_pressure"))

    def _viscosity(self, ctx: StepContext, springs: bool = False) -> None:
        """Backward Euler on the viscous term, v - v* = Δt ν ∇²v (Weiler et al. 2018), and on the
        springs (Clavet Algorithm 5), in one system solved by CG.

        Springs: v = v* + Δt a_s(x + θ Δt v), a_s the springs' force per unit mass at the
        positions the substep will predict, linearised about the current x with the axial stiffness
        and the stretched springs' transverse one (``implicit_viscosity_kernels.spring_terms``): the
        system gains θ Δt² K_s pair blocks (positive semi-definite, so it stays symmetric positive
        definite), the right-hand side v* + Δt a_s(x). θ = ``SPRING_THETA`` (1: backward Euler).

        The guess is the right-hand side; the solve stops at a residual of ``VISCOSITY_TOLERANCE``
        times its norm or at ``VISCOSITY_MAX_ITERATIONS`` (counted in the frame statistics). The
        residual left is spread evenly over the particles (a uniform velocity shift, which the
        operator does not see), so the total momentum is exactly that of v*: the viscous and
        spring terms are internal forces. Colliders at rest hold the fluid next to them (no slip),
        and receive the drag they exert in their contact reports.
        """
        from . import implicit_viscosity_kernels as ivk

        eta = self.nu[ctx.material]
        if np.any(self.yield_nu > 0):
            eta = eta + units.yield_viscosity(ctx, self.yield_nu, self.gradient_k)
        static = ctx.walls.static() if ctx.walls is not None else None
        wall_b = units.wall_viscosity_blocks(ctx.x, static, ctx.spacing, ctx.h)
        coeff = np.array([ctx.dt * self.viscosity_k, 1.0 / ctx.h, SPRING_THETA])
        sj, sw, se, rhs = self._spring_buffers(ctx, springs)
        if springs:
            a = ctx.arrays
            ivk.spring_terms(ctx.x, ctx.material, ctx.index_of_id(), a["spring_partner"], a["spring_rest"],
                             self.k_spring, ctx.h, ctx.dt, sj, sw, se, rhs)
            rhs += ctx.v
        else:
            rhs = ctx.v
        v = rhs.copy()
        it, res = ivk.solve(ctx.x, v, ctx.nbr, ctx.count, self.unit_mass, eta, coeff, wall_b, sj, sw, se, rhs,
                            VISCOSITY_TOLERANCE, VISCOSITY_MAX_ITERATIONS, self.cg_inv, *self.cg)
        held = np.flatnonzero(np.any(wall_b != 0.0, axis=1))
        if not len(held):
            v += (ctx.v.sum(axis=0) - v.sum(axis=0)) / ctx.n
        else:
            # What the walls' no-slip term took from each particle, -Δt K ν B_i v_i (the operator's
            # wall part at the solution), goes to the colliders equal and opposite: viscous drag.
            blocks = wall_b[held][:, [[0, 3, 4], [3, 1, 5], [4, 5, 2]]]
            drag = np.zeros((ctx.n, 3))
            drag[held] = -coeff[0] * eta[held, None] * np.einsum("kij,kj->ki", blocks, v[held])
            ctx.walls.received(ctx.x, drag)
        ctx.v[:] = v
        st = self.stats
        st["viscosity_iterations"] += it
        st["viscosity_iterations_max"] = max(st["viscosity_iterations_max"], it)
        st["viscosity_residual"] = max(st["viscosity_residual"], res)
        if it >= VISCOSITY_MAX_ITERATIONS and res > VISCOSITY_TOLERANCE:
            st["viscosity_capped"] += 1
            log.warning("viscosity solve stopped at its cap of %d iterations with relative residual %.3g",
                        VISCOSITY_MAX_ITERATIONS, res)

    def position_stage(self, ctx: StepContext) -> None:
        """Springs (add, plasticity, displacements: Algorithm 5, eq. 5.2), then Algorithm 3 to tolerance."""
        self._scratch(ctx.n)
        if self.has_springs:
            self._springs(ctx)
        self._relax(ctx)

    def _relax(self, ctx: StepContext) -> None:
        """Relaxation passes until every material's mean compression over its compressed particles
        (near density, in Clavet's density's units: ``liquid_units.near_error_ratio``) is at most its
        ``density_error`` and the largest at most 10 times that. Averaging over the compressed ones
        only (DFSPH counts the surface as 0) makes the target the volume the bulk loses. At least one
        pass runs; a substep that reaches the cap is counted and logged, never passed off as converged.
        """
        x = ctx.x
        planes, plane_of, walls = relaxation_walls(x, ctx.walls, ctx.spacing, ctx.h)
        wall_dx, x_ref = self.wall_dx, self.x_ref
        wall_dx.fill(0.0)
        np.copyto(x_ref, x)
        mat = ctx.material
        sums, counts, tops = np.empty(len(self.owned)), np.empty(len(self.owned), np.int64), np.empty(len(self.owned))
        # Passes alternate their sweep direction, and so do successive substeps' first passes: a
        # one-way Gauss-Seidel order drifts particles along it (measured on a resting pool: the
        # layer on the first-swept wall moved at 5.5 cm/s, the others at 1-3 cm/s).
        parity = self.stats["substeps"] % 2
        accel = self.accel
        accel.start(ctx.n)
        it = 0
        while it < self.cap:
            accel.before(x, wall_dx)
            self.relaxation(x, ctx.nbr, ctx.count, mat, self.gain, self.gain_near, self.rho0, self.rho0_near, ctx.h,
                            ctx.bucket_start, ctx.colour, ctx.colour_buckets, ctx.colour_units, x_ref, *walls, planes,
                            plane_of, (it + parity) % 2 == 1, self.rho, self.rho_near, wall_dx)
            it += 1
            self.compression_sums(self.rho_near, mat, self.rho0_near, self.owned, sums, counts, tops)
            err_mean, err_max, done = density_errors(sums, counts, tops, self.target * self.near_ratio,
                                                     self.owned)
            if done:
                break
            if it < self.cap:  # the last pass's result stays as measured
                accel.after(x, wall_dx, err_max)
        else:
            self.stats["density_capped"] += 1
            log.warning("density relaxation stopped at its cap of %d passes with mean density error %.3g "
                        "(raise max_iterations or the substeps)", self.cap, err_mean / self.near_ratio)
        self.last_iterations, self.last_dt = it, ctx.dt
        if ctx.walls is not None:
            ctx.walls.received(x, wall_dx, ctx.dt)
        st = self.stats
        st["density_iterations"] += it
        st["substeps"] += 1
        st["density_iterations_max"] = max(st["density_iterations_max"], it)
        st["density_error_mean"] = max(st["density_error_mean"], err_mean / self.near_ratio)
        st["density_error_max"] = max(st["density_error_max"], err_max / self.near_ratio)

    def _springs(self, ctx: StepContext) -> None:
        """Spring creation (SCA 2005; thesis fig. 5.3 for moulds), plasticity and removal (eq. 5.2) on the
        predicted positions; the springs' forces are solved with the velocities (:meth:`_viscosity`)."""
        a = ctx.arrays
        n = ctx.n
        while True:
            used = np.zeros(n, np.int64)
            self.k.add_springs(ctx.x, ctx.ids, ctx.material, a["source"], a["bonded"], ctx.nbr, ctx.count,
                               self.dynamic, self.mould, ctx.h, a["spring_partner"], a["spring_rest"], used)
            need = int(used.max()) if n else 0
            width = a["spring_partner"].shape[1]
            if need <= width:
                break
            ctx.resize("spring_partner", int(need * 1.25) + 1)
            ctx.resize("spring_rest", int(need * 1.25) + 1)
        a["bonded"][self.mould[ctx.material] == 1] = 1
        # Maxwell: the share of (r - L) each rest length moves by this substep, 1 - exp(-Δt/τ).
        relax = np.where(self.tau > 0, -np.expm1(-ctx.dt / np.where(self.tau > 0, self.tau, 1.0)), 0.0)
        self.k.spring_plasticity(ctx.x, ctx.material, ctx.index_of_id(), a["spring_partner"], a["spring_rest"],
                                 self.alpha, self.gamma, relax, ctx.h, ctx.dt)

    def _reset_stats(self) -> None:
        self.stats = {"density_iterations": 0, "substeps": 0, "density_iterations_max": 0, "density_capped": 0,
                      "density_error_mean": 0.0, "density_error_max": 0.0, "viscosity_iterations": 0,
                      "viscosity_iterations_max": 0, "viscosity_residual": 0.0, "viscosity_capped": 0}

    def frame_stats(self, world: WorldView) -> dict[str, int | float]:
        """Relaxation passes (mean and largest per substep, substeps that hit the cap), the density
        errors they reached (largest over the frame's substeps of the material-mean and of the
        per-particle error), and the number of springs (each stored in both endpoints' rows)."""
        st = self.stats
        out = {"density_iterations": round(st["density_iterations"] / max(st["substeps"], 1), 3),
               "density_iterations_max": st["density_iterations_max"], "density_capped": st["density_capped"],
               "density_error_mean": round(st["density_error_mean"], 6),
               "density_error_max": round(st["density_error_max"], 6)}
        if np.any(self.nu > 0) or np.any(self.yield_nu > 0) or self.has_springs:
            out.update(viscosity_iterations=round(st["viscosity_iterations"] / max(st["substeps"], 1), 3),
                       viscosity_iterations_max=st["viscosity_iterations_max"],
                       viscosity_residual=float(f"{st['viscosity_residual']:.3g}"),
                       viscosity_capped=st["viscosity_capped"])
        out.update(self.projection.frame_stats())
        self._reset_stats()
        springs = world.arrays["spring_partner"] if self.has_springs else None
        out["springs"] = 0 if springs is None else int(np.count_nonzero(springs >= 0)) // 2
        return out

    def failure(self, stats: dict) -> str | None:
        """A blow-up when a substep ended with its material-mean compression over DENSITY_BLOWUP times
        the largest target (and DENSITY_BLOWUP_FLOOR): the relaxation could not hold the liquid together."""
        limit = max(DENSITY_BLOWUP * float(self.target[self.owned].max(initial=0.0)), DENSITY_BLOWUP_FLOOR)
        if stats["density_error_mean"] > limit:
            return (f"the mean density error reached {stats['density_error_mean']:.1%}, over {limit:.0%} (a "
                    "blow-up: the relaxation could not hold the liquid together); try more substeps or a higher "
                    "max_iterations")
        return None

    def state_dict(self) -> dict:
        """The cost model's last measurement, so a resumed bake chooses the same substeps."""
        return {"last_iterations": self.last_iterations, "last_dt": self.last_dt,
                "projection_dt": self.projection.last_dt}

    def load_state_dict(self, state: dict) -> None:
        self.last_iterations = int(state.get("last_iterations", 1))
        self.last_dt = float(state.get("last_dt", 0.0))
        self.projection.last_dt = float(state.get("projection_dt", 0.0))

