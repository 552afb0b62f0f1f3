"""Numba kernels of Monaghan's artificial viscosity (``artificial_viscosity_monaghan1992``): one pair's Π_ij.

Called from the pair loop of ``density_pressure_desbrun1996_kernels.pair_accelerations``, which adds
Π_ij to the pair's pressure term before it multiplies by -m_j ∇_i W (Desbrun & Cani 1996 eq. 5): the
pressure and the viscosity of a pair are one sum, in the order the loop has always formed it.
"""

from __future__ import annotations

from ..numerics import config
from ..numerics.kernel_cache import njit


@njit(**config.NJIT)
def approach_rate(eps, vr, r2, eps2):
    """μ_ij = ε v_ij·x_ij / (r_ij² + ε²/100) (Monaghan 1992; Desbrun & Cani 1996 eq. 5), m/s.

    Parameters
    ----------
    eps : ε, Desbrun's smoothing length (half the support), m. vr : v_ij·x_ij, m²/s (< 0: approaching).
    r2 : r_ij², m². eps2 : ε²/100, m².

    Returns
    -------
    float64, m/s, negative for an approaching pair. Also eq. 8's rate (the stable step's max_j μ_ij).
    """
    return eps * vr / (r2 + eps2)


@njit(**config.NJIT)
def viscous_pressure(abar, cbar, mu, rhoi, rhoj):
    """Π_ij = ᾱ (-c̄ μ_ij + 2 μ_ij²) / ρ̄_ij of an approaching pair (Monaghan 1992, β = 2 as in Desbrun &
    Cani 1996 eq. 5, scaled by α), m⁵/(kg s²).

    Parameters
    ----------
    abar, cbar : the pair's mean α (dimensionless) and speed of sound, m/s. mu : μ_ij (< 0), m/s.
    rhoi, rhoj : the particles' densities, kg/m³ (ρ̄_ij their mean).

    Returns
    -------
    float64, m⁵/(kg s²), the units of the pressure term P/ρ² it is added to; >= 0.
    """
    return abar * (-cbar * mu + 2.0 * mu * mu) / (0.5 * (rhoi + rhoj))
