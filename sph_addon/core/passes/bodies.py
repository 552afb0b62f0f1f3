"""The colliders the fluid moves: their substep, what the particles give them, their contacts.

Clavet 2005, thesis Algorithm 7, as ``colliders/rigid_body.py`` describes it. Every substep,
``Simulation.step`` calls :meth:`Bodies.advance` before the particles move: each body takes the
impulse and torque the particles gave it over the previous substep (:attr:`Bodies.pending`) and
the substep's gravity, then its contacts with the other colliders are resolved; the particles
then meet the body moving at those fixed velocities (the colliders' response and the density
relaxation's walls), what they receive goes back through :meth:`Bodies.receive` (with each
particle's mass: ``Simulation._add_contact``), and :meth:`Bodies.commit` moves the bodies to the
substep's end.

Contacts between a body and another collider (static, keyframed or another body): points on the
body's surface (``rigid_body.surface_samples``) within reach of the other's surface over the
substep are contacts, solved by sequential impulses (Catto 2005, "Iterative dynamics with temporal
coherence"): each contact's normal impulse is accumulated and kept non-negative, its tangential one
bounded by the friction cone. The normal target is speculative: a contact d metres apart may close
by at most d in the substep, so no body passes through another at the fluid's substep sizes (no
tunnelling), and an overlap is pushed out at a fraction ``PUSH_OUT`` of its depth a substep. The
bounce (restitution e) applies to a contact that would close within the substep at more than
``BOUNCE_SPEED`` and twice what gravity adds in a substep: below that a body lying on the floor comes
to rest instead of jittering. What the colliders that are not bodies gave the bodies through these
contacts is kept per collider (:attr:`Bodies.contact_impulse`), the counterpart of the particles'
contact reports: with it the momentum of particles and bodies is accounted for in a closed tank.
"""

from __future__ import annotations

import numpy as np

from ..colliders.rigid_body import RigidBodyMotion, distances, matrix_quaternion, normals, surface_samples
from .base import PassSetup, WorldPass

ITERATIONS = 12  # sequential-impulse sweeps over a substep's contacts
PUSH_OUT = 0.2  # fraction of an overlap removed per substep (Baumgarte's β)
BOUNCE_SPEED = 0.2  # m/s: slower approaches do not bounce


class Body:
    """One dynamic collider: its index among the colliders, motion, contact points and material.

    Attributes
    ----------
    k : the collider's index. motion : its ``RigidBodyMotion``. samples : (s,3) local surface points, m.
    friction : Coulomb's μ against other colliders. bounciness : restitution e in [0, 1].
    impulse, torque : what the particles gave it over the substep so far, kg m/s and kg m²/s about
        its centre of mass at the substep's end.
    work : the work it did on the particles since :meth:`Bodies.reset_contact_impulse`, J: each
        particle's momentum change times the body's velocity where it met it, in the substep it did.
    """

    def __init__(self, k: int, motion: RigidBodyMotion, samples: np.ndarray, friction: float, bounciness: float):
        self.k, self.motion, self.samples = k, motion, samples
        self.friction, self.bounciness = float(friction), float(bounciness)
        self.impulse, self.torque = np.zeros(3), np.zeros(3)
        self.work = 0.0


class Bodies(WorldPass):
    """The dynamic colliders of one simulation (module docstring).

    Parameters
    ----------
    colliders : every collider (``colliders.Collider``); those whose motion is a ``RigidBodyMotion``
        are bodies. settings : per collider, its resolved scene fields (``body_friction``,
        ``restitution``). spacing : particle spacing, m (the contact points' step and reach).

    Attributes
    ----------
    contact_impulse : (colliders, 3) kg m/s, the impulse each collider that is not a body gave the
        bodies through their contacts since :meth:`reset_contact_impulse` (``Simulation`` resets it with
        its contact reports, every frame); zero for the bodies' own rows (their contacts with each
        other give and take the same).
    """

    name = "bodies"
    checkpointed = True

    @classmethod
    def build(cls, setup: PassSetup) -> Bodies:
        return cls(setup.colliders, [p for _, p in setup.scene.colliders], setup.scene.particle_spacing)

    def __init__(self, colliders: list, settings: list[dict], spacing: float):
        self.colliders = colliders
        self.spacing = spacing
        self.bodies = [Body(k, c.motion, surface_samples(c.shape, 0.5 * spacing), p["body_friction"],
                            p["restitution"])
                       for k, (c, p) in enumerate(zip(colliders, settings)) if isinstance(c.motion, RigidBodyMotion)]
        self._by_collider = {b.k: b for b in self.bodies}
        self._end = 0.0  # the frame the current substep ends at
        self.contact_impulse = np.zeros((len(colliders), 3))
        self._bounce_speed = BOUNCE_SPEED

    def __bool__(self) -> bool:
        return bool(self.bodies)

    @property
    def active(self) -> bool:  # none without a dynamic collider
        return bool(self.bodies)

    def reset_contact_impulse(self) -> None:
        """Start :attr:`contact_impulse` and the bodies' :attr:`Body.work` over (a new frame)."""
        self.contact_impulse = np.zeros((len(self.colliders), 3))
        for b in self.bodies:
            b.work = 0.0

    def work_given(self) -> dict[int, float]:
        """Collider index -> the work its body did on the particles this frame, J (``Body.work``)."""
        return {b.k: b.work for b in self.bodies}

    def body(self, k: int) -> Body | None:
        """The body of collider ``k``, or None when that collider is not dynamic."""
        return self._by_collider.get(k)

    # -- the substep -----------------------------------------------------------------------
    def begin(self, frame0: float, frame1: float, dt: float, gravity: np.ndarray) -> None:
        """The bodies before the schemes: :meth:`advance`."""
        self.advance(frame0, frame1, dt, gravity)

    def advance(self, frame0: float, frame1: float, dt: float, gravity: np.ndarray) -> None:
        """Stages 1-3 of Algorithm 7 for the substep from ``frame0`` to ``frame1`` (``dt`` s)."""
        self._end = frame1
        # A body lying on the floor approaches it at g Δt every substep: that must not bounce.
        self._bounce_speed = max(BOUNCE_SPEED, 2.0 * float(np.linalg.norm(gravity)) * dt)
        for b in self.bodies:
            if b.motion.scripted:  # a keyframed collider until its release: what it was given is dropped
                b.motion.follow(frame0, frame1)
            else:
                b.motion.kick(b.impulse, b.torque, gravity, dt)
            b.impulse, b.torque = np.zeros(3), np.zeros(3)
        if self.bodies:
            self._resolve_contacts(frame0, frame1, dt)

    def receive(self, k: int, x: np.ndarray, dv: np.ndarray, mass: np.ndarray) -> None:
        """Add to body ``k`` the reaction to the velocity changes ``dv`` (n,3, m/s) the particles at ``x``
        (n,3, m) of masses ``mass`` (n,) kg got from it: -Σ m dv, and its moment about the centre of
        mass at the substep's end."""
        b = self._by_collider[k]
        # The few rows a body moved, not the whole world's (their temporaries cost more than the rest).
        rows = np.flatnonzero((dv[:, 0] != 0.0) | (dv[:, 1] != 0.0) | (dv[:, 2] != 0.0))
        x, dv, mass = x[rows], dv[rows], mass[rows]
        p = -mass[:, None] * dv
        com = b.motion.pose(self._end)[2]
        b.impulse = b.impulse + p.sum(axis=0)
        b.torque = b.torque + np.cross(x - com, p).sum(axis=0)
        # The energy the body gives a particle it pushes at its own velocity V there: m dv·V, to first order
        # in what the body loses (the energy watch's supply, ``blowup.collider_work``); an inelastic push
        # gives the particle less, the rest is dissipated.
        met = b.motion.v + np.cross(b.motion.omega, x - com)
        b.work -= float(np.einsum("ij,ij->", p, met))

    def end(self) -> None:
        """The bodies after the colliders' reports: :meth:`commit`."""
        self.commit()

    def commit(self) -> None:
        """Stage 4's end: every body at the substep's end."""
        for b in self.bodies:
            b.motion.commit(self._end)

    # -- contacts ----------------------------------------------------------------------------
    def _moved_by_contacts(self, k: int) -> Body | None:
        """The body of collider ``k`` when contacts move it (not while it follows its keyframes, nor on a
        hinge), else None."""
        other = self._by_collider.get(k)
        return None if other is None or not other.motion.pushed_by_contacts else other

    def _contacts(self, b: Body, frame0: float, frame1: float, dt: float):
        """Body ``b``'s surface points that may touch another collider during the substep, per collider:
        (collider index, points (k,3), outward normals of the other (k,3), gaps (k,) m, the other's material
        point velocities (k,3) when it is not a body)."""
        r0, t0 = b.motion.transform(frame0)
        pts = b.samples @ r0.T + t0
        for k, c in enumerate(self.colliders):
            if k == b.k:
                continue
            other = self._moved_by_contacts(k)
            ra, ta = c.transform(frame0)
            gap = distances(c.shape, ra, ta, pts)
            body = self._by_collider.get(k)  # a scripted one too: its velocity is its keyframes'
            speed = float(np.linalg.norm(b.motion.v)) + (float(np.linalg.norm(body.motion.v)) if body else 0.0)
            near = np.flatnonzero(gap < 0.5 * self.spacing + 2.0 * speed * dt)
            if not len(near):
                continue
            p = pts[near]
            n = normals(c.shape, ra, ta, p, 0.05 * self.spacing)
            vel = np.zeros((len(near), 3))
            if other is None:
                # A static or keyframed collider's material point under the contact, from its two poses.
                rb, tb = c.transform(frame1)
                vel = (((p - ta) @ ra) @ rb.T + tb - p) / dt
            yield k, p, n, gap[near], vel

    def _resolve_contacts(self, frame0: float, frame1: float, dt: float) -> None:
        """Stage 3: every body's contacts with the other colliders, by sequential impulses (``contact_kernels``)."""
        from ..colliders.contact.contact_kernels import solve_contacts

        slot = {b.k: i for i, b in enumerate(self.bodies)}
        coms = [b.motion.pose(frame0)[2] for b in self.bodies]
        rows = []
        for i, b in enumerate(self.bodies):
            if not b.motion.pushed_by_contacts:  # it meets the others as a keyframed collider does (their rows)
                continue
            for k, p, n, gap, vel in self._contacts(b, frame0, frame1, dt):
                other = self._moved_by_contacts(k)
                j = slot[k] if other is not None else -1
                mu = b.friction if other is None else float(np.sqrt(b.friction * other.friction))
                e = b.bounciness if other is None else 0.5 * (b.bounciness + other.bounciness)
                rb = p - coms[j] if other is not None else np.zeros_like(p)
                rows.append((np.full(len(p), i), np.full(len(p), j), p - coms[i], rb, n, gap, vel,
                             np.full(len(p), mu), np.full(len(p), e), np.full(len(p), k)))
        if not rows:
            return
        ia, ib, ra, rb, n, gap, vel, mu, e, against = (np.concatenate(c) for c in zip(*rows))
        m = [b.motion for b in self.bodies]
        v = np.array([x.v for x in m])
        w = np.array([x.omega for x in m])
        mom = np.array([x.momentum for x in m])
        inv_inertia = np.array([x.world_inverse_inertia() for x in m])
        inv_mass = np.array([1.0 / x.mass for x in m])
        impulses = np.empty((len(ia), 3))
        solve_contacts(ia.astype(np.int64), ib.astype(np.int64), ra, rb, n, gap, vel, mu, e, inv_mass, inv_inertia,
                       v, w, mom, dt, PUSH_OUT, self._bounce_speed, ITERATIONS, impulses)
        not_body = ib < 0
        np.add.at(self.contact_impulse, against[not_body], impulses[not_body])
        for i, x in enumerate(m):
            x.v, x.omega, x.momentum = v[i].copy(), w[i].copy(), mom[i].copy()

    # -- checkpoints and the cache -----------------------------------------------------------
    def state_dict(self) -> dict:
        return {str(b.k): {**b.motion.state_dict(), "impulse": b.impulse.tolist(), "torque": b.torque.tolist()}
                for b in self.bodies}

    def load_state_dict(self, d: dict) -> None:
        for b in self.bodies:
            s = d[str(b.k)]
            b.motion.load_state_dict(s)
            b.impulse, b.torque = np.array(s["impulse"], np.float64), np.array(s["torque"], np.float64)

    def transforms(self, frame: float) -> list[dict]:
        """Every body's pose at ``frame`` for the cache: name, location (m), rotation quaternion (w, x, y, z),
        centre of mass (m), velocity (m/s) and angular velocity (rad/s)."""
        out = []
        for b in self.bodies:
            r, t, com = b.motion.pose(frame)
            out.append({"name": self.colliders[b.k].name, "collider": b.k, "location": t.tolist(),
                        "rotation_quaternion": matrix_quaternion(r).tolist(), "center_of_mass": com.tolist(),
                        "velocity": b.motion.v.tolist(), "angular_velocity": b.motion.omega.tolist()})
        return out
