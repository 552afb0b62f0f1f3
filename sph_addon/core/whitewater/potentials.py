"""The emission potentials of the liquid particles (Ihmsen, Akinci, Gissler & Teschner 2012, section 4).

Per liquid particle i, over its liquid neighbours j within the interaction radius h, with the radially
symmetric weight W̃(r) = 1 - r/h (r <= h):

- trapped air (eq. 2): I_ta = Σ_j |v_ij| (1 - v̂_ij · x̂_ij) W̃(r_ij), v_ij = v_i - v_j, x_ij = x_i - x_j
  (large where particles move towards each other: air pulled under);
- wave crest (eqs. 4-7): κ̃_i = Σ_j (1 - n̂_i · n̂_j) W̃(r_ij) over the neighbours behind i's surface
  (x̂_ji · n̂_i < 0), kept only where i moves along its normal (v̂_i · n̂_i >= 0.6); n̂ is the unit
  gradient of the weights (outward: away from the neighbours), on surface particles only (where the
  weights are one-sided; inside, the gradient of a disordered liquid points anywhere and the paper's sum
  would make every interior pair a crest): a pair without a normal adds nothing;
- kinetic energy: ½ |v_i|², per unit mass. The paper's E_k = ½ m |v|² changes with the particle mass,
  i.e. with the resolution; per kilogram a flow emits the same at every spacing.

The neighbour lists are the simulation's (``world.neighbors.NeighborSearch``): cells of h, counting
sort, fixed rows; each particle sums its own row in list order, so the result does not depend on the
thread count.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..world.neighbors import NeighborSearch

# Paper: wave crests count only where the particle moves along its normal, v̂·n̂ >= 0.6 (eq. 6).
CREST_ALIGNMENT = 0.6
# A particle is on the surface (has a normal) when its weights are this one-sided: |Σ W̃ x̂_ij| / Σ W̃ is
# about 0.5 on a flat surface and a few hundredths inside a disordered liquid, whose normalised gradient
# would be a random direction (and every interior pair a crest).
ONE_SIDED = 0.2


@njit(**config.NJIT_PARALLEL)
def _normals(x, nbr, count, h, one_sided, normal):
    """Unit outward normals n̂_i = Σ_j W̃ x̂_ij / |Σ_j W̃ x̂_ij| of the surface particles, those whose weights
    are one-sided: |Σ_j W̃ x̂_ij| >= ``one_sided`` Σ_j W̃; zero for the others."""
    for i in prange(x.shape[0]):
        sx = 0.0
        sy = 0.0
        sz = 0.0
        total = 0.0
        for k in range(min(count[i], nbr.shape[1])):
            j = nbr[i, k]
            dx = x[i, 0] - x[j, 0]
            dy = x[i, 1] - x[j, 1]
            dz = x[i, 2] - x[j, 2]
            r = math.sqrt(dx * dx + dy * dy + dz * dz)
            if r <= 0.0 or r >= h:
                continue
            w = (1.0 - r / h) / r
            total += 1.0 - r / h
            sx += w * dx
            sy += w * dy
            sz += w * dz
        norm = math.sqrt(sx * sx + sy * sy + sz * sz)
        if norm > 0.0 and norm >= one_sided * total:
            normal[i, 0] = sx / norm
            normal[i, 1] = sy / norm
            normal[i, 2] = sz / norm
        else:
            normal[i, 0] = 0.0
            normal[i, 1] = 0.0
            normal[i, 2] = 0.0


@njit(**config.NJIT_PARALLEL)
def _potentials(x, v, normal, nbr, count, h, alignment, ke_min, out):
    """Trapped air (eq. 2), wave crest (eqs. 4-7), ½|v|² and the neighbour count into ``out`` (n, 4); only
    ½|v|² for a particle with ½|v|² <= ``ke_min``."""
    for i in prange(x.shape[0]):
        ta = 0.0
        wc = 0.0
        n_in = 0
        speed = math.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
        out[i, 2] = 0.5 * speed * speed
        if out[i, 2] <= ke_min:
            out[i, 0] = 0.0
            out[i, 1] = 0.0
            out[i, 3] = 0.0
            continue
        along = 0.0
        if speed > 0.0:
            along = (v[i, 0] * normal[i, 0] + v[i, 1] * normal[i, 1] + v[i, 2] * normal[i, 2]) / speed
        for k in range(min(count[i], nbr.shape[1])):
            j = nbr[i, k]
            dx = x[i, 0] - x[j, 0]
            dy = x[i, 1] - x[j, 1]
            dz = x[i, 2] - x[j, 2]
            r = math.sqrt(dx * dx + dy * dy + dz * dz)
            if r >= h:
                continue
            n_in += 1
            if r <= 0.0:
                continue
            w = 1.0 - r / h
            ux = v[i, 0] - v[j, 0]
            uy = v[i, 1] - v[j, 1]
            uz = v[i, 2] - v[j, 2]
            u = math.sqrt(ux * ux + uy * uy + uz * uz)
            if u > 0.0:
                ta += u * (1.0 - (ux * dx + uy * dy + uz * dz) / (u * r)) * w
            # x̂_ji · n̂_i < 0: j lies behind i's surface (eq. 5); both on the surface (see ONE_SIDED).
            nj = normal[j, 0] * normal[j, 0] + normal[j, 1] * normal[j, 1] + normal[j, 2] * normal[j, 2]
            if nj > 0.0 and -(dx * normal[i, 0] + dy * normal[i, 1] + dz * normal[i, 2]) < 0.0:
                wc += (1.0 - (normal[i, 0] * normal[j, 0] + normal[i, 1] * normal[j, 1]
                              + normal[i, 2] * normal[j, 2])) * w
        out[i, 0] = ta
        out[i, 1] = wc if along >= alignment else 0.0
        out[i, 3] = n_in


def potentials(x: np.ndarray, v: np.ndarray, h: float, ke_min: float = -math.inf, field=None) -> np.ndarray:
    """The potentials of liquid particles, in their given order.

    Parameters
    ----------
    x, v : (n, 3) float64 positions (m) and velocities (m/s) of the liquid particles.
    h : interaction radius, m.
    ke_min : a particle whose kinetic energy per unit mass is at most this emits nothing (Φ_k = 0): only
        that energy is computed for it (its other columns are 0). No particle faster: no neighbour search.
    field : a ``liquid_field.LiquidField`` of these particles, whose sort is reused; None sorts them here.

    Returns
    -------
    (n, 4) float64: trapped air (m/s, eq. 2), wave crest (eqs. 4-7), kinetic energy per unit mass
    (J/kg) and the number of liquid neighbours within h.
    """
    n = len(x)
    out = np.zeros((n, 4))
    out[:, 2] = 0.5 * (v * v).sum(axis=1)
    if n == 0 or not (out[:, 2] > ke_min).any():
        return out
    if field is None:
        ns = NeighborSearch(h)
        order = ns.sort(np.ascontiguousarray(x, np.float64))
        xs = np.ascontiguousarray(x[order], np.float64)
        vs = np.ascontiguousarray(v[order], np.float64)
    else:
        ns, order, xs, vs = field.ns, field.order, field.x, field.v
    nbr, count = ns.lists(xs, h)
    normal = np.zeros((n, 3))
    _normals(xs, nbr, count, h, ONE_SIDED, normal)
    sorted_out = np.zeros((n, 4))
    _potentials(xs, vs, normal, nbr, count, h, CREST_ALIGNMENT, ke_min, sorted_out)
    out[order] = sorted_out
    return out


def clamp_normalise(values: np.ndarray, tau_min: float, tau_max: float) -> np.ndarray:
    """Φ(I, τ_min, τ_max) = (min(I, τ_max) - min(I, τ_min)) / (τ_max - τ_min) (Ihmsen 2012, section 5), in [0, 1]."""
    if not tau_max > tau_min:
        return np.zeros_like(values)
    return (np.minimum(values, tau_max) - np.minimum(values, tau_min)) / (tau_max - tau_min)
