"""Monaghan's artificial viscosity (Monaghan 1992), as Desbrun & Cani 1996 give it (eq. 5), scaled by α.

References: J. J. Monaghan, *Smoothed particle hydrodynamics*, Annu. Rev. Astron. Astrophys. 30 (1992)
543; M. Desbrun, M.-P. Cani, *Smoothed Particles*, EGCAS 1996, eq. 5 (``shared/papers/000``).

D_i = -m_i Σ_j m_j Π_ij ∇_i W with Π_ij = α (-c̄ μ_ij + 2 μ_ij²)/ρ̄_ij for an approaching pair
(v_ij·x_ij < 0), μ_ij = ε v_ij·x_ij/(r_ij² + ε²/100), ε = h/2, c̄, ᾱ and ρ̄ the pair's means, ∇W the
anti-clustering kernel's; 0 for a receding pair. Desbrun's form is α = 1 (his soft lumps); the
classic liquid takes α ~ 0.05 (Monaghan's range for water, 0.01-0.1), a shear viscosity of about
α c ε / 10. It damps approaching pairs only, vanishes for a rigid motion and keeps momentum.

Computed in the pair loop of ``density_pressure_desbrun1996``, which lists it among its model's
terms: Π_ij is added to the pair's pressure factor before both multiply ∇W, as one sum
(``density_pressure_desbrun1996_kernels.pair_accelerations``; its module docstring says why the loop
is shared). This term holds the formula (``artificial_viscosity_monaghan1992_kernels``) and gives the
loop α per material; its step bound is eq. 8's, in the same term's ``stable_steps``.
"""

from __future__ import annotations

from .base import Term


class ArtificialViscosityMonaghan1992(Term):
    """α per material for the pair loop of ``density_pressure_desbrun1996`` (module docstring); its
    :meth:`accelerations` adds nothing of its own."""

    name = "artificial_viscosity_monaghan1992"
    citation = "Monaghan, Smoothed particle hydrodynamics, Annu. Rev. Astron. Astrophys. 30, 1992"
    parameters = ("artificial_viscosity",)
    # The term whose pair loop computes this one's force, and the coefficient it takes from ``values``.
    fused_into = "density_pressure_desbrun1996"
    coefficient = "alpha"

    def __init__(self, setup):
        super().__init__(setup)
        self.values = self.per_material("artificial_viscosity")  # α, dimensionless, 0 for other models

    def link(self, terms):
        if not any(t.name == self.fused_into for t in terms):
            raise TypeError(f"{self.name} is computed in the pair loop of {self.fused_into}: list that term too")
