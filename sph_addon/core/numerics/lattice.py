"""Sums over the simple cubic lattice at a particle spacing and support radius: the constants that
make a material given in SI units behave the same at every spacing.

Every source fills the simple cubic lattice of spacing s, so a sum over a particle's lattice
neighbours within h is what the bulk of a fresh fill measures. The terms turn their physical
parameters into method constants with these sums (each term's module says how):

* :func:`rest_densities`: Clavet's densities ρ0 = Σ (1-q)², ρ0^near = Σ (1-q)³ (eqs. 4.1, 4.3),
  the density relaxation's rest state (``terms.relaxation_clavet2005``), the colour field's unit
  (``terms.surface_tension_brackbill1992``) and XSPH's normalisation;
* :func:`near_error_ratio`: how the near density's error relates to Clavet's density's;
* :func:`viscosity_lattice_constant`: the Laplacian's calibration (``terms.viscosity_weiler2018``,
  and the springs' Young's modulus, ``terms.springs_clavet2005``);
* :func:`gradient_lattice_constant`: the velocity gradient's (``terms.yield_papanastasiou1987``).
"""

from __future__ import annotations

import functools
import math

import numpy as np


def offsets(spacing: float, h: float) -> np.ndarray:
    """(k,3) offsets of the lattice neighbours strictly inside h (self excluded), m."""
    n = int(math.ceil(h / spacing)) + 1
    ax = np.arange(-n, n + 1) * spacing
    g = np.stack(np.meshgrid(ax, ax, ax, indexing="ij"), -1).reshape(-1, 3)
    r = np.linalg.norm(g, axis=1)
    return g[(r > 0) & (r < h)]


@functools.lru_cache(maxsize=8)
def rest_densities(spacing: float, h: float) -> tuple[float, float]:
    """ρ0 = Σ (1-q)² and ρ0^near = Σ (1-q)³ over the lattice neighbours (eqs. 4.1, 4.3)."""
    a = 1.0 - np.linalg.norm(offsets(spacing, h), axis=1) / h
    return float(np.sum(a**2)), float(np.sum(a**3))


@functools.lru_cache(maxsize=8)
def near_error_ratio(spacing: float, h: float) -> float:
    """How many times Clavet's density's relative error the near density's is, under a uniform
    compression of the lattice: (d ln Σ (1-q)³ / d ln n) / (d ln Σ (1-q)² / d ln n), 1.496 / 1.227 =
    1.219 at h = 2 s. The relaxation runs on the near density, and its target (``density_error``,
    given as Clavet's density's error as before) is this times as much of the near density: the
    same volume either way (0.81 % of volume for 1 % at h = 2 s)."""
    r = np.linalg.norm(offsets(spacing, 1.1 * h), axis=1)
    step = 0.01
    slopes = []
    for power in (3, 2):
        sums = [float(np.sum(np.clip(1.0 - r * f ** (-1.0 / 3.0) / h, 0.0, None) ** power))
                for f in (1 + step, 1 - step)]
        slopes.append(math.log(sums[0] / sums[1]) / math.log((1 + step) / (1 - step)))
    return slopes[0] / slopes[1]


def viscosity_lattice_constant(spacing: float, h: float) -> float:
    """K (1/m²) of the implicit viscosity's Laplacian (``viscosity_weiler2018_kernels``).

    For a smooth field, E_i = Σ_j φ_ij ((v_j - v_i)·r̂_ij) r̂_ij with φ = 1 - q
    expands to (M/2)(∇²v + 2 ∇(∇·v)), M = Σ_o φ |o|² / 15 over the lattice
    offsets (the isotropic fourth moment; the cubic lattice's anisotropy at
    h = 2.5 s is below 3 %). The liquid is divergence-free to its density error,
    so ∇²v = K E_i with K = 2/M = 30 / Σ_o φ |o|².
    """
    off = offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    return float(30.0 / np.sum((1.0 - r / h) * r**2))


def gradient_lattice_constant(spacing: float, h: float) -> float:
    """G (1/m) of the velocity gradient Σ_j (1-q)(v_j - v_i) r̂ᵀ: 3 / Σ_o (1-q)|o| over the lattice,
    whose second moments are isotropic, so a linear field's gradient is exact on it."""
    r = np.linalg.norm(offsets(spacing, h), axis=1)
    return float(3.0 / np.sum((1.0 - r / h) * r))


