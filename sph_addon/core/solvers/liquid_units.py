"""From physical quantities to Clavet's constants: lattice sums at a particle spacing and support radius.

Clavet's double density relaxation (thesis Algorithm 3) measures density as a
kernel sum ρ = Σ (1-q)² in "lattice units" and moves particles by Δt² k (ρ-ρ0)
(eq. 4.6); his k, k^near, ρ0 and σ are tuned by eye for one resolution. Here
every constant is a lattice sum at the bake's spacing s and radius h, so that a
material given in SI units behaves the same at every spacing and substep:

* **rest densities** ρ0 = Σ (1-q)², ρ0^near = Σ (1-q)³ over the neighbours of a
  particle of the simple cubic lattice of spacing s (the arrangement every
  source fills with): a fill is at its rest density from the first step;
* **relaxation gains** k Δt² = ω h / (2 ρ0) and k^near Δt² = ω h / (3 Σ (1-q)⁴):
  moving the neighbours of a compressed particle by D_j = k Δt² (ρ-ρ0)(1-q_j)
  changes its density by (2/h) Σ (1-q_j)² k Δt² (ρ-ρ0), so ω = 1 is the Newton
  step of the particle's own constraint and ω < 1 under-relaxes it for the
  overlapping neighbourhoods of Gauss-Seidel (a dimensionless, resolution-free
  number). The equivalent Clavet stiffness k = ω h / (2 ρ0 Δt²) follows from the
  substep; it is reported, never set;
* **boundary densities**: the density a wall at distance d takes from a particle
  is the lattice continued through the wall (:func:`wall_terms`), so the layer
  next to a floor is not over-packed;
* **surface tension** γ (N/m): a pair force c·m·ψ(q) whose surface energy on the
  lattice is γ (:func:`cohesion_coefficient`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

# Under-relaxation of the Gauss-Seidel passes (see the module docstring). The overlapping
# neighbourhoods make the single-constraint Newton step far too long: measured on a 0.5 m
# pool at h = 2 s, ω = 0.5 (with ω_near = 0.5) blows up within 3 frames, ω = 0.25 still
# rattles the bottom layers; 0.2 and 0.1 hold it (the old code's stable limit,
# Δt² (k + k_near) <= 0.12 h, is the same bound).
RELAXATION = 0.2
RELAXATION_NEAR = 0.1


def _offsets(spacing: float, h: float) -> np.ndarray:
    """(k,3) offsets of the lattice neighbours strictly inside h (self excluded), m."""
    n = int(math.ceil(h / spacing)) + 1
    ax = np.arange(-n, n + 1) * spacing
    g = np.stack(np.meshgrid(ax, ax, ax, indexing="ij"), -1).reshape(-1, 3)
    r = np.linalg.norm(g, axis=1)
    return g[(r > 0) & (r < h)]


def rest_densities(spacing: float, h: float) -> tuple[float, float]:
    """ρ0 = Σ (1-q)² and ρ0^near = Σ (1-q)³ over the lattice neighbours (eqs. 4.1, 4.3)."""
    a = 1.0 - np.linalg.norm(_offsets(spacing, h), axis=1) / h
    return float(np.sum(a**2)), float(np.sum(a**3))


def relaxation_gains(spacing: float, h: float) -> tuple[float, float]:
    """k Δt² and k^near Δt² (m per unit density error) of one under-relaxed Newton step."""
    a = 1.0 - np.linalg.norm(_offsets(spacing, h), axis=1) / h
    return RELAXATION * h / (2.0 * float(np.sum(a**2))), RELAXATION_NEAR * h / (3.0 * float(np.sum(a**4)))


def wall_terms(x: np.ndarray, walls, spacing: float, h: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the colliders contribute to each particle's densities: the fluid missing behind them.

    A solid stands for the liquid its volume would hold (as SPlisHSPlasH's volume
    maps do): the particle's lattice is continued into it, each lattice point y = x + o
    weighted by the share of its cell inside the solid, clamp(1/2 - sdf(y)/s, 0, 1).
    A particle resting at d = s/2 from a flat wall then sees exactly the bulk density
    (the points one spacing behind it are wholly inside, those beside it wholly
    outside), corners and edges count every wall, and the share varies smoothly as
    the particle approaches.

    Returns ρ_w = Σ w (1-q)², ρ^near_w = Σ w (1-q)³ (n,), and g = Σ w (1-q) ô,
    g^near = Σ w (1-q)² ô (n,3), pointing towards the solid: the relaxation pushes
    the particle by -P Δt² g (eq. 4.6 with fixed partners), and linearises the
    densities as ρ_w + (2/h) g·δ, ρ^near_w + (3/h) g^near·δ for a move δ.
    """
    n = len(x)
    rho_w, rho_near_w = np.zeros(n), np.zeros(n)
    g, g_near = np.zeros((n, 3)), np.zeros((n, 3))
    if walls is None or n == 0:
        return rho_w, rho_near_w, g, g_near
    near = np.flatnonzero(walls.distance(x) < h + 0.5 * spacing)
    if not len(near):
        return rho_w, rho_near_w, g, g_near
    off, weights = _wall_weights(spacing, h)
    share = walls.solid_share(np.ascontiguousarray(x[near]), off, spacing)
    sums = share @ weights
    rho_w[near], rho_near_w[near] = sums[:, 0], sums[:, 1]
    g[near], g_near[near] = sums[:, 2:5], sums[:, 5:8]
    return rho_w, rho_near_w, g, g_near


@functools.lru_cache(maxsize=8)
def _wall_weights(spacing: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Lattice offsets (m,3) and the (m,8) weights (1-q)², (1-q)³, (1-q) ô, (1-q)² ô of each."""
    off = _offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    a, unit = 1.0 - r / h, off / r[:, None]
    return off, np.column_stack([a**2, a**3, a[:, None] * unit, a[:, None] ** 2 * unit])


def cohesion_shape(q: np.ndarray) -> np.ndarray:
    """ψ(q) = -cos(3πq/2): a push below q = 1/3, a pull up to q = 1, zero at q = 1."""
    return -np.cos(1.5 * np.pi * q)


def surface_energy_per_pair_force(spacing: float, h: float) -> float:
    """Γ (1/m): the surface energy per unit area of the lattice cut by a plane, per newton of pair force.

    Separating two half-lattices breaks every pair across the plane; per unit area
    there are n |z| of them for each offset z > 0 (n = 1/s³), each costing the work
    Φ(r) = ∫_r^h F ψ(r'/h) dr' of its pair force F ψ. The work is 2γ (two new
    surfaces), so γ = F Γ with Γ = (n/2) Σ_{z>0} z ∫_q^1 h ψ. This is Fowler's
    formula γ = (π n²/8) ∫ r⁴ φ'(r) dr on the lattice instead of a uniform fluid.
    """
    off = _offsets(spacing, h)
    up = off[off[:, 2] > 0]
    q = np.linalg.norm(up, axis=1) / h
    # ∫_q^1 -cos(3πt/2) dt = (2/3π) (sin(3πq/2) - sin(3π/2)) = (2/3π)(sin(3πq/2) + 1)
    work = h * (2.0 / (3.0 * math.pi)) * (np.sin(1.5 * math.pi * q) + 1.0)
    return float(0.5 / spacing**3 * np.sum(up[:, 2] * work))


def cohesion_coefficient(surface_tension: float, density: float, spacing: float, h: float) -> float:
    """c (m/s²): the pair acceleration scale for surface tension γ (N/m) of a liquid of density ρ (kg/m³).

    The pair force F = γ / Γ (newtons) acts on particles of mass m = ρ s³.
    """
    if surface_tension == 0.0:
        return 0.0
    return surface_tension / surface_energy_per_pair_force(spacing, h) / (density * spacing**3)


def cohesion_stable_dt(coefficient: float, spacing: float, h: float) -> float:
    """Longest substep (s) at which the explicit cohesion force stays stable.

    The pair forces cancel in the bulk but their stiffnesses add up: the largest
    eigenvalue of the lattice's stiffness matrix is at most λ = 2 Σ_j (|f'(r_j)| +
    2 |f(r_j)| / r_j) (Gershgorin over the 3x3 blocks of the central force f = c ψ),
    and symplectic Euler needs Δt sqrt(λ) < 2; we keep Δt sqrt(λ) <= 1. Measured:
    a 2 cm drop at s = 2.5 mm with γ = 0.288 N/m flies apart at Δt sqrt(λ) ≈ 4.
    """
    if coefficient == 0.0:
        return math.inf
    r = np.linalg.norm(_offsets(spacing, h), axis=1)
    q = r / h
    f = coefficient * np.abs(cohesion_shape(q))
    df = coefficient * 1.5 * math.pi / h * np.abs(np.sin(1.5 * math.pi * q))
    lam = 2.0 * float(np.sum(df + 2.0 * f / r))
    return 1.0 / math.sqrt(lam)
