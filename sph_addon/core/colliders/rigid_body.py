"""A collider the fluid moves: a rigid body (Clavet 2005, thesis section 7.1, Algorithm 7).

Algorithm 7 advances the bodies once per step, between the particles' relaxation and their
collisions: (1) the impulses the particles gave each body are summed into a force and a torque,
(2) the bodies are integrated, (3) contacts between bodies are resolved, (4) the particles collide
with the bodies as if these moved at fixed velocity over the step, and (5) what is still inside
is pushed out. Here the body's part of that loop:

- :func:`mass_properties`: volume, centre of mass and inertia tensor from the collider's signed
  distance field (any closed shape: a box, a sphere, a closed mesh), by a midpoint sum of a
  smoothed inside indicator over a grid of the shape's bounds. A face that is flat and cut by
  the grid contributes exactly (the indicator is linear across it); the error is at edges and
  corners, O(δ²) with δ the grid's cell: tests/core/test_rigid_body.py holds a box and a sphere
  to 0.5 % in volume and 1 % in inertia.
- :class:`RigidBodyMotion`: a :class:`motion.Motion` whose pose comes from a state (centre of
  mass, orientation quaternion, linear and angular velocity) instead of keys. Over one substep the
  body moves at fixed velocity (stage 4): ``transform`` extrapolates the state at the start of
  the substep with v and ω, so the collision response sees the same two poses the body then
  takes. ``kick`` applies the impulse and torque the particles gave it (stage 1) and gravity
  (stage 2, symplectic Euler: velocities first, then positions with the new velocities), and
  ``commit`` moves the state to the end of the substep.
- :func:`surface_samples`: points on the body's surface in its local frame, where contacts with
  other colliders are looked for (``bodies.py``, stage 3).
- Animated, then dynamic (Blender's rigid body with Animated keyed off at a frame): until its
  ``release`` frame the body follows a ``script`` (its keyframes, or its placement held still) as a
  keyframed collider does: the particles meet that motion, what they give it is dropped, and its
  contacts push the other bodies without being pushed (``Bodies``). The substep that reaches the
  release hands the body the velocities of its last scripted substep (:meth:`RigidBodyMotion.follow`).
- A hinge (a paddle wheel on its axle): the body's origin stays put and it turns about a fixed world
  axis only. Each substep the angular impulse about the origin (the particles' torque, their impulse's
  moment and gravity's) along the axis, over the moment of inertia about the axle (parallel-axis
  theorem), changes the angular speed; contacts with other colliders push it without moving it.

Deviation: Clavet's bodies receive the particles' impulses of the same step; here they receive
those of the previous substep (the particles collide with the body's pose, which must be known
before they move). Momentum is still exchanged exactly: the impulse waits one substep, it is not
lost (``bodies.Bodies.pending``).

numpy only (a few small arrays per substep and body); the distances come from the collision
kernels' ``placed_distances``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .motion import Motion

# Grid cells along the longest side of the shape's bounds for its mass properties.
MASS_CELLS = 64


@dataclass(frozen=True)
class MassProperties:
    """What a uniform body of a shape weighs and how it turns, per unit density.

    Attributes
    ----------
    volume : m³.
    centre : (3,) centre of mass in the shape's local frame, m.
    inertia : (3, 3) inertia tensor about the centre, local axes, per unit density (m⁵):
        multiply by the density (kg/m³) for kg m².
    """

    volume: float
    centre: np.ndarray
    inertia: np.ndarray


def local_bounds(shape) -> tuple[np.ndarray, np.ndarray] | None:
    """(lo, hi) of the solid in the shape's local frame, m; None for an unbounded or hollow shape
    (a plane, a tank), which cannot be a body."""
    from .shapes.sdf_dispatch import BOX, GRID, SPHERE

    if shape.code == GRID:  # a mesh's field: its grid's box
        lo = np.array(shape.params[:3], np.float64)
        return lo, lo + float(shape.params[3]) * (np.array(shape.grid.shape, np.float64) - 1.0)
    if shape.code in (BOX, SPHERE):
        half = np.full(3, shape.radius) if shape.code == SPHERE else np.array(shape.params[:3], np.float64)
        return -half, half
    return None


def distances(shape, rot: np.ndarray, pos: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(k,) signed distance (m, negative inside) of world ``points`` to ``shape`` placed at (rot, pos)."""
    from .contact.response import placed_distances

    out = np.empty(len(points))
    placed_distances(shape.code, shape.params, shape.grid, np.ascontiguousarray(rot, np.float64),
                     np.ascontiguousarray(pos, np.float64), np.ascontiguousarray(points, np.float64), out)
    return out


def normals(shape, rot: np.ndarray, pos: np.ndarray, points: np.ndarray, step: float) -> np.ndarray:
    """(k,3) unit outward normals at world ``points``: the distance's gradient by central differences of ``step`` m."""
    grad = np.empty((len(points), 3))
    for axis in range(3):
        shift = np.zeros(3)
        shift[axis] = step
        grad[:, axis] = distances(shape, rot, pos, points + shift) - distances(shape, rot, pos, points - shift)
    norm = np.linalg.norm(grad, axis=1)
    return grad / np.where(norm > 0.0, norm, 1.0)[:, None]


def _cell_centres(lo: np.ndarray, hi: np.ndarray, cells: int) -> tuple[np.ndarray, float]:
    """Centres of a grid of cubes of side δ covering [lo, hi] (``cells`` along the longest side), and δ."""
    delta = float(np.max(hi - lo)) / cells
    axes = [lo[a] + delta * (np.arange(math.ceil((hi[a] - lo[a]) / delta - 1e-9)) + 0.5) for a in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    return grid, delta


def mass_properties(shape, cells: int = MASS_CELLS) -> MassProperties:
    """Volume, centre of mass and inertia (per unit density) of the solid a shape encloses.

    Midpoint sum over cubes of side δ of the inside indicator smoothed across one cell,
    clip(1/2 - d/δ, 0, 1), with d the signed distance at the cube's centre.
    """
    bounds = local_bounds(shape)
    if bounds is None:
        raise ValueError("an unbounded or hollow shape has no mass")
    lo, hi = bounds
    pts, delta = _cell_centres(lo, hi, cells)
    d = distances(shape, np.eye(3), np.zeros(3), pts)
    w = np.clip(0.5 - d / delta, 0.0, 1.0) * delta**3
    volume = float(w.sum())
    if volume <= 0.0:
        raise ValueError("the shape encloses no volume")
    centre = (w @ pts) / volume
    r = pts - centre
    r2 = np.einsum("ij,ij->i", r, r)
    inertia = np.eye(3) * float(w @ r2) - (r * w[:, None]).T @ r
    return MassProperties(volume, centre, inertia)


def surface_samples(shape, step: float) -> np.ndarray:
    """(k,3) points on the shape's surface in its local frame, about ``step`` m apart: the centres of a
    grid of that step within half a cell of the surface, moved onto it along the distance's gradient.
    The corners of a box are added (a box rests on them)."""
    from .shapes.sdf_dispatch import BOX

    lo, hi = local_bounds(shape)
    pts, delta = _cell_centres(lo - step, hi + step, max(2, math.ceil(float(np.max(hi - lo)) / step) + 2))
    eye, zero = np.eye(3), np.zeros(3)
    d = distances(shape, eye, zero, pts)
    near = np.abs(d) < 0.5 * delta
    pts, d = pts[near], d[near]
    pts = pts - d[:, None] * normals(shape, eye, zero, pts, 0.25 * delta)
    if shape.code == BOX:
        half = np.array(shape.params[:3], np.float64)
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
        pts = np.concatenate([pts, corners])
    return pts


def quaternion_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def matrix_quaternion(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method: the largest of the four first)."""
    t = np.trace(r)
    cands = [t, r[0, 0], r[1, 1], r[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * math.sqrt(1.0 + r[i, i] - r[j, j] - r[m, m])
        q = [0.0] * 4
        q[0] = (r[m, j] - r[j, m]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (r[j, i] + r[i, j]) / s
        q[1 + m] = (r[m, i] + r[i, m]) / s
    q = np.array(q)
    return q / np.linalg.norm(q) * (1.0 if q[0] >= 0.0 else -1.0)


def turned(q: np.ndarray, omega: np.ndarray, tau: float) -> np.ndarray:
    """The orientation ``q`` turned for ``tau`` s at the world angular velocity ``omega`` (rad/s): exp(ω τ) q."""
    angle = float(np.linalg.norm(omega)) * tau
    if angle == 0.0:
        return q.copy()
    axis = omega / float(np.linalg.norm(omega))
    s = math.sin(0.5 * angle)
    dq = np.array([math.cos(0.5 * angle), *(s * axis)])
    w0, v0 = dq[0], dq[1:]
    w1, v1 = q[0], q[1:]
    out = np.array([w0 * w1 - v0 @ v1, *(w0 * v1 + w1 * v0 + np.cross(v0, v1))])
    return out / np.linalg.norm(out)


RELEASE_SLACK = 1e-6  # frames


class RigidBodyMotion(Motion):
    """The pose of a body the fluid moves, from its state (module docstring).

    Parameters
    ----------
    mass : kg. inertia : (3,3) kg m² about the centre of mass, local axes.
    centre : (3,) centre of mass in the local frame, m.
    rotation : (3,3) initial local -> world rotation. position : (3,) initial local origin, m.
    velocity : (3,) m/s. angular_velocity : (3,) rad/s, world axes.
    frame : the frame the state is at. fps : physical frames per second (timeline frames per
        simulated second: ``Scene.physics_fps``).
    script : the motion the body follows until ``release`` (a frame), or None: dynamic from the start.
    axis : (3,) the world axis of a hinge through the body's origin, or None: a free body.
    """

    def __init__(self, mass: float, inertia: np.ndarray, centre: np.ndarray, rotation: np.ndarray,
                 position: np.ndarray, velocity, angular_velocity, frame: float, fps: float,
                 script: Motion | None = None, release: float = -math.inf, axis=None):
        self.mass = float(mass)
        self.inertia = np.array(inertia, np.float64)
        self.inverse_inertia = np.linalg.inv(self.inertia)
        self.centre = np.array(centre, np.float64)
        self.q = matrix_quaternion(np.asarray(rotation, np.float64))
        self.com = np.asarray(position, np.float64) + np.asarray(rotation, np.float64) @ self.centre
        self.v = np.array(velocity, np.float64)
        self.omega = np.array(angular_velocity, np.float64)
        # The angular momentum (world axes, kg m²/s) is the state, ω follows from it at each substep's
        # orientation: a body turning freely keeps L exactly while ω precesses.
        self.momentum = self.world_inertia() @ self.omega
        self.frame = float(frame)
        self.fps = float(fps)
        self.script, self.release = script, float(release)
        self.axis = None if axis is None else _unit(np.asarray(axis, np.float64))
        self.pivot = np.asarray(position, np.float64).copy()  # a hinge's fixed point: the origin
        if self.axis is not None:
            self.omega = (self.axis @ self.omega) * self.axis
            self.v = np.cross(self.omega, self.com - self.pivot)
            self.momentum = self.world_inertia() @ self.omega

    @property
    def pushed_by_contacts(self) -> bool:
        """Whether contacts with other colliders change its velocities (not while it follows its script,
        nor on a hinge: those push the others as a keyframed collider does)."""
        return self.axis is None and not self.scripted

    @property
    def scripted(self) -> bool:
        """Whether the body still follows its script: the state's frame is before the release (by more than
        the round-off of a substep's end frame, which may land a hair before the frame it means)."""
        return self.script is not None and self.frame < self.release - RELEASE_SLACK

    # -- the Motion contract ---------------------------------------------------------------
    def pose(self, frame: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(R, t, centre of mass) at ``frame``, moving at the fixed velocities from the state's frame
        (or following the script, while scripted)."""
        if self.scripted:
            r, t = self.script.transform(frame)
            return r, t, t + r @ self.centre
        tau = (frame - self.frame) / self.fps
        r = quaternion_matrix(turned(self.q, self.omega, tau))
        if self.axis is not None:
            return r, self.pivot.copy(), self.pivot + r @ self.centre
        com = self.com + self.v * tau
        return r, com - r @ self.centre, com

    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        r, t, _ = self.pose(frame)
        return r, t

    @property
    def moving(self) -> bool:
        return True

    def turn(self, frame0: float, frame1: float) -> float:
        if self.scripted:
            return self.script.turn(frame0, frame1)
        return float(np.linalg.norm(self.omega)) * abs(frame1 - frame0) / self.fps

    # -- dynamics ----------------------------------------------------------------------------
    def world_inverse_inertia(self) -> np.ndarray:
        """I⁻¹ in world axes at the state's orientation: R I_local⁻¹ Rᵀ."""
        r = quaternion_matrix(self.q)
        return r @ self.inverse_inertia @ r.T

    def world_inertia(self) -> np.ndarray:
        """I in world axes at the state's orientation: R I_local Rᵀ."""
        r = quaternion_matrix(self.q)
        return r @ self.inertia @ r.T

    def kick(self, impulse: np.ndarray, torque: np.ndarray, gravity: np.ndarray, dt: float) -> None:
        """Velocities after an impulse (kg m/s) and an angular impulse about the centre of mass (kg m²/s)
        and ``dt`` s of gravity (m/s²): the angular momentum takes the torque, and ω is I⁻¹ L at the
        state's orientation (the gyroscopic term lives in the orientation's change of I)."""
        if self.axis is not None:
            self._turn_on_hinge(impulse, torque, gravity, dt)
            return
        self.v = self.v + gravity * dt + impulse / self.mass
        self.momentum = self.momentum + torque
        self.omega = self.world_inverse_inertia() @ self.momentum

    def _turn_on_hinge(self, impulse: np.ndarray, torque: np.ndarray, gravity: np.ndarray, dt: float) -> None:
        """The angular impulse about the pivot along the axis, over the inertia about the axle, turns it."""
        d = self.com - self.pivot
        about_pivot = torque + np.cross(d, impulse + self.mass * gravity * dt)
        inertia = self.world_inertia() + self.mass * (float(d @ d) * np.eye(3) - np.outer(d, d))
        speed = float(self.axis @ self.omega) + float(self.axis @ about_pivot) / float(self.axis @ inertia @ self.axis)
        self.omega = speed * self.axis
        self.v = np.cross(self.omega, d)
        self.momentum = self.world_inertia() @ self.omega

    def follow(self, frame0: float, frame1: float) -> None:
        """While scripted: the velocities that take the script's pose at ``frame0`` to its pose at ``frame1``
        (the contacts meet them, and the body keeps those of its last scripted substep)."""
        r0, _, c0 = self.pose(frame0)
        r1, _, c1 = self.pose(frame1)
        tau = (frame1 - frame0) / self.fps
        self.v = (c1 - c0) / tau
        self.omega = rotation_vector(r1 @ r0.T) / tau
        self.q = matrix_quaternion(r0)
        self.momentum = self.world_inertia() @ self.omega

    def commit(self, frame: float) -> None:
        """Move the state to ``frame`` at its velocities (the end of the substep)."""
        if self.scripted:
            r, self.pivot, self.com = self.pose(frame)  # a hinge turns about where the script left it
            self.q = matrix_quaternion(r)
            self.momentum = self.world_inertia() @ self.omega
            self.frame = float(frame)
            return
        tau = (frame - self.frame) / self.fps
        self.q = turned(self.q, self.omega, tau)
        if self.axis is not None:
            self.com = self.pivot + quaternion_matrix(self.q) @ self.centre
            self.v = np.cross(self.omega, self.com - self.pivot)
        else:
            self.com = self.com + self.v * tau
        self.frame = float(frame)

    def state_dict(self) -> dict:
        """The state, JSON-safe and exact (floats round-trip through JSON); a hinge's pivot with it."""
        out = {"frame": self.frame, "com": self.com.tolist(), "q": self.q.tolist(), "v": self.v.tolist(),
               "omega": self.omega.tolist(), "momentum": self.momentum.tolist()}
        if self.axis is not None:
            out["pivot"] = self.pivot.tolist()
        return out

    def load_state_dict(self, d: dict) -> None:
        if "pivot" in d:
            self.pivot = np.array(d["pivot"], np.float64)
        self.frame = float(d["frame"])
        self.com, self.q = np.array(d["com"], np.float64), np.array(d["q"], np.float64)
        self.v, self.omega = np.array(d["v"], np.float64), np.array(d["omega"], np.float64)
        self.momentum = np.array(d["momentum"], np.float64)


def _unit(axis: np.ndarray) -> np.ndarray:
    """``axis`` over its length, scaled by its largest component first: an axis of (1e-300, 0, 0) squared
    to 0 and gave NaN poses."""
    axis = axis / float(np.max(np.abs(axis)))
    return axis / float(np.linalg.norm(axis))


def rotation_vector(r: np.ndarray) -> np.ndarray:
    """The rotation vector (axis times angle in [0, π], rad) of the rotation matrix ``r``."""
    q = matrix_quaternion(r)
    if q[0] < 0.0:
        q = -q
    s = float(np.linalg.norm(q[1:]))
    if s == 0.0:
        return np.zeros(3)
    return q[1:] / s * (2.0 * math.atan2(s, q[0]))


def body_motion(shape, p: dict, frame_start: float, fps: float, script: Motion | None = None) -> RigidBodyMotion:
    """The motion of a dynamic collider of resolved scene fields ``p`` (its density, placement and initial
    velocities) and shape ``shape``, from its placement at ``frame_start``; with ``p["animated_until"]``
    after ``frame_start``, ``script`` (its keyframes or its placement) moves it until that frame."""
    props = mass_properties(shape)
    rho = float(p["density"])
    release = float(p.get("animated_until", 0.0))
    if script is None or release <= frame_start:
        script, release = None, -math.inf
    from . import euler_xyz_matrix

    rotation = euler_xyz_matrix(*(float(a) for a in p["rotation"]))
    position = np.asarray(p["position"], np.float64)
    if script is not None:
        rotation, position = script.transform(frame_start)
    axis = p.get("hinge_axis", (0.0, 0.0, 0.0))
    return RigidBodyMotion(rho * props.volume, rho * props.inertia, props.centre, rotation, position,
                           p["linear_velocity"], p["angular_velocity"], frame_start, fps, script, release,
                           axis if any(axis) else None)
