"""Coulomb friction of ``elasticity_becker2009``'s collider contacts in its filtered solve (Baraff 1998).

The solve holds a solid particle that touches a static collider along the surface's normal
(``ElasticityBecker2009._held``; filtered conjugate gradients, Baraff & Witkin 1998 section 5.3). Coulomb's
law with the collider's ``friction`` μ acts on the same contacts, as an active set over the solve's rounds:

* stick: the particle's two tangential velocity components are held too, at the collider's (0: the
  contacts the solve holds are on static colliders). The residual of the solve at a held row is the
  impulse the wall gives along it, λ = (A Δv - b)·d for the row's direction d (A = M + Δt (Δt + τ) H,
  b the right side, both in kg m/s), so λ_n along the normal and the vector λ_t in the tangent plane;
* slip: a sticking contact whose tangential impulse leaves the cone, |λ_t| > μ λ_n, lets its tangential
  rows go and takes the kinetic friction impulse μ λ_n λ_t / |λ_t| on the right side (along the impulse
  that held it: against the way it slides), its size following λ_n from one round to the next;
* a contact the wall would have to pull (λ_n < 0) is let go with its friction (``ElasticityBecker2009.apply``).

Every substep starts with every contact sticking, so a sliding body that friction slows comes to rest in
the substep its contacts' impulses fit in the cone.

Why in the solve. Clavet's response in the contact pass (``colliders.contact.response._impulse``, thesis
eq. 6.3) removes the fraction μ of a touching particle's tangential velocity after the solve. The solve's
hold leaves a resting particle on the surface (gap 0 to the last bits), so the contact pass sees about half
of a body's bottom layer as touching, by rounding, and the next solve gives their velocity back from the
rest of the body: with that friction alone, a 6x5x3 block (E = 0.1 MPa) on a 30° plane slides 12 cm in
0.3 s at μ = 1 and accelerates at 2.98 m/s² at μ = 0.3 where Coulomb gives 2.36
(``tests/core/test_elastic_friction.py``). The contact pass takes no friction off the particles whose
friction the solve gave (``Walls.friction_given``).
"""

from __future__ import annotations

import numpy as np

# The sliding contacts' impulses have settled when a round changes their sum of sizes by less than this share.
SETTLED = 1e-2


def tangents(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors (k,3) each that make an orthonormal frame with the unit normals (k,3)."""
    # The axis least along the normal: its cross product with it is far from zero.
    axis = np.zeros_like(normal)
    axis[np.arange(len(normal)), np.argmin(np.abs(normal), axis=1)] = 1.0
    t1 = np.cross(normal, axis)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return t1, np.cross(normal, t1)


class Friction:
    """The solve's contacts that have friction: their rows, normals, μ, tangents, state and impulses.

    ``of``: each one's index into the solve's held rows (``hi``, ``hn``) of :meth:`ElasticityBecker2009.apply`;
    ``collider``: the index of its collider among ``StepContext.walls.placed``."""

    def __init__(self, of: np.ndarray, rows: np.ndarray, normal: np.ndarray, mu: np.ndarray, collider: np.ndarray):
        self.of, self.rows, self.normal, self.mu, self.collider = of, rows, normal, mu, collider
        self.first = (rows, collider)  # every contact the solve began with (``given``)
        self.t1, self.t2 = tangents(normal)
        self.stick = np.ones(len(rows), bool)
        self.direction = np.zeros((len(rows), 3))  # the sliding ones' friction's unit direction
        self.impulse = np.zeros((len(rows), 3))  # and its impulse, kg m/s

    def start(self, v: np.ndarray, quick: np.ndarray) -> None:
        """Contacts whose tangential velocity (the solve's rows' velocities ``v``, m/s) is above ``quick``
        (m/s, one a contact) start sliding, their friction against it, with no impulse until the first
        solve gives λ_n; the others stick."""
        u = v[self.rows] - np.einsum("ij,ij->i", v[self.rows], self.normal)[:, None] * self.normal
        speed = np.linalg.norm(u, axis=1)
        slide = speed > quick
        self.stick[slide] = False
        self.direction[slide] = -u[slide] / speed[slide, None]

    def hold(self, dv: np.ndarray, v: np.ndarray) -> None:
        """Put the sticking contacts' tangential components of ``dv`` at their targets, -v·t (the collider
        is still): the filtered solve keeps a held component as it finds it."""
        rows = self.rows[self.stick]
        for t in (self.t1[self.stick], self.t2[self.stick]):
            dv[rows] -= (np.einsum("ij,ij->i", dv[rows] + v[rows], t))[:, None] * t

    def held(self, hi: np.ndarray, hn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The solve's held rows and directions: the contacts' and clamps' (``hi``, ``hn``), then the
        sticking contacts' tangents."""
        s = self.stick
        return (np.concatenate([hi, self.rows[s], self.rows[s]]),
                np.concatenate([hn, self.t1[s], self.t2[s]]))

    def right_side(self, b: np.ndarray) -> np.ndarray:
        """``b`` with the sliding contacts' friction impulses added."""
        slide = ~self.stick
        if not slide.any():
            return b
        out = b.copy()
        np.add.at(out, self.rows[slide], self.impulse[slide])
        return out

    def update(self, residual: np.ndarray, u: np.ndarray) -> bool:
        """From the last solve's residual b - A Δv (the walls' impulses with their sign turned) and the
        velocities ``u`` it gives: sticking contacts outside the cone slide, sliding ones that the
        friction turned back stick, sliding ones take μ λ_n; whether the solve must run again (a contact
        began to slide, or the sliding ones' impulses changed by more than ``SETTLED``)."""
        r = residual[self.rows]
        lam_n = np.maximum(-np.einsum("ij,ij->i", r, self.normal), 0.0)
        lam_t = -(np.einsum("ij,ij->i", r, self.t1)[:, None] * self.t1
                  + np.einsum("ij,ij->i", r, self.t2)[:, None] * self.t2)
        size = np.linalg.norm(lam_t, axis=1)
        bound = self.mu * lam_n
        slips = self.stick & (size > bound)
        # A sliding contact the friction turned back (its velocity ``u`` now along the friction) sticks.
        stops = ~self.stick & (np.einsum("ij,ij->i", u[self.rows], self.direction) > 0.0)
        self.direction[slips] = lam_t[slips] / size[slips, None]
        self.stick[slips] = False
        self.stick[stops] = True
        before, self.impulse = self.impulse, np.where(self.stick[:, None], 0.0, bound[:, None] * self.direction)
        moved = float(np.abs(self.impulse - before).sum())
        return bool(slips.any() or stops.any()) or moved > SETTLED * float(np.abs(self.impulse).sum())

    def drop(self, gone: np.ndarray) -> None:
        """Let go of the contacts whose held row (an index into ``hi``) is ``gone`` (a mask over ``hi``), and
        renumber the others' ``of`` into the rows that stay."""
        keep = ~gone[self.of]
        after = np.cumsum(~gone) - 1
        self.of = after[self.of[keep]]
        for name in ("rows", "normal", "mu", "collider", "t1", "t2", "stick", "direction", "impulse"):
            setattr(self, name, getattr(self, name)[keep])

    def given(self, n: int, idx: np.ndarray) -> np.ndarray:
        """(n,) int64: for each world row (``idx`` maps the solve's rows to them), the collider whose
        friction the solve gave it, -1 for none: every contact it began with, those it let go included
        (a contact let go in one round may be pushed back into the wall by the next, and Clavet's friction
        in the contact pass on top of the solve's slows a block sliding down 30° at μ = 0.3 to 2.05 m/s²
        where Coulomb gives 2.36)."""
        out = np.full(n, -1, np.int64)
        rows, collider = self.first
        out[idx[rows]] = collider
        return out
