"""The cubic spline (Monaghan 1992, support h, SPlisHSPlasH's ``CubicKernel``) in numpy, without numba.

The numba forms are in ``kernels`` (:func:`~.kernels.cubic_spline_w`, :func:`~.kernels.cubic_spline_dw`,
:func:`~.kernels.cubic_spline_shape`); these are for what is computed once per bake over many distances
at once, and for what the Blender panel derives on a redraw, where numba is not loaded: the sph
model's lattice sums and wall shares (``terms.density_pressure_desbrun1996``), the heat pass's lattice
constants (``passes.heat``). Each keeps the arithmetic of the code it replaced, so the bakes keep their
bytes; where that differs from the numba form's it is said below (the last bit).

Conventions as in ``kernels``: q = r/h, W = k · shape(q), k = 8/(π h³).
"""

from __future__ import annotations

import math

import numpy as np


def cubic_spline_shape_array(q) -> np.ndarray:
    """The cubic spline's shape at q = r/h without its constant (``kernels.cubic_spline_shape``), 0 from
    q = 1 on: 6(q³ - q²) + 1 for q <= 1/2, 2(1-q)³ below 1.

    numpy's ``q**3`` and ``(1 - q)**3`` call ``pow`` (one rounding where ``q * q * q`` rounds twice), so
    about a third of the values differ from the numba form's in the last bit; the sph model's tables
    were made with this form.

    Parameters
    ----------
    q : array-like of float64, r/h >= 0, dimensionless.

    Returns
    -------
    float64 array of q's shape, dimensionless (1 at 0, 1/4 at 1/2, 0 from 1 on).
    """
    q = np.asarray(q, np.float64)
    return np.where(q <= 0.5, 6.0 * (q**3 - q**2) + 1.0, np.where(q < 1.0, 2.0 * (1.0 - q) ** 3, 0.0))


def cubic_spline_dw_array(r, h: float) -> np.ndarray:
    """dW/dr of the cubic spline (``kernels.cubic_spline_dw``) for many 0 < r < h at once, 1/m⁴.

    (k/h)(18q² - 12q) for q <= 1/2, -(6k/h)(1-q)² above, with k/h = 8/(π h**4) and the second branch
    formed as (-6k/h)·(1-q)²: the heat pass's lattice constants were made with this arithmetic, which
    differs from the numba kernel's (8/(π h·h·h·h), ((-6k/h)·a)·a) in the last bit.

    Parameters
    ----------
    r : float64 array, distances, m; the caller keeps them inside the support (no 0 is returned beyond it).
    h : support radius, m.

    Returns
    -------
    float64 array of r's shape, dW/dr, 1/m⁴ (<= 0).
    """
    q = r / h
    k_h = 8.0 / (math.pi * h**4)
    return np.where(q <= 0.5, k_h * (18.0 * q * q - 12.0 * q), -6.0 * k_h * (1.0 - q) ** 2)
