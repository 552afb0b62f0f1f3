"""Viscoelastic fluids by prediction-relaxation (Clavet 2005): the model and its parameters.

Reference: S. Clavet, *Animation de fluides viscoélastiques à base de
particules*, M.Sc. thesis, Université de Montréal, 2005 (English short form:
Clavet, Beaudoin, Poulin, "Particle-based Viscoelastic Fluid Simulation",
SCA 2005).

This module declares the parameters (read by the scene validator, the docs and
the Blender UI without importing numba) and the :class:`ViscoelasticModel`
stage object; the numba kernels are in ``viscoelastic_clavet2005_kernels`` and
are imported when a model is built. The conventions (whole pair terms,
coloured Gauss-Seidel order) are documented there; the rest density is
calibrated on the lattice (``lattice_rest_density``) and long substeps are
relaxed in several passes (``relaxation_passes``).
"""

from __future__ import annotations

import math

import numpy as np

from ..params import Parameter
from .base import ArraySpec, MaterialModel, ModelSetup, StepContext, WorldView
from .presets import VISCOELASTIC_PRESETS

NAME = "viscoelastic"

SPRINGS_NONE, SPRINGS_DYNAMIC, SPRINGS_MOULD = 0, 1, 2
SPRING_MODES = {"none": SPRINGS_NONE, "dynamic": SPRINGS_DYNAMIC, "mould": SPRINGS_MOULD}

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("stiffness", 300.0, "m/s^2", 0.0, 1e6, label="Stiffness",
              description="k in P = k (ρ - ρ0) (Clavet eq. 4.2): how hard the liquid resists compression."),
    Parameter("repulsion_factor", 2.0, "", 0.0, 100.0, label="Repulsion Factor",
              description="k_near / k (Clavet eq. 4.4): near-pressure that keeps particles apart and "
                          "makes surface tension."),
    Parameter("rest_density", 1.0, "", 0.05, 5.0, label="Rest Density",
              description="ρ0 as a ratio of the density of the initial particle lattice (Clavet eq. 4.2); "
                          "below 1 the liquid expands, above 1 it contracts (stronger cohesion)."),
    Parameter("viscosity", 0.0, "1/s", 0.0, 1e5, label="Viscosity",
              description="σ, linear viscosity impulse (Clavet Algorithm 4): high for thick liquids."),
    Parameter("stiff_viscosity", 0.1, "1/m", 0.0, 1e5, label="Stiff Viscosity",
              description="β, quadratic viscosity impulse (Clavet Algorithm 4): keeps fast particles "
                          "from passing through each other."),
    Parameter("viscous_stretching", False, label="Viscous Stretching",
              description="Also damp particles moving apart (Clavet section 5.1 mentions it for high "
                          "viscosity): thick liquids pile up and coil instead of spreading flat."),
    Parameter("springs", "none", choices=tuple(SPRING_MODES), label="Viscoelastic Springs",
              description="none; dynamic: springs form between neighbours as the material flows (SCA 2005); "
                          "mould: springs made once between the particles a source created (thesis fig. 5.3)."),
    Parameter("spring_stiffness", 0.0, "1/s^2", 0.0, 1e7, label="Spring Force",
              description="k_spring (Clavet Algorithm 5): elasticity of the springs."),
    Parameter("plasticity", 0.0, "1/s", 0.0, 1e4, label="Plasticity",
              description="α, rate at which springs take a new rest length (Clavet eq. 5.2); 0 is purely "
                          "elastic."),
    Parameter("yield_ratio", 0.1, "", 0.0, 10.0, label="Elastic Limit",
              description="γ, deformation (fraction of rest length) below which springs stay elastic "
                          "(Clavet eq. 5.2)."),
)


def lattice_rest_density(spacing: float, h: float, repulsion_factor: float) -> float:
    """The ρ0 (eq. 4.2) at which a bulk cubic lattice of ``spacing`` is at zero total pressure.

    With ρ0 equal to the lattice density the near-pressure P^near = k^near ρ^near
    (eq. 4.4), which is always positive, would push the bulk apart until the
    negative pressure balances it: a filled box expands by ~20 % (measured at
    h = 2 spacings). We instead choose ρ0 so that the two pressures balance at
    the lattice: the pair terms crossing any plane carry no net momentum,

        k (ρ_lat - ρ0) Σ (1-q) r_z²/r + k^near ρ^near_lat Σ (1-q)² r_z²/r = 0,

    summed over the lattice neighbours of one particle (a pair at offset r
    crosses a plane with frequency proportional to |r_z|, and pushes along r̂_z).

    Parameters
    ----------
    spacing : lattice spacing, m. h : interaction radius, m. repulsion_factor : k^near / k.
    """
    n = int(math.ceil(h / spacing)) + 1
    ax = np.arange(-n, n + 1) * spacing
    gx, gy, gz = np.meshgrid(ax, ax, ax, indexing="ij")
    r = np.sqrt(gx**2 + gy**2 + gz**2).ravel()
    rz2 = (gz**2).ravel()
    keep = (r > 0) & (r < h)
    r, rz2 = r[keep], rz2[keep]
    a = 1.0 - r / h
    rho = float(np.sum(a**2))
    rho_near = float(np.sum(a**3))
    flux_far = float(np.sum(a * rz2 / r))
    flux_near = float(np.sum(a**2 * rz2 / r))
    return rho + repulsion_factor * rho_near * flux_near / flux_far


class ViscoelasticModel(MaterialModel):
    """Every material whose model is ``viscoelastic`` (Clavet 2005), on the model contract (base.py).

    It contributes viscosity impulses to the velocity stage and springs plus
    double density relaxation to the position stage (Clavet Algorithm 1, lines
    5 and 12-16). Per-material constants are packed into arrays indexed by
    material id; materials of other models get zero constants, so their
    particles exert no viscoelastic terms of their own but are still pushed by
    viscoelastic neighbours.

    Spring state lives in the particle arrays ``spring_partner`` (n,S) int64
    (partner ids, -1 free) and ``spring_rest`` (n,S) float64, and ``bonded``
    (n,) uint8 for mould springs, so it is permuted, filtered and checkpointed
    with everything else; they are only added when a material uses springs.
    """

    name = NAME
    label = "Viscoelastic"
    description = "Clavet 2005 prediction-relaxation: liquids, honey, mud, slime, plasticine, jelly"
    citation = "Clavet, Beaudoin, Poulin, Particle-based Viscoelastic Fluid Simulation, SCA 2005 (thesis 2005)"
    parameters = PARAMETERS
    presets = VISCOELASTIC_PRESETS
    integrator = "prediction_relaxation"
    arrays = {
        "spring_partner": ArraySpec((16,), np.int64, -1, "ids of spring partners, -1 for a free slot"),
        "spring_rest": ArraySpec((16,), np.float64, 0, "spring rest lengths L, m"),
        "bonded": ArraySpec((), np.uint8, 0, "1 once a mould material's particle got its springs"),
    }

    def __init__(self, setup: ModelSetup):
        from .. import config
        from . import viscoelastic_clavet2005_kernels as kernels

        super().__init__(setup)
        self.k = kernels
        self.stiffness = self.per_material("stiffness")
        self.k_near = self.stiffness * self.per_material("repulsion_factor")
        self.rho0 = np.zeros(setup.n_materials)
        for m, p in setup.materials.items():
            self.rho0[m] = p.rest_density * lattice_rest_density(setup.spacing, setup.h, p.repulsion_factor)
        self.sigma = self.per_material("viscosity")
        self.beta = self.per_material("stiff_viscosity")
        self.k_spring = self.per_material("spring_stiffness")
        self.alpha = self.per_material("plasticity")
        self.gamma = self.per_material("yield_ratio")
        self.mode = self.per_material("springs", np.int64, SPRING_MODES.__getitem__)
        self.stretch = self.per_material("viscous_stretching", np.uint8, int)
        # Per-material flags for the kernels (they read no constants from this module).
        self.dynamic = (self.mode == SPRINGS_DYNAMIC).astype(np.uint8)
        self.mould = (self.mode == SPRINGS_MOULD).astype(np.uint8)
        self.has_springs = bool(np.any(self.mode != SPRINGS_NONE))
        k_eff = float(np.max((self.stiffness + self.k_near) / 3.0)) if setup.n_materials else 0.0
        # Longest stable relaxation pass, s (see relaxation_passes); inf without pressure.
        self.stable_pass_dt = config.RELAXATION_DT_FACTOR * math.sqrt(setup.h / k_eff) if k_eff > 0 else math.inf
        self.passes = 1
        self._scratch_n = -1

    def active_arrays(self):
        return self.arrays if self.has_springs else {}

    def relaxation_passes(self, dt: float) -> int:
        """Passes of Algorithm 3 per substep so that each pass is stable.

        One pass moves a particle by ~Δt² k Δρ; the sequential relaxation
        oscillates and diverges once Δt sqrt(k/h) exceeds ~0.26 (measured on a
        resting pool at h = 2 spacings: k = 400 stable at Δt = 1/360 s, unstable
        at 1/240 s; k = 100 stable at 1/150 s, unstable at 1/90 s). A substep
        longer than ``config.RELAXATION_DT_FACTOR sqrt(h/k)`` is relaxed in N
        passes of gain Δt² k / N each (Δt / sqrt(N)). For the linearised
        relaxation x <- (1 - g A) x, N passes of g/N tend to exp(-g A), which is
        stable for any g, and the equilibrium under gravity (set by k, not Δt)
        is unchanged. Deviation from the thesis (one pass per step), so that
        substeps are chosen by the CFL rule alone.
        """
        return max(1, math.ceil((dt / self.stable_pass_dt) ** 2 - 1e-9))

    def substep_cost(self, frame_dt: float, substeps: int) -> float:
        """Relative cost of a frame in ``substeps`` substeps, in units of one substep's fixed work.

        Passes per substep grow as Δt², so passes per frame fall as 1/S while the
        fixed work per substep (neighbour search, viscosity, collisions) grows as
        S; one pass costs ``config.RELAXATION_PASS_COST`` of that fixed work
        (measured). The simulation picks the cheapest S the CFL rule allows.
        """
        from .. import config

        passes = self.relaxation_passes(frame_dt / substeps)
        return substeps * (1.0 + config.RELAXATION_PASS_COST * passes)

    def max_dt(self, world: WorldView) -> float:
        """Longest stable substep, s: only springs limit it (relaxation passes adapt, viscosity is capped).

        A particle is held by ~30 springs of stiffness k_spring (1 - L/h) ~ k_spring / 2;
        the Jacobi spring update is stable while dt^2 * 15 k_spring stays below ~0.5 (jelly at
        k_spring = 20000 measured stable at dt = 1.2 ms; the limit below gives 1.3 ms).
        """
        from .. import config

        k_spring = float(np.max(self.k_spring[self.mode != SPRINGS_NONE], initial=0.0))
        if k_spring > 0.0:
            return config.SPRING_DT_FACTOR / math.sqrt(15.0 * k_spring)
        return math.inf

    def _scratch(self, n: int) -> None:
        if n != self._scratch_n:
            self._scratch_n = n
            self.d3 = np.zeros((n, 3))
            self.rho = np.zeros(n)
            self.rho_near = np.zeros(n)

    def velocity_stage(self, ctx: StepContext) -> None:
        """Viscosity impulses (Algorithm 4) on the velocities, before prediction."""
        self._scratch(ctx.n)
        if np.any(self.sigma > 0) or np.any(self.beta > 0):
            self.k.viscosity_impulses(ctx.x, ctx.v, ctx.nbr, ctx.count, ctx.material, self.sigma, self.beta,
                                      self.stretch, ctx.h, ctx.dt, ctx.bucket_start, ctx.colour, ctx.n_colours)

    def position_stage(self, ctx: StepContext) -> None:
        """Springs (add, plasticity, displacements: Algorithm 5, eq. 5.2), then Algorithm 3."""
        self._scratch(ctx.n)
        if self.has_springs:
            self._springs(ctx)
        passes = self.relaxation_passes(ctx.dt)
        self.passes = passes
        for _ in range(passes):
            self.k.double_density_relaxation(ctx.x, ctx.nbr, ctx.count, ctx.material, self.stiffness, self.k_near,
                                             self.rho0, ctx.h, ctx.dt / math.sqrt(passes), ctx.bucket_start,
                                             ctx.colour, ctx.n_colours, self.rho, self.rho_near)

    def _springs(self, ctx: StepContext) -> None:
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
        self.k.springs_plasticity_and_displacements(ctx.x, ctx.material, ctx.index_of_id(), a["spring_partner"],
                                                    a["spring_rest"], self.k_spring, self.alpha, self.gamma,
                                                    ctx.h, ctx.dt, self.d3)

    def frame_stats(self, world: WorldView) -> dict[str, int | float]:
        """Number of springs (each stored in both endpoints' rows)."""
        if not self.has_springs:
            return {"springs": 0}
        return {"springs": int(np.count_nonzero(world.arrays["spring_partner"] >= 0)) // 2}
