"""Classification and advection of whitewater particles over one step (Ihmsen et al. 2012, section 6).

A particle's type comes from its liquid neighbours within h (the count interpolated in time between the
two baked frames, plus those a wall hides): fewer than 6 spray, 6 to 20 foam, more than 20 bubble (the
paper's thresholds for about 30 neighbours in the full support; scaled by the support's volume for other
interaction radii). Then, over Δt:

- spray is ballistic: exact for constant gravity, x += v Δt + g Δt²/2, v += g Δt; with linear air drag k,
  the exact solution of dv/dt = g - k v;
- foam moves with the liquid: v = v_f, x += Δt v_f, and ages (only foam ages and dies);
- a bubble rises and is dragged towards the liquid: dv/dt = -k_b g + k_d (v_f - v), solved exactly over
  the step, so that it rises at v_f - k_b g / k_d whatever the step. The paper's k_d is a fraction of the
  velocity difference taken each step (v += k_d (v_f - v)), which makes the rise speed proportional to
  the step; here k_d is a rate (1/s).

v_f is the W̃-weighted velocity of the liquid, interpolated linearly in time between the frames. Every
particle is updated from its own values only, so the result does not depend on the thread count.
"""

from __future__ import annotations

import math

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from .boundaries import collide_point
from .liquid_field import sample_point

SPRAY, FOAM, BUBBLE = 0, 1, 2
# Paper thresholds: < 6 liquid neighbours spray, > 20 bubble, at about 30 neighbours in a full support
# (our default interaction radius, 2 spacings, holds 32 lattice sites).
SPRAY_BELOW = 6.0
BUBBLE_ABOVE = 20.0
FULL_NEIGHBOURS = 32.0


@njit(**config.NJIT)
def _blend(ax, ay, az, wa, bx, by, bz, wb, s):
    """(vx, vy, vz, wet): the liquid velocity, each frame's weighted mean (Σ W̃ v / Σ W̃) blended linearly
    in time; a frame with no liquid near the particle gives way to the other; not wet with none in both."""
    fa = 1.0 - s if wa > 0.0 else 0.0
    fb = s if wb > 0.0 else 0.0
    if fa + fb == 0.0:
        fa = 1.0 if wa > 0.0 else 0.0
        fb = 1.0 if wb > 0.0 else 0.0
    total = fa + fb
    if total == 0.0:
        return 0.0, 0.0, 0.0, False
    ca = fa / (total * wa) if fa > 0.0 else 0.0
    cb = fb / (total * wb) if fb > 0.0 else 0.0
    return ca * ax + cb * bx, ca * ay + cb * by, ca * az + cb * bz, True


@njit(**config.NJIT)
def _move(i, x, v, kind, age, fx, fy, fz, wet, dt, g, drag, buoyancy, bubble_drag):
    """Advance particle i over ``dt`` by its type (see the module docstring)."""
    if kind[i] == 0:
        if drag > 0.0:
            e = math.exp(-drag * dt)
            for a in range(3):
                vt = g[a] / drag
                x[i, a] += vt * dt + (v[i, a] - vt) * (1.0 - e) / drag
                v[i, a] = vt + (v[i, a] - vt) * e
        else:
            for a in range(3):
                x[i, a] += v[i, a] * dt + 0.5 * g[a] * dt * dt
                v[i, a] += g[a] * dt
    elif kind[i] == 1:
        # No liquid within h: the foam stops (it is spray then, unless a wall holds it).
        v[i, 0] = fx
        v[i, 1] = fy
        v[i, 2] = fz
        for a in range(3):
            x[i, a] += v[i, a] * dt
        age[i] += dt
    else:
        # dv/dt = -k_b g + k (v_f - v), solved exactly over the step: v relaxes to v_f - k_b g / k.
        target = (fx, fy, fz) if wet else (v[i, 0], v[i, 1], v[i, 2])
        e = math.exp(-bubble_drag * dt)
        for a in range(3):
            if bubble_drag > 0.0:
                vt = target[a] - buoyancy * g[a] / bubble_drag
                x[i, a] += vt * dt + (v[i, a] - vt) * (1.0 - e) / bubble_drag
                v[i, a] = vt + (v[i, a] - vt) * e
            else:
                x[i, a] += v[i, a] * dt - 0.5 * buoyancy * g[a] * dt * dt
                v[i, a] -= buoyancy * g[a] * dt


@njit(**config.NJIT_PARALLEL)
def substep(x, v, kind, age, alive, wall, field_a, field_b, h, s, move, dt, g, motion, walls):
    """Classify every live particle at time fraction ``s`` between the frames (its liquid neighbours,
    interpolated in time, plus ``wall``, the neighbours a wall hides); then, when ``move``, advance it over
    ``dt`` and enforce the domain and colliders (``boundaries.collide_point``), which refreshes ``wall`` and
    ``alive``.

    ``field_a``, ``field_b``: the two frames' :meth:`LiquidField.arrays`; ``motion``: (spray drag,
    bubble buoyancy, bubble drag, spray-below, bubble-above thresholds); ``walls``: the collider and domain
    arrays of :meth:`Boundaries.arrays`.
    """
    drag, buoyancy, bubble_drag, spray_below, bubble_above = motion
    codes, params, grid, rot, trans, lo, hi, hw, sites = walls
    ax_, av_, acell, astart, adense, asdims, amask, alo, ainv = field_a
    bx_, bv_, bcell, bstart, bdense, bsdims, bmask, blo, binv = field_b
    for i in prange(x.shape[0]):
        if not alive[i]:
            continue
        ca, ax, ay, az, wa = sample_point(x[i, 0], x[i, 1], x[i, 2], ax_, av_, acell, astart, adense, asdims,
                                          amask, alo, ainv, h)
        cb, bx, by, bz, wb = sample_point(x[i, 0], x[i, 1], x[i, 2], bx_, bv_, bcell, bstart, bdense, bsdims,
                                          bmask, blo, binv, h)
        n = (1.0 - s) * ca + s * cb + wall[i]
        if n < spray_below:
            kind[i] = 0
        elif n > bubble_above:
            kind[i] = 2
        else:
            kind[i] = 1
        if not move:
            continue
        fx, fy, fz, wet = _blend(ax, ay, az, wa, bx, by, bz, wb, s)
        _move(i, x, v, kind, age, fx, fy, fz, wet, dt, g, drag, buoyancy, bubble_drag)
        alive[i], wall[i] = collide_point(i, x, v, kind, codes, params, grid, rot, trans, lo, hi, hw, sites)
