"""Smoothing kernels W(r, h) and their radial derivatives, in one registry.

References:

* S. Clavet, *Animation de fluides viscoélastiques à base de particules*, M.Sc.
  thesis, Université de Montréal, 2005, eqs. 4.1 and 4.3 (density and
  near-density weights (1-q)² and (1-q)³; English short form: Clavet,
  Beaudoin, Poulin, "Particle-based Viscoelastic Fluid Simulation", SCA 2005).
* M. Desbrun, M.-P. Cani, "Smoothed Particles: A new paradigm for animating
  highly deformable bodies", EGCAS 1996, section 3.2 (anti-clustering kernel).
* M. Müller, D. Charypar, M. Gross, "Particle-Based Fluid Simulation for
  Interactive Applications", SCA 2003 (poly6 and spiky kernels; poly6 is also
  the density kernel of A. Treuille's lecture *Particle-based Liquids*).
* J. J. Monaghan, "Smoothed Particle Hydrodynamics", Annu. Rev. Astron.
  Astrophys. 30, 1992 (cubic spline), in the form with support h used by
  SPlisHSPlasH (``CubicKernel`` in ``SPlisHSPlasH/SPHKernels.h``).

Conventions. ``h`` is the interaction radius in m and q = r/h. ``support`` is
the radius, in units of h, beyond which W vanishes (2 for Desbrun-Cani, whose
h is half the support; 1 for all others). Every ``w`` returns W in 1/m³ and
every ``dw`` returns dW/dr in 1/m⁴, both 0 at and beyond the support; the
gradient with respect to x_i of W(|x_i - x_j|) is dW/dr · (x_i - x_j)/r.
Normalised kernels integrate to 1 over 3D space (tested by quadrature).

``KERNELS`` is the reference registry: the slow references (tests/reference/naive.py), the
tests and the docs use it; no production kernel calls it. Numba cannot disk-cache a kernel that
takes another compiled function as an argument (``config.py``), so each term's kernels write out
the form they use (or inline it from ``pair_kernels``).

One cubic spline. :func:`cubic_spline_shape` is its shape without the constant, the form every kernel
that sums it calls (the sph density, Monaghan 2000's artificial pressure, the elastic solid's hourglass
weights); its numpy forms, for the tables built once per bake and the panel's derived constants, are
in ``spline`` (without numba). Each form keeps the arithmetic of the code it replaced, so the bakes
keep their bytes; that is why they differ in their last bit: :func:`cubic_spline_w` multiplies its
constant in before the powers (k·2·a·a·a), numpy's ``q**3`` rounds once where ``q * q * q`` rounds
twice, and :func:`cubic_spline_dw` forms k/h as 8/(π h·h·h·h) (numpy's, 8/(π h**4)).

``clavet_a``, ``clavet_density_weight`` and ``clavet_near_weight`` are the
*unnormalised* pair weights exactly as the relaxation's kernels form them
(a = 1 - r·(1/h), a², a³); tests/core/test_kernels.py pins the two to the same arithmetic, bit
for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from . import config
from .kernel_cache import njit


@dataclass(frozen=True)
class Kernel:
    """One registry entry.

    Attributes
    ----------
    name : registry key.
    support : radius of the support in units of h (1.0 or 2.0).
    w : njit (r, h) -> W, float64, 1/m³ (r, h in m).
    dw : njit (r, h) -> dW/dr, float64, 1/m⁴.
    normalised : True if ∫ W dV = 1 over 3D space.
    description : one line, citing the source (author, year, equation).
    """

    name: str
    support: float  # units of h
    w: Callable[[float, float], float]
    dw: Callable[[float, float], float]
    normalised: bool
    description: str


# -- Clavet's unnormalised pair weights, as the viscoelastic kernels use them ----------------


@njit(**config.NJIT)
def clavet_a(r, inv_h):
    """a = 1 - q = 1 - r·(1/h), the factor of every Clavet 2005 pair term (eqs. 4.1-4.6, Alg. 4, 5).

    Takes 1/h, not h, because the solver kernels hoist it out of their loops; the
    multiplication (not a division by h) is what they compute, so replacing
    their inlined ``1.0 - r * inv_h`` by this call leaves the arithmetic unchanged.

    Parameters
    ----------
    r : float64, pair distance, m (>= 0).
    inv_h : float64, 1/h, 1/m.

    Returns
    -------
    float64, dimensionless; positive inside the support, <= 0 at and beyond it
    (callers test ``a > 0``; it is not clamped).
    """
    return 1.0 - r * inv_h


@njit(**config.NJIT)
def clavet_density_weight(a):
    """Unnormalised density weight a² = (1-q)², Clavet 2005 eq. 4.1 (ρ_i = Σ_j (1-q_ij)²).

    Parameters
    ----------
    a : float64, 1 - q from :func:`clavet_a`; the caller keeps only a > 0.

    Returns
    -------
    float64, dimensionless, computed as ``a * a``.
    """
    return a * a


@njit(**config.NJIT)
def clavet_near_weight(a):
    """Unnormalised near-density weight a³ = (1-q)³, Clavet 2005 eq. 4.3 (ρ_i^near = Σ_j (1-q_ij)³).

    Parameters
    ----------
    a : float64, 1 - q from :func:`clavet_a`; the caller keeps only a > 0.

    Returns
    -------
    float64, dimensionless, computed as ``a * a * a`` (left to right, as inlined in the solver).
    """
    return a * a * a


# -- Normalised kernels ---------------------------------------------------------------------


@njit(**config.NJIT)
def clavet_density_w(r, h):
    """Clavet 2005 density kernel (eq. 4.1), normalised in 3D: W = 15/(2π h³) (1-q)² for q < 1.

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, W, 1/m³; 0 for r >= h.
    """
    q = r / h
    if q >= 1.0:
        return 0.0
    a = 1.0 - q
    return 15.0 / (2.0 * math.pi * h * h * h) * a * a


@njit(**config.NJIT)
def clavet_density_dw(r, h):
    """dW/dr of :func:`clavet_density_w`: -15/(π h⁴) (1-q) for q < 1 (Clavet 2005 eq. 4.1).

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, dW/dr, 1/m⁴; 0 for r >= h. Finite (a cusp) at r = 0.
    """
    q = r / h
    if q >= 1.0:
        return 0.0
    return -15.0 / (math.pi * h * h * h * h) * (1.0 - q)


@njit(**config.NJIT)
def clavet_near_w(r, h):
    """Clavet 2005 near-density kernel (eq. 4.3), normalised in 3D: W = 15/(π h³) (1-q)³ for q < 1.

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, W, 1/m³; 0 for r >= h.
    """
    q = r / h
    if q >= 1.0:
        return 0.0
    a = 1.0 - q
    return 15.0 / (math.pi * h * h * h) * a * a * a


@njit(**config.NJIT)
def clavet_near_dw(r, h):
    """dW/dr of :func:`clavet_near_w`: -45/(π h⁴) (1-q)² for q < 1 (Clavet 2005 eq. 4.3).

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, dW/dr, 1/m⁴; 0 for r >= h.
    """
    q = r / h
    if q >= 1.0:
        return 0.0
    a = 1.0 - q
    return -45.0 / (math.pi * h * h * h * h) * a * a


@njit(**config.NJIT)
def cubic_spline_w(r, h):
    """Cubic spline (Monaghan 1992) with support h, as in SPlisHSPlasH's ``CubicKernel``.

    W = k (6(q³ - q²) + 1) for q <= 1/2, W = 2k (1-q)³ for 1/2 < q < 1,
    k = 8/(π h³) (3D normalisation).

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, W, 1/m³; 0 for r >= h.
    """
    q = r / h
    if q >= 1.0:
        return 0.0
    k = 8.0 / (math.pi * h * h * h)
    if q <= 0.5:
        return k * (6.0 * (q * q * q - q * q) + 1.0)
    a = 1.0 - q
    return k * 2.0 * a * a * a


@njit(**config.NJIT)
def cubic_spline_dw(r, h):
    """dW/dr of :func:`cubic_spline_w` (Monaghan 1992, SPlisHSPlasH form).

    dW/dr = (k/h) (18q² - 12q) for q <= 1/2, -(6k/h) (1-q)² for 1/2 < q < 1, k = 8/(π h³).

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, dW/dr, 1/m⁴; 0 for r >= h (and at r = 0).
    """
    q = r / h
    if q >= 1.0:
        return 0.0
    k_h = 8.0 / (math.pi * h * h * h * h)
    if q <= 0.5:
        return k_h * (18.0 * q * q - 12.0 * q)
    a = 1.0 - q
    return -6.0 * k_h * a * a


@njit(**config.NJIT)
def cubic_spline_shape(q):
    """The cubic spline's shape at q = r/h < 1, without its constant k = 8/(π h³) (Monaghan 1992, support h).

    6(q³ - q²) + 1 for q <= 1/2, 2(1-q)³ for 1/2 < q < 1, computed as ``6.0 * (q * q * q - q * q) + 1.0``
    and ``2.0 * a * a * a`` (a = 1 - q): the sph density sum and artificial pressure
    (``density_pressure_desbrun1996_kernels``) and the elastic solid's hourglass weights
    (``elasticity_becker2009_gradient.kernel_weight``) call it.

    Parameters
    ----------
    q : float64, r/h, dimensionless; the caller keeps 0 <= q < 1 (the value beyond is not 0).

    Returns
    -------
    float64, dimensionless: 1 at q = 0, 1/4 at q = 1/2.
    """
    if q <= 0.5:
        return 6.0 * (q * q * q - q * q) + 1.0
    a = 1.0 - q
    return 2.0 * a * a * a


@njit(**config.NJIT)
def poly6_w(r, h):
    """Poly6 kernel, Müller et al. 2003: W = 315/(64π h⁹) (h² - r²)³ for r < h.

    Also the density kernel of Treuille's lecture *Particle-based Liquids*.

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, W, 1/m³; 0 for r >= h.
    """
    if r >= h:
        return 0.0
    d = h * h - r * r
    h3 = h * h * h
    return 315.0 / (64.0 * math.pi * h3 * h3 * h3) * d * d * d


@njit(**config.NJIT)
def poly6_dw(r, h):
    """dW/dr of :func:`poly6_w`: -6r · 315/(64π h⁹) (h² - r²)² for r < h (Müller et al. 2003).

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, dW/dr, 1/m⁴; 0 for r >= h (and at r = 0).
    """
    if r >= h:
        return 0.0
    d = h * h - r * r
    h3 = h * h * h
    return -6.0 * r * 315.0 / (64.0 * math.pi * h3 * h3 * h3) * d * d


@njit(**config.NJIT)
def spiky_w(r, h):
    """Spiky kernel, Müller et al. 2003: W = 15/(π h⁶) (h - r)³ for r < h.

    Its gradient does not vanish at r = 0, which is why Müller et al. use it for pressure.

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, W, 1/m³; 0 for r >= h.
    """
    if r >= h:
        return 0.0
    d = h - r
    h3 = h * h * h
    return 15.0 / (math.pi * h3 * h3) * d * d * d


@njit(**config.NJIT)
def spiky_dw(r, h):
    """dW/dr of :func:`spiky_w`: -45/(π h⁶) (h - r)² for r < h (Müller et al. 2003).

    Parameters
    ----------
    r : float64, distance, m. h : float64, support radius, m.

    Returns
    -------
    float64, dW/dr, 1/m⁴; 0 for r >= h, -45/(π h⁴) at r = 0.
    """
    if r >= h:
        return 0.0
    d = h - r
    h3 = h * h * h
    return -45.0 / (math.pi * h3 * h3) * d * d


@njit(**config.NJIT)
def desbrun_anticluster_w(r, h):
    """Anti-clustering kernel, Desbrun & Cani 1996 section 3.2: W = 15/(π (4h)³) (2 - r/h)³ for r < 2h.

    The support is 2h. 15/(64π h³) is the 3D normalisation: 4π h³ ∫₀² s² (2-s)³ ds
    = 4π h³ · 16/15 = 64π h³/15.

    Parameters
    ----------
    r : float64, distance, m. h : float64, half the support radius, m.

    Returns
    -------
    float64, W, 1/m³; 0 for r >= 2h.
    """
    s = r / h
    if s >= 2.0:
        return 0.0
    a = 2.0 - s
    return 15.0 / (64.0 * math.pi * h * h * h) * a * a * a


@njit(**config.NJIT)
def desbrun_anticluster_dw(r, h):
    """dW/dr of :func:`desbrun_anticluster_w`: -45/(64π h⁴) (2 - r/h)² for r < 2h (Desbrun & Cani 1996).

    Parameters
    ----------
    r : float64, distance, m. h : float64, half the support radius, m.

    Returns
    -------
    float64, dW/dr, 1/m⁴; 0 for r >= 2h.
    """
    s = r / h
    if s >= 2.0:
        return 0.0
    a = 2.0 - s
    return -45.0 / (64.0 * math.pi * h * h * h * h) * a * a


KERNELS: dict[str, Kernel] = {
    k.name: k
    for k in (
        Kernel("clavet_density", 1.0, clavet_density_w, clavet_density_dw, True,
               "Clavet 2005 eq. 4.1 density weight (1-q)^2, normalised by 15/(2 pi h^3)"),
        Kernel("clavet_near", 1.0, clavet_near_w, clavet_near_dw, True,
               "Clavet 2005 eq. 4.3 near-density weight (1-q)^3, normalised by 15/(pi h^3)"),
        Kernel("cubic_spline", 1.0, cubic_spline_w, cubic_spline_dw, True,
               "Monaghan 1992 cubic spline with support h, k = 8/(pi h^3), as in SPlisHSPlasH CubicKernel"),
        Kernel("poly6", 1.0, poly6_w, poly6_dw, True,
               "Muller et al. 2003 poly6, 315/(64 pi h^9)(h^2-r^2)^3 (Treuille lecture density kernel)"),
        Kernel("spiky", 1.0, spiky_w, spiky_dw, True,
               "Muller et al. 2003 spiky, 15/(pi h^6)(h-r)^3, gradient kernel for pressure"),
        Kernel("desbrun_anticluster", 2.0, desbrun_anticluster_w, desbrun_anticluster_dw, True,
               "Desbrun & Cani 1996 section 3.2 anti-clustering kernel, 15/(pi (4h)^3)(2-r/h)^3, support 2h"),
    )
}
