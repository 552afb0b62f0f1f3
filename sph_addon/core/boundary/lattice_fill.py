"""The fluid missing behind the colliders, as the boundary terms see it: each particle's lattice
continued into the solids, each lattice point weighted by its cell's share inside them.

Two users: the density relaxation's boundary densities (:func:`wall_terms`, for colliders that are not
mirrored, ``mirror``) and the implicit viscosity's no-slip blocks (:func:`wall_viscosity_blocks`).
A solid stands for the liquid its volume would hold, as SPlisHSPlasH's volume maps do.
"""

from __future__ import annotations

import functools

import numpy as np

from ..numerics.lattice import offsets

# Largest factor of a wall point's no-slip term (wall_viscosity_blocks), which grows as a particle
# nears the surface; Morris et al. 1997 cap theirs at 1.5 for particle boundaries.
NO_SLIP_CAP = 4.0


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
    from .solid_share_kernels import boundary_sums

    off, weights = _wall_weights(spacing, h)
    share = walls.solid_share(np.ascontiguousarray(x[near]), off, spacing)
    boundary_sums(share, weights, near, rho_w, rho_near_w, g, g_near)
    return rho_w, rho_near_w, g, g_near


def _weighted(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """a @ w ((k,m) by (m,c)) without BLAS: numpy hands a product to the BLAS library, whose worker
    threads then spin on the cores numba's threads need (``colliders.response.placed_distances``)."""
    from .solid_share_kernels import weighted_rows

    out = np.empty((a.shape[0], w.shape[1]))
    weighted_rows(np.ascontiguousarray(a, np.float64), np.ascontiguousarray(w, np.float64), out)
    return out


@functools.lru_cache(maxsize=8)
def _wall_weights(spacing: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Lattice offsets (m,3) and the (m,8) weights (1-q)², (1-q)³, (1-q) ô, (1-q)² ô of each."""
    off = offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    a, unit = 1.0 - r / h, off / r[:, None]
    return off, np.column_stack([a**2, a**3, a[:, None] * unit, a[:, None] ** 2 * unit])


def wall_viscosity_blocks(x: np.ndarray, walls, spacing: float, h: float) -> np.ndarray:
    """(n,6) B_i = Σ_w s_w f_w φ_w r̂ r̂ᵀ as (xx, yy, zz, xy, xz, yz): the no-slip term of the colliders.

    The lattice continued behind the walls (as in :func:`wall_terms`), each point
    weighted by its cell's share s_w inside the solid, enters the viscous operator
    as fluid at rest (``viscosity_weiler2018_kernels``). Fluid at rest just behind the
    surface would put the no-slip plane half a spacing inside the solid (measured:
    a wall-bounded shear wave decayed 11 % slowly); as in Morris et al. 1997, each
    point instead carries the velocity -(d_w/d_i) v_i that a profile vanishing at the
    surface extrapolates to, which scales its term by f_w = 1 + d_w/d_i (capped at
    ``NO_SLIP_CAP``), d_i the particle's distance to the surface and d_w the point's
    depth below it along the wall normal (the direction of Σ s_w φ_w r̂).
    """
    return no_slip_sums_of(x, walls, spacing, h, _wall_viscosity_weights(spacing, h)[1])


def no_slip_sums_of(x: np.ndarray, walls, spacing: float, h: float, weights: np.ndarray) -> np.ndarray:
    """(n,c) Σ_w s_w f_w weights[w] over the lattice points w of each particle continued behind ``walls``
    (s_w their cells' share inside the solid, f_w the no-slip factor of :func:`wall_viscosity_blocks`):
    a viscous term's no-slip share, given its weight per lattice offset (``weights`` (m,c), the offsets of
    ``numerics.lattice.offsets(spacing, h)``). Zero for particles farther than h + s/2 from every wall."""
    from .solid_share_kernels import no_slip_sums

    out = np.zeros((len(x), weights.shape[1]))
    if walls is None or not len(x):
        return out
    dist = walls.distance(x)
    near = np.flatnonzero(dist < h + 0.5 * spacing)
    if not len(near):
        return out
    off, _, towards = _wall_viscosity_weights(spacing, h)
    share = walls.solid_share(np.ascontiguousarray(x[near]), off, spacing)
    normal = _weighted(share, towards)
    length = np.linalg.norm(normal, axis=1)
    normal /= np.where(length > 0.0, length, 1.0)[:, None]
    d_i = np.maximum(dist[near], 0.25 * spacing)
    # out[near] = (share f) @ weights, f = clip(1 + depth / d_i, 1, NO_SLIP_CAP), depth = ô·off - d_i
    no_slip_sums(share, normal, np.ascontiguousarray(off), d_i, NO_SLIP_CAP, np.ascontiguousarray(weights),
                 near, out)
    return out


@functools.lru_cache(maxsize=8)
def _wall_viscosity_weights(spacing: float, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lattice offsets (m,3), the (m,6) weights φ ô_a ô_b, and φ ô (m,3), whose share-weighted sum
    points into the solid."""
    off = offsets(spacing, h)
    r = np.linalg.norm(off, axis=1)
    a, u = 1.0 - r / h, off / r[:, None]
    pairs = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
    return off, np.column_stack([a * u[:, p] * u[:, q] for p, q in pairs]), a[:, None] * u
