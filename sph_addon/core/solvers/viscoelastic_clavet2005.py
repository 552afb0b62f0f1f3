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


class ViscoelasticModel:
    """Stage object for every material whose model is ``viscoelastic``.

    It contributes viscosity impulses to the velocity stage and springs plus
    double density relaxation to the position stage (Clavet Algorithm 1, lines
    5 and 12-16). Per-material constants are packed into arrays indexed by
    material id; materials of other models get zero constants, so their
    particles exert no viscoelastic terms of their own but are still pushed by
    viscoelastic neighbours.

    Spring state lives in the particle arrays ``spring_partner`` (n,S) int64
    (partner ids, -1 free) and ``spring_rest`` (n,S) float64, and ``bonded``
    (n,) uint8 for mould springs, so it is permuted, filtered and checkpointed
    with everything else.
    """

    name = NAME

    def __init__(self, sim, materials: list[dict], owned: list[bool]):
        from . import viscoelastic_clavet2005_kernels as kernels

        self.k = kernels
        nm = len(materials)
        self.stiffness = np.zeros(nm)
        self.k_near = np.zeros(nm)
        self.rho0 = np.zeros(nm)
        self.sigma = np.zeros(nm)
        self.beta = np.zeros(nm)
        self.k_spring = np.zeros(nm)
        self.alpha = np.zeros(nm)
        self.gamma = np.zeros(nm)
        self.mode = np.zeros(nm, np.int64)
        self.stretch = np.zeros(nm, np.uint8)
        for m, (p, mine) in enumerate(zip(materials, owned)):
            if not mine:
                continue
            self.stiffness[m] = p["stiffness"]
            self.k_near[m] = p["stiffness"] * p["repulsion_factor"]
            self.rho0[m] = p["rest_density"] * lattice_rest_density(sim.spacing, sim.h, p["repulsion_factor"])
            self.sigma[m] = p["viscosity"]
            self.beta[m] = p["stiff_viscosity"]
            self.k_spring[m] = p["spring_stiffness"]
            self.alpha[m] = p["plasticity"]
            self.gamma[m] = p["yield_ratio"]
            self.mode[m] = SPRING_MODES[p["springs"]]
            self.stretch[m] = 1 if p["viscous_stretching"] else 0
        self.has_springs = bool(np.any(self.mode != SPRINGS_NONE))
        from .. import config

        k_eff = float(np.max((self.stiffness + self.k_near) / 3.0)) if nm else 0.0
        # Longest stable relaxation pass, s (see relaxation_passes); inf without pressure.
        self.stable_pass_dt = config.RELAXATION_DT_FACTOR * math.sqrt(sim.h / k_eff) if k_eff > 0 else math.inf
        self.passes = 1
        st = sim.state
        if self.has_springs:
            st.add_array("spring_partner", (16,), np.int64, fill=-1)
            st.add_array("spring_rest", (16,), np.float64)
            st.add_array("bonded", (), np.uint8)
        self._scratch_n = -1

    def relaxation_passes(self, sim, dt: float) -> int:
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

    def substep_cost(self, sim, frame_dt: float, substeps: int) -> float:
        """Relative cost of a frame in ``substeps`` substeps, in units of one substep's fixed work.

        Passes per substep grow as Δt², so passes per frame fall as 1/S while the
        fixed work per substep (neighbour search, viscosity, collisions) grows as
        S; one pass costs ``config.RELAXATION_PASS_COST`` of that fixed work
        (measured). The simulation picks the cheapest S the CFL rule allows.
        """
        from .. import config

        passes = self.relaxation_passes(sim, frame_dt / substeps)
        return substeps * (1.0 + config.RELAXATION_PASS_COST * passes)

    def max_dt(self, sim) -> float:
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

    def velocity_stage(self, sim, dt: float) -> None:
        """Viscosity impulses (Algorithm 4) on the velocities, before prediction."""
        st = sim.state
        self._scratch(st.n)
        if np.any(self.sigma > 0) or np.any(self.beta > 0):
            self.k.viscosity_impulses(st.x, st.v, sim.nbr, sim.count, st.material, self.sigma, self.beta,
                                      self.stretch, sim.h, dt, sim.ns.bucket_start, sim.ns.colour)

    def position_stage(self, sim, dt: float) -> None:
        """Springs (add, plasticity, displacements: Algorithm 5, eq. 5.2), then Algorithm 3."""
        st = sim.state
        self._scratch(st.n)
        if self.has_springs:
            self._springs(sim, dt)
        passes = self.relaxation_passes(sim, dt)
        self.passes = passes
        for _ in range(passes):
            self.k.double_density_relaxation(st.x, sim.nbr, sim.count, st.material, self.stiffness, self.k_near,
                                             self.rho0, sim.h, dt / math.sqrt(passes), sim.ns.bucket_start,
                                             sim.ns.colour, self.rho, self.rho_near)

    def _springs(self, sim, dt: float) -> None:
        st = sim.state
        a = st.arrays
        while True:
            used = np.zeros(st.n, np.int64)
            self.k.add_springs(st.x, st.ids, st.material, a["source"], a["bonded"], sim.nbr, sim.count,
                               self.mode, sim.h, a["spring_partner"], a["spring_rest"], used)
            need = int(used.max()) if st.n else 0
            width = a["spring_partner"].shape[1]
            if need <= width:
                break
            st.resize_trailing("spring_partner", int(need * 1.25) + 1)
            st.resize_trailing("spring_rest", int(need * 1.25) + 1)
        mould = self.mode[st.material] == SPRINGS_MOULD
        a["bonded"][mould] = 1
        self.k.springs_plasticity_and_displacements(st.x, st.material, sim.index_of_id(), a["spring_partner"],
                                                    a["spring_rest"], self.k_spring, self.alpha, self.gamma,
                                                    sim.h, dt, self.d3)

    def spring_count(self, state) -> int:
        """Number of springs (each stored in both endpoints' rows)."""
        if not self.has_springs:
            return 0
        return int(np.count_nonzero(state.arrays["spring_partner"] >= 0)) // 2
