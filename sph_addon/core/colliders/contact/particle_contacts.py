"""The contact pass of a substep: the particles a scheme hands over against every collider, with what each
collider received reported (the input of a rigid body, Clavet Algorithm 7, stage 1).

Every collider resolves its contacts from the positions the models left (``response.collide``), so the
result does not depend on the colliders' order; a particle several colliders push takes every push, and
particles pushed into another collider are separated (``overlaps``).
"""

from __future__ import annotations

import numpy as np

from .clearance import put_rows
from .reports import report_squeezed


def collide_particles(walls, state, idx: np.ndarray | None, f0: float, f1: float, dt: float) -> None:
    """Contacts of the particles ``idx`` (None: all) of ``state`` with every collider of the substep's
    ``walls`` (``boundary.walls.Walls``) from frame ``f0`` to ``f1`` (fractional frames, ``dt`` s apart).

    The particles looked at are those the substep's clearance lets through (``walls.clearance``); what
    each collider received goes to ``walls.reports`` (``reports.ColliderReports``), a body's with the
    particles' masses (``walls.masses``).
    """
    from .response import collide

    colliders = [c for c, _, _ in walls.placed]
    reports = walls.reports
    radius = 0.5 * walls.spacing
    # The particles that can touch a collider (the others are left as they are: clearance.py).
    idx, x, x_prev = walls.clearance.rows(idx, state.x, state.arrays["x_prev"])
    dv = np.empty(x.shape)  # every row written by collide
    poses0 = [c.transform(f0) for c in colliders]
    poses1 = [c.transform(f1) for c in colliders]
    several = len(colliders) > 1
    # Every collider resolves its contacts from the positions the models left (response.collide):
    # the result does not depend on the colliders' order. One collider needs no copy.
    x0 = x.copy() if several else x
    if several:
        shift = np.zeros(x.shape)  # summed displacements of particles several colliders moved
        hits = np.zeros(len(x), np.int64)
    # The first collider that is not a body to move each particle (bodies.report_squeezed).
    wall = np.full(len(x), -1) if several and reports.bodies else None
    mass = walls.masses if idx is None or walls.masses is None else walls.masses[idx]
    bodies = []  # a body's reports wait for the particles squeezed between colliders to be known
    # The particles whose friction with a collider a term gave already (``Walls.friction_given``).
    given = walls.friction_given
    if given is not None and idx is not None:
        given = given[idx]
    none = np.zeros(0, np.uint8)
    for k, c in enumerate(colliders):
        (r0, t0), (r1, t1) = poses0[k], poses1[k]
        frictionless = none if given is None or c.friction == 0.0 else (given == k).view(np.uint8)
        collide(c.shape.code, c.shape.params, c.shape.grid, r0, t0, r1, t1, x, x0, x_prev, dt,
                radius, c.friction, frictionless, c.stickiness, c.stick_distance, c.continuous, dv)
        if several:
            moved = np.flatnonzero((dv[:, 0] != 0.0) | (dv[:, 1] != 0.0) | (dv[:, 2] != 0.0))
            shift[moved] += x[moved] - x0[moved]
            hits[moved] += 1
        if several and reports.bodies.body(k) is not None:
            bodies.append((k, moved, x[moved], dv[moved], t1))  # the rows it moved, not the world
        else:
            reports.add(k, x, dv, t1, mass)
            if wall is not None:
                wall[moved[wall[moved] < 0]] = k
    if several:
        # A particle in contact with several colliders takes every one's displacement (a corner
        # between a floor and a wall: up and away); x holds the last one's alone.
        both = np.flatnonzero(hits > 1)
        x[both] = x0[both] + shift[both]
        # Only particles a collider moved can have been pushed into another one (colliders/overlaps.py).
        touched = np.flatnonzero(hits)
        before = x[touched] if bodies else None
        if len(touched):
            from .overlaps import separate

            reports.overlaps += separate([c.shape for c in colliders], poses0, poses1, x, x_prev, touched,
                                         radius, dt, reports.add)
        if bodies:  # the particles squeezed between a body and another collider: bodies.report_squeezed
            free = mass.copy()
            free[both] = 0.0
            free[touched[np.any(x[touched] != before, axis=1)]] = 0.0
            report_squeezed(bodies, free, wall, poses1, reports.add)
    if idx is not None:
        put_rows(state.x, idx, x)
