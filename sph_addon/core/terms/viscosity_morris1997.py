"""Morris' viscous Laplacian (Morris, Fox & Zhu 1997): the kinematic viscosity ν of the sph model, explicit.

References: J. P. Morris, P. J. Fox, Y. Zhu, *Modeling low Reynolds number incompressible flows using
SPH*, J. Comput. Phys. 136 (1997) 214, eq. 10 (the force) and eq. 14 (the step); A. Treuille,
lecture *Particle-based Liquids* (``shared/papers/002``).

a_i += Σ_j m_j (ρ_i ν_i + ρ_j ν_j)/(ρ_i ρ_j) (x_ij·∇_i W_ij)/(r_ij² + 0.01 ε²) v_ij, ε = h/2 and ∇W the
anti-clustering kernel's: Treuille's f = μ Σ m_j (v_j - v_i)/ρ_j ∇²W in the form that holds ν at
every spacing (a kernel's own ∇²W does not). Explicit, so a particle's step is at most 0.125 ε²/ν
(eq. 14): thick pastes take their firmness from the artificial viscosity or a yield stress instead.

Computed in the pair loop of ``density_pressure_desbrun1996``, which lists it among its model's
terms: each pair's share is added to the same running sum as the pressure's, before it
(``density_pressure_desbrun1996_kernels.pair_accelerations``; its module docstring says why the loop
is shared), and the step bound after eq. 8's in ``stable_steps``. This term holds the formulas
(``viscosity_morris1997_kernels``) and gives the loop ν per material.
"""

from __future__ import annotations

from .base import Term


class ViscosityMorris1997(Term):
    """ν per material for the pair loop of ``density_pressure_desbrun1996`` (module docstring); its
    :meth:`accelerations` adds nothing of its own."""

    name = "viscosity_morris1997"
    citation = "Morris, Fox & Zhu, Modeling low Reynolds number incompressible flows using SPH, JCP 136, 1997"
    parameters = ("kinematic_viscosity",)
    # The term whose pair loop computes this one's force, and the coefficient it takes from ``values``.
    fused_into = "density_pressure_desbrun1996"
    coefficient = "nu"

    def __init__(self, setup):
        super().__init__(setup)
        self.values = self.per_material("kinematic_viscosity")  # ν, m²/s, 0 for other models

    def link(self, terms):
        if not any(t.name == self.fused_into for t in terms):
            raise TypeError(f"{self.name} is computed in the pair loop of {self.fused_into}: list that term too")
