"""Contacts against several colliders at once: no collider may push a particle into another.

``response.collide`` resolves one collider at a time (Clavet 2005, thesis
Algorithm 7, lines 12-15, loops over the objects the same way), every collider
from the same positions, and a particle several colliders moved takes the sum
of their displacements (``Simulation._collide``): no result depends on the
colliders' order. Each push-out moves a particle along *that* collider's
normal, which may lead into another collider: a paddle whose side face lies
against a tank's wall pushes the water caught beside it out through the wall,
and the wall pushes it back into the paddle. The thesis does not treat several
objects in contact.

:func:`separate` runs after the per-collider pass, on the particles that pass
moved (only they can have been pushed into another collider):

1. up to :data:`ROUNDS` rounds of projection: a particle whose centre lies
   inside a solid (d < 0) is pushed out of the one it is deepest in, to the
   contact distance, as ``response`` does (out of each, from the same point,
   on a tie). Alternating projections converge where the colliders leave room
   (a floor and a box standing on it), and the deepest solid decides the order,
   not the colliders' list;
2. a particle still inside a solid after that is caught between colliders
   closing on it, and no projection can free it (the two normals oppose each
   other). It is put back on the side it came from: its position at the start
   of the step, carried by the rigid motion of one of the colliders (a particle
   swept by a paddle moves on with the paddle), whichever candidate lies
   farthest outside every solid; that collider receives the reaction. A
   particle that is inside a solid even there
   (two colliders interpenetrating around it) is counted, and the count is
   reported in the frame statistics (``collider_overlaps``).

The test is the centre (d < 0), not the contact zone (d < particle radius): two
colliders closer together than a particle diameter leave a gap no particle fits
in, and a particle there must stay in the gap, not be squeezed through either.

Every displacement is reported to the collider that made it (its velocity
change Δx/Δt, added to its contact report), so the impulses stay the sum of
what each collider gave.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...numerics import config
from ...numerics.kernel_cache import njit, prange
from ..shapes.sdf_dispatch import sdf_eval
from .response import _push_out, _to_local, crossed, placed_distances

# push_out_of_solid is disk-cached with _push_out, _to_local, crossed and sdf_eval compiled into it, and numba
# re-validates it only against this file: after editing those (or an SDF), touch this file.

# Projection rounds before a particle counts as caught; each pushes a particle out of one solid.
# Where colliders leave room (a box tilted on a floor) projections converge within a few; on the
# paddle sweeping a tank (tests/core/test_collider_overlaps.py) no particle that the first rounds
# did not free was freed by later ones (474 caught with 1, 3 or 6 rounds of a push by every
# collider): they alternate between two opposing faces.
ROUNDS = 6


@njit(**config.NJIT_PARALLEL)
def push_out_of_solid(code, params, grid, r0, t0, r1, t1, x, x_prev, radius, inv_dt, dv):
    """Push the particles whose centre is inside the collider's solid out to the contact distance.

    The push of ``response.collide`` (Clavet 2005, thesis Algorithm 7, line 15),
    without its impulse: only positions are corrected. Its continuous test too
    (``response.crossed``): a particle that came from the collider's other side
    is put back where its path entered, so a push never carries it on through a
    moving collider (out of a paddle's back face, behind the paddle).

    Parameters
    ----------
    code, params, grid : the collider's field (``Shape.code``, see ``sdf_dispatch.sdf_eval``).
    r0, t0 : (3,3), (3,) float64 rotation (local -> world) and translation at the start of the step, m.
    r1, t1 : the same at the end of the step.
    x : (k,3) float64 positions, m; mutated.
    x_prev : (k,3) float64 their positions at the start of the step, m.
    radius : particle radius, m. inv_dt : 1 / step, 1/s.
    dv : (k,3) float64, overwritten: each particle's velocity change, m/s (0 if not pushed).
    """
    # As in response.collide: |grad d| bound, and a step that cannot skip the contact zone.
    lipschitz = 2.0
    min_step = 0.25 * radius
    for i in prange(x.shape[0]):
        dv[i, 0] = 0.0
        dv[i, 1] = 0.0
        dv[i, 2] = 0.0
        px, py, pz = _to_local(r1, t1, x[i, 0], x[i, 1], x[i, 2])
        d, lx, ly, lz = sdf_eval(code, params, grid, px, py, pz)
        if d >= 0.0:
            continue
        ox = x[i, 0]
        oy = x[i, 1]
        oz = x[i, 2]
        qx, qy, qz = _to_local(r0, t0, x_prev[i, 0], x_prev[i, 1], x_prev[i, 2])
        disp = math.sqrt((px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2)
        s = crossed(code, params, grid, qx, qy, qz, px, py, pz, d, lx, ly, lz, disp, radius, lipschitz, min_step)
        if s >= 0.0:
            ex = qx + s * (px - qx)
            ey = qy + s * (py - qy)
            ez = qz + s * (pz - qz)
            x[i, 0] = r1[0, 0] * ex + r1[0, 1] * ey + r1[0, 2] * ez + t1[0]
            x[i, 1] = r1[1, 0] * ex + r1[1, 1] * ey + r1[1, 2] * ez + t1[1]
            x[i, 2] = r1[2, 0] * ex + r1[2, 1] * ey + r1[2, 2] * ez + t1[2]
        # As in collide: in a concave edge or corner each push may meet a new nearest face.
        for _ in range(3):
            _push_out(code, params, grid, r1, t1, x, i, radius)
        dv[i, 0] = (x[i, 0] - ox) * inv_dt
        dv[i, 1] = (x[i, 1] - oy) * inv_dt
        dv[i, 2] = (x[i, 2] - oz) * inv_dt


Pose = tuple[np.ndarray, np.ndarray]
# report(k, x, dv, center): add to collider k's contact report the reaction to velocity
# changes dv (m/s) of particles at x, torque about center (Simulation._add_contact).
Report = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]


def _depths(shapes, poses1: Sequence[Pose], points: np.ndarray) -> np.ndarray:
    """(colliders, k) signed distance (m) of world points to each collider at the end of the step."""
    out = np.empty((len(shapes), len(points)))
    for k, (shape, (r1, t1)) in enumerate(zip(shapes, poses1)):
        placed_distances(shape.code, shape.params, shape.grid, np.ascontiguousarray(r1, np.float64),
                         np.ascontiguousarray(t1, np.float64), np.ascontiguousarray(points, np.float64), out[k])
    return out


def separate(shapes, poses0: Sequence[Pose], poses1: Sequence[Pose], x: np.ndarray, x_prev: np.ndarray,
             idx: np.ndarray, radius: float, dt: float, report: Report) -> int:
    """Free particles ``idx`` that one collider pushed into another (module docstring).

    Parameters
    ----------
    shapes : each collider's ``Shape``.
    poses0, poses1 : each collider's (R local -> world, t) at the start and end of the step.
    x : (n,3) float64 positions after the per-collider pass, m; mutated.
    x_prev : (n,3) float64 positions at the start of the step, m.
    idx : (k,) int64 particles the per-collider pass moved.
    radius : particle radius, m. dt : step, s.
    report : receives every collider's share of the displacements.

    Returns
    -------
    int
        Particles left with their centre inside a solid (caught between interpenetrating colliders).
    """
    inv_dt = 1.0 / dt
    active = np.ascontiguousarray(idx, np.int64)
    for _ in range(ROUNDS):
        y = x[active]
        depth = _depths(shapes, poses1, y)
        deepest = depth.min(axis=0)
        inside = deepest < 0.0
        if not inside.any():
            return 0
        shift = np.zeros(y.shape)
        for k, (shape, (r0, t0), (r1, t1)) in enumerate(zip(shapes, poses0, poses1)):
            # Out of the solid it is deepest in (of each of them on a tie, from the same point): which
            # collider pushes depends on where the particle is, never on the colliders' order.
            rows = np.flatnonzero(inside & (depth[k] == deepest))
            if not len(rows):
                continue
            pushed = y[rows]
            dv = np.empty((len(rows), 3))
            push_out_of_solid(shape.code, shape.params, shape.grid, r0, t0, r1, t1, pushed, x_prev[active[rows]],
                              radius, inv_dt, dv)
            report(k, pushed, dv, t1)
            shift[rows] += pushed - y[rows]
        active = active[inside]
        x[active] = y[inside] + shift[inside]
    inside = _depths(shapes, poses1, x[active]).min(axis=0) < 0.0
    caught = active[inside]
    if not len(caught):
        return 0
    return _put_back(shapes, poses0, poses1, x, x_prev, caught, inv_dt, report)


def _put_back(shapes, poses0, poses1, x, x_prev, caught, inv_dt, report) -> int:
    """Move caught particles to their start position carried by one collider; return those still inside.

    The collider whose motion carries a particle receives the reaction to the whole move.
    """
    here = x[caught]
    best, best_clear = here.copy(), _depths(shapes, poses1, here).min(axis=0)
    carrier = np.full(len(caught), -1)
    start = x_prev[caught]
    for k, ((r0, t0), (r1, t1)) in enumerate(zip(poses0, poses1)):
        carried = np.einsum("ij,jk,lk->il", start - t0, r0, r1) + t1  # R1 R0^T (x - t0) + t1, no BLAS
        clear = _depths(shapes, poses1, carried).min(axis=0)
        better = clear > best_clear
        best[better], best_clear[better], carrier[better] = carried[better], clear[better], k
    dv = (best - here) * inv_dt
    x[caught] = best
    for k in np.unique(carrier[carrier >= 0]):
        mine = carrier == k
        report(int(k), best[mine], dv[mine], poses1[k][1])
    return int(np.count_nonzero(best_clear < 0.0))
