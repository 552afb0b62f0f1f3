"""A Bingham yield stress as a viscosity, regularised after Papanastasiou 1987 ("Flows of materials
with yield", J. Rheology 31): the implicit viscosity (``viscosity_weiler2018``) solves with
ν + (τ_y/ρ)(1 - exp(-|γ̇|/ε))/|γ̇|, so unyielded regions move as near-rigid bodies.

Acts on every material whose ``yield_stress`` (Pa) is above 0 (0: none); reads ``density``. It has
no stage of its own: the viscosity term finds it among its model's terms (:class:`ViscosityModifier`).
"""

from __future__ import annotations

import numpy as np

from ..numerics.lattice import gradient_lattice_constant
from .base import VELOCITY, ViscosityModifier

# Strain rate (1/s) below which a yield-stress material counts as unyielded (the Papanastasiou
# regularisation's ε): its added viscosity tends to τ_y/(ρ ε) there.
YIELD_STRAIN_RATE = 0.01


def yield_viscosity(ctx, v: np.ndarray, yield_nu: np.ndarray, gradient_k: float) -> np.ndarray:
    """(n,) the viscosity a Bingham yield stress adds, m²/s: (τ_y/ρ)(1 - exp(-|γ̇|/ε))/|γ̇|, with
    ``yield_nu`` τ_y/ρ per material and ``gradient_k`` the lattice's gradient constant.

    Papanastasiou's regularisation of τ_y/|γ̇|: smooth, and (τ_y/ρ)/ε where the material
    does not flow, so unyielded regions move as near-rigid bodies under the implicit solve
    (ε = ``YIELD_STRAIN_RATE``: a heap below its yield stress creeps at about ε times the
    ratio of its stress to τ_y). |γ̇| is taken from the velocities ``v`` the solve linearises about
    (v* in the viscoelastic model; the last solution in the sph model's ``AddedViscosityWeiler2018``).
    """
    from .yield_papanastasiou1987_kernels import strain_rates

    rate = np.empty(ctx.n)
    strain_rates(ctx.x, v, ctx.nbr, ctx.count, 1.0 / ctx.h, gradient_k, rate)
    eps = YIELD_STRAIN_RATE
    with np.errstate(invalid="ignore", divide="ignore"):
        added = np.where(rate > 1e-6 * eps, -np.expm1(-rate / eps) / rate, 1.0 / eps)
    return yield_nu[ctx.material] * added


class YieldPapanastasiou1987(ViscosityModifier):
    """The viscosity a yield stress adds, for the implicit viscosity solve."""

    name = "yield_papanastasiou1987"
    citation = "T. C. Papanastasiou, Flows of materials with yield, J. Rheology 31, 1987"
    stage = VELOCITY
    parameters = ("yield_stress", "density")

    def __init__(self, setup):
        super().__init__(setup)
        # τ_y / ρ per material, m²/s² (ρ = 1 for other models' materials, whose τ_y is 0).
        self.yield_nu = self.per_material("yield_stress") / self.per_material("density", fill=1.0)
        self.gradient_k = gradient_lattice_constant(setup.spacing, setup.h)

    @property
    def acts(self) -> bool:
        return bool(np.any(self.yield_nu > 0))

    def materials(self) -> np.ndarray:
        return self.yield_nu > 0

    def added_viscosity(self, ctx, v):
        return yield_viscosity(ctx, v, self.yield_nu, self.gradient_k)
