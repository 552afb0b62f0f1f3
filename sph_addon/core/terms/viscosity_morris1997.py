"""Morris' viscous Laplacian (Morris, Fox & Zhu 1997): the kinematic viscosity ν of the sph model, explicit.

References: J. P. Morris, P. J. Fox, Y. Zhu, *Modeling low Reynolds number incompressible flows using
SPH*, J. Comput. Phys. 136 (1997) 214, eq. 10 (the force) and eq. 14 (the step); A. Treuille,
lecture *Particle-based Liquids* (``shared/papers/002``).

a_i += Σ_j m_j (ρ_i ν_i + ρ_j ν_j)/(ρ_i ρ_j) (x_ij·∇_i W_ij)/(r_ij² + 0.01 ε²) v_ij, ε = h/2 and ∇W the
anti-clustering kernel's: Treuille's f = μ Σ m_j (v_j - v_i)/ρ_j ∇²W in the form that holds ν at
every spacing (a kernel's own ∇²W does not). Explicit, so a particle's step is at most 0.125 ε²/ν
(eq. 14): thick pastes take their firmness from the artificial viscosity or a yield stress instead.

The walls hold the liquid (no slip) as Morris, Fox & Zhu's boundary particles do: the particle's
lattice is continued behind the colliders at rest, each point w weighted by its cell's share s_w
inside the solid (``boundary.lattice_fill``, the same points as the implicit viscosity's no-slip
blocks, ``viscosity_weiler2018``), at the particle's own density, mass and ν, and with the velocity
-(d_w/d_i) v_i that a profile vanishing at the surface extrapolates to (Morris et al.'s boundary
particles, d_i the particle's distance to the surface, d_w the point's depth behind it; the factor
1 + d_w/d_i capped at ``lattice_fill.NO_SLIP_CAP``, where Morris et al. cap theirs at 1.5). Eq. 10
over those points is then

    a_i += -(2 m_i ν_i / ρ_i) B_i v_i,   B_i = Σ_w s_w (1 + d_w/d_i) φ(r_w),
    φ(r) = -(x_iw·∇_i W)/(r² + 0.01 ε²) = 45/(π h⁶) (h - r)² r / (r² + 0.01 ε²)

(:func:`wall_weights`, per lattice offset), added by ``density_pressure_desbrun1996`` after its pair
loop, with the walls' push, to the share of the acceleration the colliders exert: the scheme reports
what the kicks give of it to the colliders, equal and opposite (``integrators.Leapfrog``). Deviation:
only colliders at rest hold the liquid (a moving collider's surface velocity is not in the walls),
as the implicit viscosity's no-slip term. At h = 2 s the explicit step bound (eq. 14) keeps the wall
term stable: at that step it takes ν Δt (2 m/ρ) B_i = 0.24 of a particle's velocity per step at
d_i = s/2 and 0.54 at s/4, where the particle's pair sum takes 0.51 (the lattice's).

Computed in the pair loop of ``density_pressure_desbrun1996``, which lists it among its model's
terms: each pair's share is added to the same running sum as the pressure's, before it
(``density_pressure_desbrun1996_kernels.pair_accelerations``; its module docstring says why the loop
is shared), and the step bound after eq. 8's in ``stable_steps``. This term holds the formulas
(``viscosity_morris1997_kernels``, :func:`wall_weights`) and gives the loop ν per material.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..numerics.lattice import offsets
from .base import Term


@functools.lru_cache(maxsize=8)
def wall_weights(spacing: float, h: float) -> np.ndarray:
    """(m,1) φ(r_o) = 45/(π h⁶) (h - r)² r / (r² + 0.01 ε²), 1/m⁵, of each lattice offset o within h
    (``numerics.lattice.offsets``): -(x_io·∇_i W)/(r² + 0.01 ε²) of Morris et al.'s eq. 10 for a point at
    x_i + o, ε = h/2, ∇W the anti-clustering kernel's (module docstring)."""
    r = np.linalg.norm(offsets(spacing, h), axis=1)
    eps2 = 0.01 * (0.5 * h) ** 2
    phi = 45.0 / (math.pi * h**6) * (h - r) ** 2 * r / (r * r + eps2)
    return np.ascontiguousarray(phi[:, None])


class ViscosityMorris1997(Term):
    """ν per material for the pair loop of ``density_pressure_desbrun1996`` (module docstring); its
    :meth:`accelerations` adds nothing of its own."""

    name = "viscosity_morris1997"
    citation = "Morris, Fox & Zhu, Modeling low Reynolds number incompressible flows using SPH, JCP 136, 1997"
    parameters = ("kinematic_viscosity", "walls")
    # The term whose pair loop computes this one's force, and the coefficient it takes from ``values``.
    fused_into = "density_pressure_desbrun1996"
    coefficient = "nu"

    def __init__(self, setup):
        super().__init__(setup)
        self.values = self.per_material("kinematic_viscosity")  # ν, m²/s, 0 for other models

    def link(self, terms):
        if not any(t.name == self.fused_into for t in terms):
            raise TypeError(f"{self.name} is computed in the pair loop of {self.fused_into}: list that term too")
