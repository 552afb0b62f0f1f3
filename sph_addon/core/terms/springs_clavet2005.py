"""Springs between particles (Clavet 2005, thesis Algorithm 5 and eq. 5.2; dynamic springs after the
SCA 2005 paper, mould springs after thesis fig. 5.3): elastic and plastic goo, moulded solids.

Springs are made, yield (eq. 5.2) and relax as a Maxwell element (rest lengths move by a share
1 - exp(-Δt/τ) of their stretch a substep) on the predicted positions, in the position stage. Their
forces are not Algorithm 5's explicit displacements: they join the implicit viscosity solve
(``viscosity_weiler2018``, :class:`~.base.ImplicitForces`), linearised about the substep's start
(backward Euler, θ = ``THETA``), so Young's modulus no longer limits the substep:
k_spring follows from E (Pa) by :func:`spring_stiffness`.

Acts on every material whose ``springs`` is ``"dynamic"`` or ``"mould"`` (``"none"``: no springs);
reads ``youngs_modulus``, ``density``, ``plasticity``, ``yield_ratio`` and ``relaxation_time``.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics.lattice import viscosity_lattice_constant
from .base import POSITION, ArraySpec, ImplicitForces

SPRINGS_NONE, SPRINGS_DYNAMIC, SPRINGS_MOULD = 0, 1, 2
SPRING_MODES = {"none": SPRINGS_NONE, "dynamic": SPRINGS_DYNAMIC, "mould": SPRINGS_MOULD}
# The springs' force is taken at x + θ Δt v, v the new velocity. θ = 1 is backward Euler (CHANGELOG.md,
# method notes, "Springs": smaller θ rang until the column fell).
THETA = 1.0
# Longest substep of a material with springs, s, whatever its Young's modulus: the springs are
# linearised about the positions at the start of the substep and contacts are resolved after the
# solve, so in a longer substep an impact pushes a layer v Δt into the next before the springs see
# it. Measured on a 0.1 m block of E = 1 MPa dropped 5 cm at 2 cm spacing: at 2-4 substeps per frame
# (8-17 ms) it settled 8-14 % flattened and kept jittering at 0.4 m/s; at 1/180 s (6 per frame at
# 30 fps, what water takes in the material_cost scene) within 1.3 % of its height, at rest.
SPRING_MAX_DT = 1.0 / 180.0
# ... and at most this many spacings of travel per substep for their fastest particle, for the same
# reason at impacts (a jelly cube's landing).
SPRING_CFL = 0.5


def spring_stiffness(youngs_modulus: float, density: float, spacing: float, h: float) -> float:
    """Clavet's k_spring (1/s², Algorithm 5) of a spring network with Young's modulus E (Pa).

    A spring of rest length L ~ r pulls with m k_spring (1 - r/h) per metre of extension, m = ρ s³.
    Under a uniform strain ε the springs of a particle's lattice carry the stress
    σ = (ρ k_spring / 2) Σ_o (1-q)|o|² ô ô (ô·ε·ô); with the lattice's isotropic fourth moment
    this is λ tr(ε) I + 2μ ε with λ = μ = ρ k_spring Σ_o (1-q)|o|² / 30 (a central-force network:
    Cauchy's relation). The density relaxation holds the volume, so the material is incompressible
    and E = 3μ: k_spring = E K / (3ρ), K = 30 / Σ_o (1-q)|o|² (:func:`viscosity_lattice_constant`).
    """
    return youngs_modulus * viscosity_lattice_constant(spacing, h) / (3.0 * density)


class SpringsClavet2005(ImplicitForces):
    """Spring creation, plasticity and Maxwell relaxation (position stage); their forces for the
    implicit solve (:meth:`implicit_blocks`)."""

    name = "springs_clavet2005"
    citation = "S. Clavet, P. Beaudoin, P. Poulin, Particle-based Viscoelastic Fluid Simulation, SCA 2005"
    stage = POSITION
    parameters = ("springs", "youngs_modulus", "density", "plasticity", "yield_ratio", "relaxation_time")
    theta = THETA
    arrays = {
        "spring_partner": ArraySpec((16,), np.int64, -1, "ids of spring partners, -1 for a free slot"),
        "spring_rest": ArraySpec((16,), np.float64, 0, "spring rest lengths L, m"),
        "bonded": ArraySpec((), np.uint8, 0, "1 once a mould material's particle got its springs"),
    }

    def __init__(self, setup):
        super().__init__(setup)
        s, h = setup.spacing, setup.h
        # Clavet's k_spring (1/s², Algorithm 5) from E.
        self.k_spring = np.zeros(setup.n_materials)
        for m, p in setup.materials.items():
            self.k_spring[m] = spring_stiffness(p.youngs_modulus, p.density, s, h)
        self.alpha = self.per_material("plasticity")
        self.gamma = self.per_material("yield_ratio")
        # Maxwell relaxation time τ (s) per material; 0 = none (``apply`` turns it into a share per substep).
        self.tau = self.per_material("relaxation_time")
        self.mode = self.per_material("springs", np.int64, SPRING_MODES.__getitem__)
        # Per-material flags for the kernels (they read no constants from this module).
        self.dynamic = (self.mode == SPRINGS_DYNAMIC).astype(np.uint8)
        self.mould = (self.mode == SPRINGS_MOULD).astype(np.uint8)
        self.has_springs = bool(np.any(self.mode != SPRINGS_NONE))
        self._shape = None

    @property
    def acts(self) -> bool:
        return self.has_springs

    def active_arrays(self):
        return self.arrays if self.has_springs else {}

    def max_dt(self, world) -> float:
        """``SPRING_MAX_DT`` whatever the stiffness, and ``SPRING_CFL`` spacings of travel for the fastest
        particle with springs (impacts); the solve is implicit, so E does not limit it (the explicit
        springs of Algorithm 5 needed 0.7 / sqrt(15 k_spring): 25 substeps per frame for jelly at 2 cm)."""
        if not self.has_springs:
            return math.inf
        v = world.v[(self.mode != SPRINGS_NONE)[world.material]]
        fastest = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if len(v) else 0.0
        impact = SPRING_CFL * self.setup.spacing / fastest if fastest > 0.0 else math.inf
        return min(SPRING_MAX_DT, impact)

    def implicit_blocks(self, ctx):
        """The springs' pair blocks and Δt a_s(x) (``springs_clavet2005_kernels.spring_terms``), in
        buffers kept across substeps while the particle count and the rows' width stay the same."""
        if not (self.has_springs and ctx.n > 0 and bool(np.any(ctx.arrays["spring_partner"] >= 0))):
            return None
        from .springs_clavet2005_kernels import spring_terms

        a = ctx.arrays
        width = a["spring_partner"].shape[1]
        if self._shape != (ctx.n, width):
            self._shape = (ctx.n, width)
            self._buffers = (np.empty((ctx.n, width), np.int64), np.empty((ctx.n, width, 2)),
                             np.empty((ctx.n, width, 3)), np.empty((ctx.n, 3)))
        sj, sw, se, rhs = self._buffers
        spring_terms(ctx.x, ctx.material, ctx.index_of_id(), a["spring_partner"], a["spring_rest"], self.k_spring,
                     ctx.h, ctx.dt, sj, sw, se, rhs)
        return self._buffers

    def apply(self, ctx) -> None:
        """Spring creation (SCA 2005; thesis fig. 5.3 for moulds), plasticity and removal (eq. 5.2) on the
        predicted positions."""
        if not self.has_springs:
            return
        from . import springs_clavet2005_kernels as k

        a = ctx.arrays
        n = ctx.n
        while True:
            used = np.zeros(n, np.int64)
            k.add_springs(ctx.x, ctx.ids, ctx.material, a["source"], a["bonded"], ctx.nbr, ctx.count,
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
        k.spring_plasticity(ctx.x, ctx.material, ctx.index_of_id(), a["spring_partner"], a["spring_rest"],
                            self.alpha, self.gamma, relax, ctx.h, ctx.dt)

    def frame_stats(self, world) -> dict[str, int | float]:
        """The number of springs (each stored in both endpoints' rows)."""
        springs = world.arrays["spring_partner"] if self.has_springs else None
        return {"springs": 0 if springs is None else int(np.count_nonzero(springs >= 0)) // 2}
