"""Density, state equation and symmetric pressure of Desbrun & Cani 1996 (smoothed particles, the classic SPH liquid).

References: M. Desbrun, M.-P. Cani, *Smoothed Particles: A new paradigm for animating highly
deformable bodies*, EGCAS 1996 (``shared/papers/000``, slides ``001``); A. Treuille, lecture
*Particle-based Liquids* (``002``); J. J. Monaghan, *SPH without a tensile instability*, J. Comput.
Phys. 159 (2000) for the artificial pressure under tension.

For a force-based scheme (``integrators.Leapfrog``): :meth:`accelerations` evaluates, for the particles
asked,

1. the density by kernel sum, ρ_i = Σ_j m_j W_ij (eq. 3), divided by the kernel's sum over the particle
   lattice so that a lattice at rest is at ρ0 (the mass is ρ0 s³), plus the fluid a wall stands for;
2. the state equation P = c² (ρ - ρ0) (eq. 6, Treuille's p = κ (ρ - ρ̄) with κ = c²), with tension
   kept down to -``tensile_strength``: 0 makes the classic liquid (no negative pressure), a positive
   value Desbrun's cohesive lump (section 3.1);
3. the symmetric pressure force (eqs. 4, 7) with the anti-clustering kernel's gradient (section 3.2),
   and under tension Monaghan 2000's artificial pressure, against the clustering it causes;
4. the walls (``density_pressure_desbrun1996_walls``): a collider's fluid mirrored behind its surface,
   and the no-slip share of Morris' viscosity at the colliders at rest (``viscosity_morris1997``). What
   the walls give each particle is kept apart too (``wall_acceleration``): the scheme reports what its
   kicks give of it to the colliders, so a body is pushed by the liquid's pressure as the liquid is by it.

One loop over pairs for the forces of three terms. The pair forces of the model's
``artificial_viscosity_monaghan1992`` (Π_ij, eq. 5) and ``viscosity_morris1997`` (the viscous
Laplacian) are summed in this term's pair loop (``density_pressure_desbrun1996_kernels``), pair by
pair, into the same running sum as the pressure: summed in loops of their own they would add the same
numbers in another order, and bakes would not keep their bytes. Those terms hold their formulas
(their ``_kernels``) and their coefficients: :meth:`link` takes, from every term of the model whose
``fused_into`` is this term's name, its per-material ``values`` as the coefficient it names
(``coefficient``: ``"alpha"`` or ``"nu"``); a coefficient no term gives is 0.

:meth:`particle_dt` is eq. 8 with the artificial viscosity's α, the velocity and Morris' viscous bound:
the scheme's individual levels.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics.spline import cubic_spline_shape_array
from .base import ArraySpec, Term
from .density_pressure_desbrun1996_walls import MirroredWalls

# The substep the policy may choose, in units of the step a particle at rest allows (eq. 8 with
# μ = 0): particles at rest then take 4 steps per neighbour search, and faster ones more.
CALM_STEPS_PER_SUBSTEP = 4
# The coefficients of the pair forces this term's loop computes for other terms (``fused_into``).
FUSED_COEFFICIENTS = ("alpha", "nu")


def lattice_sums(spacing: float, h: float) -> tuple[float, float, float]:
    """(S, S_wall, S_edge): the cubic spline's sum s³ Σ W over a simple cubic lattice of ``spacing``
    around one of its sites (itself included); the part of it beyond a wall half a spacing below the
    site (the layers at -s, -2s, ...): what a wall must give the first layer; and the part beyond two
    perpendicular walls half a spacing away (what both walls' shares count twice at a tank's edge)."""
    reach = int(math.ceil(h / spacing))
    k = np.arange(-reach, reach + 1)
    ox, oy, oz = np.meshgrid(k, k, k, indexing="ij")
    r = spacing * np.sqrt(ox**2 + oy**2 + oz**2).ravel()
    w = cubic_spline_shape_array(r / h) * 8.0 / (math.pi * h**3) * spacing**3
    return float(w.sum()), float(w[oz.ravel() < 0].sum()), float(w[(oz.ravel() < 0) & (ox.ravel() < 0)].sum())


def calm_step(c: float, alpha: float, nu: float, h: float) -> float:
    """The longest step eq. 8 allows a particle at rest among particles at rest, s: 0.3 ε / (c (1 + 0.6 α)),
    and no longer than the viscosity's 0.125 ε² / ν (ε = h/2; the same bounds as ``stable_steps``)."""
    eps = 0.5 * h
    step = 0.3 * eps / (c * (1.0 + 0.6 * alpha))
    return min(step, 0.125 * eps * eps / nu) if nu > 0.0 else step


class DensityPressureDesbrun1996(Term):
    """Kernel-sum density, state equation, symmetric pressure and the walls; the pair loop of the
    artificial and the physical viscosity (module docstring)."""

    name = "density_pressure_desbrun1996"
    citation = "Desbrun & Cani, Smoothed Particles, EGCAS 1996; Treuille, Particle-based Liquids"
    parameters = ("density", "speed_of_sound", "tensile_strength")
    arrays = {
        "sph_density": ArraySpec((), np.float64, math.nan, "kernel-sum density at the last evaluation, kg/m³"),
        "sph_pressure": ArraySpec((), np.float64, 0.0, "pressure at the last evaluation, Pa"),
        "acceleration": ArraySpec((3,), np.float64, math.nan, "acceleration at the end of the last substep, "
                                                              "gravity included, m/s² (opens the next one)"),
        "time_level": ArraySpec((), np.uint8, 0, "individual time-step level l: the particle's step is the "
                                                 "substep / 2^l"),
        "sph_mu_max": ArraySpec((), np.float64, 0.0, "largest approach rate max_j μ_ij at the last evaluation, "
                                                     "m/s (eq. 8: the next step's level)"),
        "wall_acceleration": ArraySpec((3,), np.float64, 0.0, "the colliders' share of ``acceleration`` (the "
                                                              "walls' push and no-slip drag), m/s²: they "
                                                              "receive it equal and opposite"),
    }

    def __init__(self, setup):
        super().__init__(setup)
        s, h = setup.spacing, setup.h
        densities = setup.densities or tuple(getattr(setup.materials.get(k), "density", 1000.0)
                                             for k in range(setup.n_materials))
        self.mass = np.asarray(densities, np.float64) * s**3
        self.rho0 = self.per_material("density")
        self.c = self.per_material("speed_of_sound")
        self.c2 = self.c**2
        self.tension = self.per_material("tensile_strength")
        # The other terms' coefficients (:meth:`link`): 0 until a term of the model gives one.
        self.alpha = np.zeros(setup.n_materials)
        self.nu = np.zeros(setup.n_materials)
        self.no_slip = self.per_material("walls", bool, lambda c: c == "no_slip")  # Morris' walls (``_no_slip``)
        # The density a wall stands for: the liquid's own behind it; a cohesive lump (tension) does not
        # wet a wall, which then stands for nothing and only the collisions hold the lump off it.
        self.wall_rho0 = np.where(self.tension > 0.0, 0.0, self.rho0)
        full, wall, edge = lattice_sums(s, h)
        self.inv_lattice = 1.0 / full
        # 1 / W(s) of the cubic spline, without its constant: Monaghan 2000's f = W(r) / W(s).
        self.inv_w_spacing = 1.0 / float(cubic_spline_shape_array(s / h))
        self.walls = MirroredWalls(s, h, full, wall, edge)
        # The solids' materials (a model that keeps its shape): their particles are the liquid's boundary
        # particles, and take the liquid's forces on them back (:meth:`apply`).
        self.solids = np.zeros(setup.n_materials, bool)
        self.solids[:len(setup.solids)] = setup.solids
        self.solids[self.owned] = False

    def link(self, terms):
        """Take the coefficients of the pair forces this term's loop computes: each term whose ``fused_into``
        is this term's name gives its per-material ``values`` as its ``coefficient`` (α, ν)."""
        for term in terms:
            if getattr(term, "fused_into", None) != self.name:
                continue
            if term.coefficient not in FUSED_COEFFICIENTS:
                raise TypeError(f"{term.name}: {self.name} has no pair force with the coefficient "
                                f"{term.coefficient!r} (it has {FUSED_COEFFICIENTS})")
            setattr(self, term.coefficient, np.asarray(term.values, np.float64))

    def active_arrays(self):
        return self.arrays

    # -- the scheme's hooks -----------------------------------------------------------------------
    def apply(self, ctx):
        """The velocity stage, at every micro-step of ``ctx.dt`` (``integrators.Leapfrog``): what the liquid's
        pair forces on a solid's particles give those particles back, equal and opposite
        (``density_pressure_desbrun1996_kernels.solid_reactions``), summed into the velocity the solid's solve
        takes at the next substep (``LIQUID_PUSH``, as the relaxation's push).

        Why: :meth:`accelerations` takes a solid's particle as a boundary particle at the liquid's own
        pressure, which pushed the liquid off the solid while the solid received nothing. A butter cube
        melting on a hot plate under gravity sank through its own melt (which held none of its weight),
        squeezed each molten layer out at 2-5 m/s (the melt compressed 15-30 %) and sat on the plate."""
        from .relaxation_clavet2005 import LIQUID_PUSH

        push = ctx.arrays.get(LIQUID_PUSH)
        if push is None or not self.solids.any():
            return
        rows = np.flatnonzero(self.solids[ctx.material])
        if not len(rows):
            return
        from .density_pressure_desbrun1996_kernels import solid_reactions

        solid_reactions(ctx.x, ctx.v, ctx.material, ctx.nbr, ctx.count, rows, self.mass, ctx.arrays["sph_density"],
                        ctx.arrays["sph_pressure"], self.owned, self.c, self.alpha, self.nu, self.setup.h,
                        self.inv_w_spacing, ctx.dt, push)

    def accelerations(self, ctx, idx, out):
        from .density_pressure_desbrun1996_kernels import densities, pair_accelerations, pressures

        rows = np.ascontiguousarray(idx, np.int64)
        x, mat, walls = ctx.x, ctx.material, self.walls
        rho, p = ctx.arrays["sph_density"], ctx.arrays["sph_pressure"]
        planes = walls.planes_of(ctx.walls)
        densities(x, mat, ctx.nbr, ctx.count, rows, self.mass, self.solids, self.setup.h, self.inv_lattice, planes,
                  self.wall_rho0, walls.table_gamma, walls.table_step, walls.edges, walls.quarter,
                  walls.quarter_step, rho)
        curved = walls.curved(ctx.walls, x, rows)
        for near, d, _ in curved:
            at = rows[near]
            rho[at] += self.wall_rho0[mat[at]] * np.interp(d, walls.table_d, walls.table_gamma)
        pressures(rows, mat, rho, self.rho0, self.c2, self.tension, p)
        acc = np.empty((len(rows), 3))
        wall = np.empty((len(rows), 3))  # the colliders' share of acc
        pair_accelerations(x, ctx.v, mat, ctx.nbr, ctx.count, rows, self.mass, rho, p, self.owned, self.solids, self.c,
                           self.alpha, self.nu, self.setup.h, self.inv_w_spacing, planes, self.wall_rho0,
                           walls.table_slope, walls.table_step, walls.edges, walls.quarter_slope,
                           walls.quarter_step, ctx.arrays["sph_mu_max"], acc, wall)
        for near, d, normal in curved:
            at = rows[near]
            push = -np.maximum(p[at], 0.0) / rho[at] ** 2 * self.wall_rho0[mat[at]]
            push *= np.interp(d, walls.table_d, walls.table_slope)
            acc[near] += push[:, None] * normal
            wall[near] += push[:, None] * normal
        self._no_slip(ctx, rows, rho, acc, wall)
        ctx.arrays["wall_acceleration"][rows] = wall
        out += acc

    def _no_slip(self, ctx, rows: np.ndarray, rho: np.ndarray, acc: np.ndarray, wall: np.ndarray) -> None:
        """Add to ``acc`` and ``wall`` (row r of ``rows``) Morris' viscous term of the colliders at rest:
        -(2 m ν / ρ_i) B_i v_i (``viscosity_morris1997``, its module docstring), for the materials whose
        ``walls`` are ``no_slip`` (a crust freezing under lava held by it did not keep its shape: the
        elastic solve of the rebonded crust stopped converging, so slip stays the default) and whose
        viscosity is resolved as the implicit viscosity decides it (ν Δt (π/s)² at least
        ``viscosity_weiler2018.RESOLVED``, Δt the substep): classic water (ν = 1e-6 m²/s) is left to slip
        from ~6 mm up (at its longest substep, 4 calm steps), where its wall term would take under 1e-4
        of a wall particle's velocity a substep and cost a tenth of the substep's time (measured at 2.5 cm)."""
        from .viscosity_morris1997 import wall_weights
        from .viscosity_weiler2018 import RESOLVED

        if ctx.walls is None:
            return
        nu = self.nu[ctx.material[rows]]
        held_by_walls = self.no_slip[ctx.material[rows]]
        viscous = np.flatnonzero(held_by_walls & (nu * ctx.dt * (math.pi / self.setup.spacing) ** 2 >= RESOLVED))
        if not len(viscous):
            return

        at = rows[viscous]
        b = ctx.walls.no_slip_sums(ctx.x[at], wall_weights(self.setup.spacing, self.setup.h))[:, 0]
        held = np.flatnonzero(b != 0.0)
        if not len(held):
            return
        at, pos = at[held], viscous[held]
        drag = (-2.0 * self.mass[ctx.material[at]] * nu[pos] * b[held] / rho[at])[:, None] * ctx.v[at]
        acc[pos] += drag
        wall[pos] += drag

    def particle_dt(self, world, idx):
        from .density_pressure_desbrun1996_kernels import stable_steps

        rows = np.ascontiguousarray(idx, np.int64)
        out = np.empty(len(rows))
        stable_steps(world.v, world.material, rows, self.c, self.alpha, self.nu, self.setup.h,
                     world.arrays["sph_mu_max"], out)
        return out

    def calm_dt(self) -> float:
        """:func:`calm_step` of its materials, the shortest, s."""
        return min(calm_step(float(self.c[m]), float(self.alpha[m]), float(self.nu[m]), self.setup.h)
                   for m in self.setup.materials)

    def max_dt(self, world):
        return CALM_STEPS_PER_SUBSTEP * self.calm_dt()

    def work_per_substep(self, dt):
        return 2.0 * max(1.0, dt / self.calm_dt())

    def frame_stats(self, world):
        """The mean and largest compression ρ/ρ0 - 1 of the model's particles at their last evaluation."""
        mine = self.owned[world.material]
        if not mine.any():
            return {}
        err = world.arrays["sph_density"][mine] / self.rho0[world.material[mine]] - 1.0
        err = err[np.isfinite(err)]
        if not len(err):
            return {}
        return {"sph_compression_mean": float(err.mean()), "sph_compression_max": float(err.max())}
