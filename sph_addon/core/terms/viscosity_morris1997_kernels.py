"""Numba kernels of Morris' viscous Laplacian (``viscosity_morris1997``): one pair's factor and the step
it allows.

Called from the pair loop of ``density_pressure_desbrun1996_kernels.pair_accelerations`` (the pair's
factor times v_ij, added before the pressure term, as the loop has always summed them) and from its
``stable_steps`` (the viscous bound, after eq. 8's).
"""

from __future__ import annotations

from ..numerics import config
from ..numerics.kernel_cache import njit


@njit(**config.NJIT)
def pair_factor(mass_j, visc, rhoi, rhoj, grad, r2, eps2):
    """m_j (ρ_i ν_i + ρ_j ν_j)/(ρ_i ρ_j) (x_ij·∇_i W)/(r_ij² + 0.01 ε²), 1/s: the pair's share of
    dv_i/dt per unit v_ij (Morris, Fox & Zhu 1997, J. Comput. Phys. 136, eq. 10; Treuille's
    f = μ Σ m_j v_ji/ρ_j ∇²W in the form that holds ν at any spacing).

    Parameters
    ----------
    mass_j : m_j, kg. visc : ρ_i ν_i + ρ_j ν_j, kg/(m s). rhoi, rhoj : kg/m³.
    grad : ∇_i W = grad · x_ij of the anti-clustering kernel, 1/m⁵. r2 : r_ij², m². eps2 : 0.01 ε², m².

    Returns
    -------
    float64, 1/s (<= 0: grad is; the caller multiplies by v_i - v_j).
    """
    return mass_j * visc / (rhoi * rhoj) * grad * r2 / (r2 + eps2)


@njit(**config.NJIT)
def viscous_step(dt, nu, eps):
    """``dt``, no longer than 0.125 ε²/ν (Morris, Fox & Zhu 1997, eq. 14), s.

    Parameters
    ----------
    dt : the step the other bounds allow, s. nu : ν, m²/s (>= 0). eps : ε, half the support, m.
    """
    if nu * dt > 0.125 * eps * eps:
        return 0.125 * eps * eps / nu
    return dt
