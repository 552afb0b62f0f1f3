"""What each collider and body received from the particles: the one place it is collected, over a frame.

Three things give the colliders something: the contact pass (``particle_contacts``: a particle pushed out
of a collider gives it the opposite impulse), the push-outs of particles caught between two colliders
(``overlaps``), and the terms' boundaries, which record what they gave the particles at the walls in the
substep's ``Walls`` (``Walls.received``). All of it reaches :meth:`ColliderReports.add`: a collider's
:class:`~.response.ContactReport` (impulse and torque about its origin, summed over the frame), and a
dynamic body its impulse in kg m/s (``passes.bodies.Bodies.receive``), which it integrates at the next
substep (Clavet 2005, Algorithm 7, stage 1).
"""

from __future__ import annotations

import numpy as np

from .response import ContactReport, impulse_and_torque


class ColliderReports:
    """The frame's contact reports of ``colliders`` (``Collider``, in the scene's order), and the impulses
    of the dynamic ones among them (``bodies``: a ``passes.bodies.Bodies``)."""

    def __init__(self, colliders: list, bodies):
        self.colliders = colliders
        self.bodies = bodies
        self.contacts: list[ContactReport] = []
        self.overlaps = 0  # particles left inside a collider this frame (``overlaps.separate``)
        self.reset()

    def reset(self) -> None:
        """A new frame: every report at zero, and the bodies' record of their contacts with the colliders."""
        zero = np.zeros(3)
        self.contacts = [ContactReport(c.name, zero, zero, zero) for c in self.colliders]
        self.bodies.reset_contact_impulse()

    def add(self, k: int, x: np.ndarray, dv: np.ndarray, center: np.ndarray, mass: np.ndarray | None = None) -> None:
        """Add to collider k's report the reaction to velocity changes ``dv`` of particles at ``x``, and give a
        body its impulse with the particles' masses ``mass`` (kg; None: a push out of an overlap of
        colliders, ``overlaps.separate``, which a body does not take)."""
        if mass is not None and self.bodies.body(k) is not None:
            self.bodies.receive(k, x, dv, mass)
        impulse, torque = impulse_and_torque(x, dv, center)
        self.contacts[k] = self.contacts[k].plus(impulse, torque, center)

    def add_given(self, walls) -> None:
        """What the terms' boundaries gave the particles at the walls this substep (``Walls.given``), each
        collider the reaction to its share, about its origin at the substep's end."""
        for (k, x, dv), m in zip(walls.given, walls.given_mass):
            self.add(k, x, dv, walls.placed[k][2], m)


def report_squeezed(reports: list, free: np.ndarray, wall: np.ndarray, poses: list, add_contact) -> None:
    """Give each body what the particles it moved got from it, but not the push of the particles squeezed
    between it and another collider (two moved them, or they had to be pushed out of an overlap): those
    push the body through that collider's contact, not by their own push-out, which grows as 1/Δt² (it
    threw a heavy box landing in water back up at 10 m/s). The wall such a particle was pressed against
    takes what the body gave it instead, so the momentum of particles, bodies and walls is kept.

    Parameters
    ----------
    reports : (collider k, rows, x (r,3), dv (r,3), centre) of each body, the rows it moved.
    free : (n,) kg, each particle's mass, 0 for the squeezed ones. wall : (n,) the first collider that is
        not a body to move each particle, -1 for none. poses : each collider's (R, t) at the substep's end.
    add_contact : :meth:`ColliderReports.add`.
    """
    for k, rows, x, dv, centre in reports:
        add_contact(k, x, dv, centre, free[rows])
        pressed = (free[rows] == 0.0) & (wall[rows] >= 0)
        for w in np.unique(wall[rows][pressed]):
            on = pressed & (wall[rows] == w)
            add_contact(int(w), x[on], dv[on], poses[w][1])
