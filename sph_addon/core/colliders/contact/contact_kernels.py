"""Sequential impulses between rigid bodies and colliders (``core/passes/bodies.py``): the sweeps in one kernel.

Catto 2005, "Iterative dynamics with temporal coherence": every contact's normal impulse is accumulated
and kept non-negative, its tangential one kept within the friction cone of the normal one, sweep after
sweep in the contacts' order (the order the bodies and their surface points come in: reproducible).
The targets are ``bodies.py``'s: speculative (a contact ``gap`` metres apart may close by ``gap`` in the
substep), an overlap pushed out at ``push_out`` of its depth a substep, a bounce of e times the
approach for a contact that would close within the substep faster than ``bounce_speed``.
"""

from __future__ import annotations

import numpy as np

from ...numerics import config
from ...numerics.kernel_cache import njit


@njit(**config.NJIT)
def _point_velocity(v, w, b, r, out):
    out[0] = v[b, 0] + w[b, 1] * r[2] - w[b, 2] * r[1]
    out[1] = v[b, 1] + w[b, 2] * r[0] - w[b, 0] * r[2]
    out[2] = v[b, 2] + w[b, 0] * r[1] - w[b, 1] * r[0]


@njit(**config.NJIT)
def _relative(c, ia, ib, ra, rb, other_v, v, w, out, tmp):
    _point_velocity(v, w, ia[c], ra[c], out)
    if ib[c] >= 0:
        _point_velocity(v, w, ib[c], rb[c], tmp)
    else:
        tmp[:] = other_v[c]
    for k in range(3):
        out[k] -= tmp[k]


@njit(**config.NJIT)
def _inverse_mass_along(b, r, d, inv_mass, inv_inertia):
    """1/m + d · ((I⁻¹ (r × d)) × r): the inverse mass body b shows at offset r along d."""
    cx = r[1] * d[2] - r[2] * d[1]
    cy = r[2] * d[0] - r[0] * d[2]
    cz = r[0] * d[1] - r[1] * d[0]
    ix = inv_inertia[b, 0, 0] * cx + inv_inertia[b, 0, 1] * cy + inv_inertia[b, 0, 2] * cz
    iy = inv_inertia[b, 1, 0] * cx + inv_inertia[b, 1, 1] * cy + inv_inertia[b, 1, 2] * cz
    iz = inv_inertia[b, 2, 0] * cx + inv_inertia[b, 2, 1] * cy + inv_inertia[b, 2, 2] * cz
    turn = d[0] * (iy * r[2] - iz * r[1]) + d[1] * (iz * r[0] - ix * r[2]) + d[2] * (ix * r[1] - iy * r[0])
    return inv_mass[b] + turn


@njit(**config.NJIT)
def _push(b, r, j, sign, inv_mass, inv_inertia, v, w, mom):
    """Impulse sign * j at offset r on body b: its velocity, angular momentum and angular velocity."""
    tx = sign * (r[1] * j[2] - r[2] * j[1])
    ty = sign * (r[2] * j[0] - r[0] * j[2])
    tz = sign * (r[0] * j[1] - r[1] * j[0])
    for k in range(3):
        v[b, k] += sign * j[k] * inv_mass[b]
    mom[b, 0] += tx
    mom[b, 1] += ty
    mom[b, 2] += tz
    for k in range(3):
        w[b, k] += inv_inertia[b, k, 0] * tx + inv_inertia[b, k, 1] * ty + inv_inertia[b, k, 2] * tz


@njit(**config.NJIT)
def _apply(c, ia, ib, ra, rb, j, inv_mass, inv_inertia, v, w, mom):
    _push(ia[c], ra[c], j, 1.0, inv_mass, inv_inertia, v, w, mom)
    if ib[c] >= 0:
        _push(ib[c], rb[c], j, -1.0, inv_mass, inv_inertia, v, w, mom)


@njit(**config.NJIT)
def _mass_along(c, ia, ib, ra, rb, d, inv_mass, inv_inertia):
    k = _inverse_mass_along(ia[c], ra[c], d, inv_mass, inv_inertia)
    if ib[c] >= 0:
        k += _inverse_mass_along(ib[c], rb[c], d, inv_mass, inv_inertia)
    return k


@njit(**config.NJIT)
def solve_contacts(ia, ib, ra, rb, normal, gap, other_v, mu, e, inv_mass, inv_inertia, v, w, mom, dt, push_out,
                   bounce_speed, iterations, impulses):
    """Resolve the contacts (c of them) between bodies ``ia`` and bodies ``ib`` (-1: a collider the fluid
    does not move, whose material point moves at ``other_v``), mutating the bodies' v, ω and angular
    momentum (``mom``); offsets ``ra``, ``rb`` from the centres of mass, ``normal`` out of the other.
    ``impulses`` (c,3) is overwritten with each contact's accumulated impulse on body ``ia``, kg m/s
    (body ``ib`` took the opposite): what a collider that is not a body gave the bodies."""
    n = ia.shape[0]
    lam = np.zeros(n)
    tangent_lam = np.zeros((n, 3))
    approach = np.empty(n)
    rel, tmp, j, t = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for c in range(n):
        _relative(c, ia, ib, ra, rb, other_v, v, w, rel, tmp)
        approach[c] = rel[0] * normal[c, 0] + rel[1] * normal[c, 1] + rel[2] * normal[c, 2]
    for _ in range(iterations):
        for c in range(n):
            nc = normal[c]
            _relative(c, ia, ib, ra, rb, other_v, v, w, rel, tmp)
            vn = rel[0] * nc[0] + rel[1] * nc[1] + rel[2] * nc[2]
            target = -gap[c] / dt if gap[c] >= 0.0 else -push_out * gap[c] / dt
            if e[c] > 0.0 and approach[c] < -bounce_speed and gap[c] + approach[c] * dt < 0.0:
                target = max(target, -e[c] * approach[c])
            d_lam = (target - vn) / _mass_along(c, ia, ib, ra, rb, nc, inv_mass, inv_inertia)
            total = max(lam[c] + d_lam, 0.0)
            d_lam = total - lam[c]
            lam[c] = total
            if d_lam != 0.0:
                for k in range(3):
                    j[k] = d_lam * nc[k]
                _apply(c, ia, ib, ra, rb, j, inv_mass, inv_inertia, v, w, mom)
            if mu[c] <= 0.0 or lam[c] <= 0.0:
                continue
            _relative(c, ia, ib, ra, rb, other_v, v, w, rel, tmp)
            vn = rel[0] * nc[0] + rel[1] * nc[1] + rel[2] * nc[2]
            for k in range(3):
                t[k] = rel[k] - vn * nc[k]
            speed = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
            if speed == 0.0:
                continue
            for k in range(3):
                t[k] /= speed
            step = speed / _mass_along(c, ia, ib, ra, rb, t, inv_mass, inv_inertia)
            want0 = tangent_lam[c, 0] - step * t[0]
            want1 = tangent_lam[c, 1] - step * t[1]
            want2 = tangent_lam[c, 2] - step * t[2]
            size = np.sqrt(want0 * want0 + want1 * want1 + want2 * want2)
            limit = mu[c] * lam[c]
            if size > limit:
                want0 *= limit / size
                want1 *= limit / size
                want2 *= limit / size
            j[0] = want0 - tangent_lam[c, 0]
            j[1] = want1 - tangent_lam[c, 1]
            j[2] = want2 - tangent_lam[c, 2]
            tangent_lam[c, 0], tangent_lam[c, 1], tangent_lam[c, 2] = want0, want1, want2
            _apply(c, ia, ib, ra, rb, j, inv_mass, inv_inertia, v, w, mom)
    for c in range(n):
        for k in range(3):
            impulses[c, k] = lam[c] * normal[c, k] + tangent_lam[c, k]
