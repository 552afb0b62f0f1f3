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
  number). Only the near density has a gain (``RELAXATION`` = 0:
  a resting liquid's arrangement fools Σ (1-q)², see ``viscoelastic_clavet2005``), and
  its target is Clavet's density's error times :func:`near_error_ratio`. The
  equivalent Clavet stiffness k = k Δt² / Δt² follows from the substep; it is
  reported, never set;
* **boundary densities**: flat walls mirror the liquid (``wall_images``); any other
  collider's density is the lattice continued through it (:func:`wall_terms`), so
  the layer next to a floor is not over-packed;
* **surface tension** γ (N/m): the continuum surface force γ κ n̂ δ_s
  (``surface_tension_kernels``), γ/K per unit curvature with K the colour
  jump of a lattice face (:func:`csf_lattice_constant`, :func:`csf_tension`),
  stable below :func:`surface_tension_stable_dt`. (A pair cohesion force
  calibrated by the lattice's surface energy was tried first: it gave the
  liquid a shear stiffness, and a deformed drop froze instead of ringing.)
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
# The relaxation runs on the near density alone: Clavet's density has no gain, and
# the near density's share is larger. 0.45 with the per-pair cap (``density_relaxation_kernels.PAIR_CAP``)
# holds the pool, the dam break's impacts, the paddle and the rubber cube (their core tests pass; 0.55
# threw a burst to 8 cm/s in the resting pool: CHANGELOG.md, method notes, "The liquid's own packing").
RELAXATION = 0.0
RELAXATION_NEAR = 0.45
# Surface tension (surface_tension_kernels): the surface weight's ramp in |∇c| as shares of a (100)
# face's K/(2s); the curvature cap in 1/spacing (a sphere of radius one spacing); the chord weight
# of a full curvature and the floor of the tension's Shepard weight (both fade the force out where
# neighbours leave the support); the stable substep factor (surface_tension_stable_dt).
SURFACE_WEIGHT_RAMP = (0.16, 0.49)
CURVATURE_CAP = 2.0
CURVATURE_SUPPORT = 0.2
TENSION_SUPPORT = 1.0
SURFACE_TENSION_DT = 0.2
# Largest factor of a wall point's no-slip term (wall_viscosity_blocks), which grows as a particle
# nears the surface; Morris et al. 1997 cap theirs at 1.5 for particle boundaries.
NO_SLIP_CAP = 4.0


def _offsets(spacing: float, h: float) -> np.ndarray:
    """(k,3) offsets of the lattice neighbours strictly inside h (self excluded), m."""
    n = int(math.ceil(h / spacing)) + 1
    ax = np.arange(-n, n + 1) * spacing
    g = np.stack(np.meshgrid(ax, ax, ax, indexing="ij"), -1).reshape(-1, 3)
    r = np.linalg.norm(g, axis=1)
    return g[(r > 0) & (r < h)]


@functools.lru_cache(maxsize=8)
def rest_densities(spacing: float, h: float) -> tuple[float, float]:
    """ρ0 = Σ (1-q)² and ρ0^near = Σ (1-q)³ over the lattice neighbours (eqs. 4.1, 4.3)."""
    a = 1.0 - np.linalg.norm(_offsets(spacing, h), axis=1) / h
    return float(np.sum(a**2)), float(np.sum(a**3))


@functools.lru_cache(maxsize=8)
def near_error_ratio(spacing: float, h: float) -> float:
    """How many times Clavet's density's relative error the near density's is, under a uniform
    compression of the lattice: (d ln Σ (1-q)³ / d ln n) / (d ln Σ (1-q)² / d ln n), 1.496 / 1.227 =
    1.219 at h = 2 s. The relaxation runs on the near density, and its target (``density_error``,
    given as Clavet's density's error as before) is this times as much of the near density: the
    same volume either way (0.81 % of volume for 1 % at h = 2 s)."""
    r = np.linalg.norm(_offsets(spacing, 1.1 * h), axis=1)
    step = 0.01
    slopes = []
    for power in (3, 2):
        sums = [float(np.sum(np.clip(1.0 - r * f ** (-1.0 / 3.0) / h, 0.0, None) ** power))
                for f in (1 + step, 1 - step)]
        slopes.append(math.log(sums[0] / sums[1]) / math.log((1 + step) / (1 - step)))
    return slopes[0] / slopes[1]


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
    from ..colliders.boundary_volume import boundary_sums

    off, weights = _wall_weights(spacing, h)
    share = walls.solid_share(np.ascontiguousarray(x[near]), off, spacing)
    boundary_sums(share, weights, near, rho_w, rho_near_w, g, g_near)
    return rho_w, rho_near_w, g, g_near


def _weighted(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """a @ w ((k,m) by (m,c)) without BLAS: numpy hands a product to the BLAS library, whose worker
    threads then spin on the cores numba's threads need (``colliders.response.placed_distances``)."""
    from ..colliders.boundary_volume import weighted_rows

    out = np.empty((a.shape[0], w.shape[1]))
    weighted_rows(np.ascontiguousarray(a, np.float64), np.ascontiguousarray(w, np.float64), out)
    return out


@functools.lru_cache(maxsize=8)
def _wall_weights(spacing: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Lattice offsets (m,3) and the (m,8) weights (1-q)², (1-q)³, (1-q) ô, (1-q)² ô of each."""
    off = _offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    a, unit = 1.0 - r / h, off / r[:, None]
    return off, np.column_stack([a**2, a**3, a[:, None] * unit, a[:, None] ** 2 * unit])


def viscosity_lattice_constant(spacing: float, h: float) -> float:
    """K (1/m²) of the implicit viscosity's Laplacian (``implicit_viscosity_kernels``).

    For a smooth field, E_i = Σ_j φ_ij ((v_j - v_i)·r̂_ij) r̂_ij with φ = 1 - q
    expands to (M/2)(∇²v + 2 ∇(∇·v)), M = Σ_o φ |o|² / 15 over the lattice
    offsets (the isotropic fourth moment; the cubic lattice's anisotropy at
    h = 2.5 s is below 3 %). The liquid is divergence-free to its density error,
    so ∇²v = K E_i with K = 2/M = 30 / Σ_o φ |o|².
    """
    off = _offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    return float(30.0 / np.sum((1.0 - r / h) * r**2))


def spring_stiffness(youngs_modulus: float, density: float, spacing: float, h: float) -> float:
    """Clavet's k_spring (1/s², Algorithm 5) of a spring network with Young's modulus E (Pa).

    A spring of rest length L ~ r pulls with m k_spring (1 - r/h) per metre of extension, m = ρ s³.
    Under a uniform strain ε the springs of a particle's lattice carry the stress
    σ = (ρ k_spring / 2) Σ_o (1-q)|o|² ô ô (ô·ε·ô); with the lattice's isotropic fourth moment
    this is λ tr(ε) I + 2μ ε with λ = μ = ρ k_spring Σ_o (1-q)|o|² / 30 (a central-force network:
    Cauchy's relation). The density relaxation holds the volume, so the material is incompressible
    and E = 3μ: k_spring = E K / (3ρ), K = 30 / Σ_o (1-q)|o|² (:func:`viscosity_lattice_constant`).
    """
    return youngs_modulus * viscosity_lattice_constant(spacing, h) / (3.0 * density)


def gradient_lattice_constant(spacing: float, h: float) -> float:
    """G (1/m) of the velocity gradient Σ_j (1-q)(v_j - v_i) r̂ᵀ: 3 / Σ_o (1-q)|o| over the lattice,
    whose second moments are isotropic, so a linear field's gradient is exact on it."""
    r = np.linalg.norm(_offsets(spacing, h), axis=1)
    return float(3.0 / np.sum((1.0 - r / h) * r))


def wall_viscosity_blocks(x: np.ndarray, walls, spacing: float, h: float) -> np.ndarray:
    """(n,6) B_i = Σ_w s_w f_w φ_w r̂ r̂ᵀ as (xx, yy, zz, xy, xz, yz): the no-slip term of the colliders.

    The lattice continued behind the walls (as in :func:`wall_terms`), each point
    weighted by its cell's share s_w inside the solid, enters the viscous operator
    as fluid at rest (``implicit_viscosity_kernels``). Fluid at rest just behind the
    surface would put the no-slip plane half a spacing inside the solid (measured:
    a wall-bounded shear wave decayed 11 % slowly); as in Morris et al. 1997, each
    point instead carries the velocity -(d_w/d_i) v_i that a profile vanishing at the
    surface extrapolates to, which scales its term by f_w = 1 + d_w/d_i (capped at
    ``NO_SLIP_CAP``), d_i the particle's distance to the surface and d_w the point's
    depth below it along the wall normal (the direction of Σ s_w φ_w r̂).
    """
    out = np.zeros((len(x), 6))
    if walls is None or not len(x):
        return out
    dist = walls.distance(x)
    near = np.flatnonzero(dist < h + 0.5 * spacing)
    if not len(near):
        return out
    off, weights, towards = _wall_viscosity_weights(spacing, h)
    share = walls.solid_share(np.ascontiguousarray(x[near]), off, spacing)
    normal = _weighted(share, towards)
    length = np.linalg.norm(normal, axis=1)
    normal /= np.where(length > 0.0, length, 1.0)[:, None]
    d_i = np.maximum(dist[near], 0.25 * spacing)[:, None]
    depth = _weighted(normal, np.ascontiguousarray(off.T)) - d_i
    factor = np.clip(1.0 + depth / d_i, 1.0, NO_SLIP_CAP)
    out[near] = _weighted(share * factor, weights)
    return out


@functools.lru_cache(maxsize=8)
def _wall_viscosity_weights(spacing: float, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lattice offsets (m,3), the (m,6) weights φ ô_a ô_b, and φ ô (m,3), whose share-weighted sum
    points into the solid."""
    off = _offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    a, u = 1.0 - r / h, off / r[:, None]
    pairs = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
    return off, np.column_stack([a * u[:, p] * u[:, q] for p, q in pairs]), a[:, None] * u


@functools.lru_cache(maxsize=8)
def csf_lattice_constant(spacing: float, h: float) -> float:
    """K (dimensionless): twice the colour gradient a flat face of the lattice carries per unit area.

    With c = Σ (1-q)²/ρ0, the sum of s³ ∇c_i over a column of unit cross-section
    under a face of unit normal N counts the pairs across the face:
    (1/ρ0) Σ_{o·N>0} (o·N)(ô·N) 2(1-q)/h over the lattice offsets o. The cubic
    lattice's second moments are isotropic, so this is (1/(3ρ0)) Σ_o q (1-q) for
    every orientation (checked for (100), (110), (111), (123)); K is twice it,
    (2/(3ρ0)) Σ_o q (1-q) (1.2254 at h = 2 s, 1.146 at 2.5 s). At h <= 2 s a (100) face
    carries the whole column sum on its first layer: |∇c| = K/(2s) there. The CSF force
    F_i = 2 s³ Π ∇c_i with Π = γ κ / K then adds up to γ κ per unit area of any face.
    """
    a = 1.0 - np.linalg.norm(_offsets(spacing, h), axis=1) / h
    rho0 = float(np.sum(a**2))
    return float(2.0 / (3.0 * rho0) * np.sum(a * (1.0 - a)))


def csf_tension(surface_tension: float, spacing: float, h: float) -> float:
    """γ/K (N/m): multiplies the curvature κ (1/m) into the tension Π (Pa) of the CSF kernels."""
    if surface_tension == 0.0:
        return 0.0
    return surface_tension / csf_lattice_constant(spacing, h)


def surface_tension_stable_dt(surface_tension: float, density: float, spacing: float) -> float:
    """Longest substep (s) of the explicit CSF force: Δt <= SURFACE_TENSION_DT sqrt(ρ s³ / γ).

    The shortest capillary wave the particles carry (k = π/s) has ω² = γ k³ / ρ,
    so the bound is ω Δt <= 5.57 x 0.2 = 1.1 (symplectic Euler alone would allow
    2). Measured on a 2 cm drop at rest without gravity, h = 2 s, γ = 0.072 to
    1 N/m, 3 s each: calm (mean speed ~1 cm/s or less) up to 0.29-0.34 at R = 6
    spacings and 0.31-0.34 at R = 9, torn apart from 0.34 and 0.42; the
    evaluation at predicted positions (``surface_tension_kernels``) lowers the
    threshold from ~0.6 but removes a slow spin-up that grew without bound at
    any step.
    """
    if surface_tension <= 0.0:
        return math.inf
    return SURFACE_TENSION_DT * math.sqrt(density * spacing**3 / surface_tension)


# Strain rate (1/s) below which a yield-stress material counts as unyielded (the Papanastasiou
# regularisation's ε): its added viscosity tends to τ_y/(ρ ε) there.
YIELD_STRAIN_RATE = 0.01


def yield_viscosity(ctx, yield_nu: np.ndarray, gradient_k: float) -> np.ndarray:
    """(n,) the viscosity a Bingham yield stress adds, m²/s: (τ_y/ρ)(1 - exp(-|γ̇|/ε))/|γ̇|, with
    ``yield_nu`` τ_y/ρ per material and ``gradient_k`` the lattice's gradient constant.

    Papanastasiou's regularisation of τ_y/|γ̇|: smooth, and (τ_y/ρ)/ε where the material
    does not flow, so unyielded regions move as near-rigid bodies under the implicit solve
    (ε = ``YIELD_STRAIN_RATE``: a heap below its yield stress creeps at about ε times the
    ratio of its stress to τ_y). |γ̇| is taken from v* (Picard: one linearisation per substep).
    """
    from . import implicit_viscosity_kernels as ivk

    rate = np.empty(ctx.n)
    ivk.strain_rates(ctx.x, ctx.v, ctx.nbr, ctx.count, 1.0 / ctx.h, gradient_k, rate)
    eps = YIELD_STRAIN_RATE
    with np.errstate(invalid="ignore", divide="ignore"):
        added = np.where(rate > 1e-6 * eps, -np.expm1(-rate / eps) / rate, 1.0 / eps)
    return yield_nu[ctx.material] * added
