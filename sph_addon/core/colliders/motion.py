"""How a collider moves: its rigid transform (local -> world) at any fractional frame.

A collider is a shape (a signed distance field in its local frame, see
``sdf_analytic``) and a motion. The contact response (``response.collide``,
Clavet 2005, thesis Algorithm 7) only needs the transform at the start and end
of each substep, so a motion is anything with ``transform(frame) -> (R, t)``.

- :class:`StaticMotion`: one pose for the whole bake.
- :class:`KeyframedMotion`: poses at keyframes (the Blender export samples
  every frame); positions are interpolated linearly, rotations as rotations
  (unit quaternions, slerp on the shortest arc), held before the first and
  after the last key.

Where a dynamic rigid body plugs in (Clavet 2005, thesis section 6.3 and
Algorithm 7, two-way coupling; not implemented yet): it is one more
:class:`Motion` whose state (position, orientation quaternion, linear and
angular velocity, mass, inertia) is integrated once per substep from the
impulse and torque the fluid gave it (``response.impulse_and_torque``, gathered
as ``response.ContactReport``), and whose state is saved in checkpoints so a
resumed bake continues exactly. ``transform`` then reads that state instead of
keys.

Rotations follow :func:`euler_xyz_matrix` (Blender's XYZ Euler, R = Rz Ry Rx,
local -> world); quaternions are (w, x, y, z), Hamilton product, active
rotations. numpy only: this runs a few times per substep per collider.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import euler_xyz_matrix


class Motion(ABC):
    """Rigid motion of a collider's local frame."""

    @abstractmethod
    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        """Pose at a fractional frame.

        Parameters
        ----------
        frame : float
            Scene frame, fractional between substeps.

        Returns
        -------
        R : (3, 3) float64
            Rotation, local -> world (world = R @ local + t).
        t : (3,) float64
            Position of the local origin, m.
        """

    @property
    @abstractmethod
    def moving(self) -> bool:
        """Whether the pose may change over time (False lets callers skip per-frame work)."""


class StaticMotion(Motion):
    """One pose for the whole bake.

    Parameters
    ----------
    position : (3,) position of the local origin, m.
    rotation_euler_xyz : (3,) Euler XYZ angles, rad (Blender's default order).
    """

    def __init__(self, position: Sequence[float], rotation_euler_xyz: Sequence[float]):
        self.position = np.array(position, np.float64).reshape(3)
        self.rotation_euler_xyz = np.array(rotation_euler_xyz, np.float64).reshape(3)
        # The matrix is computed exactly as before the Motion split, so static scenes
        # give byte-identical results.
        self._r = euler_xyz_matrix(*(float(a) for a in self.rotation_euler_xyz))

    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        # Copies: callers may modify what they receive.
        return self._r.copy(), self.position.copy()

    @property
    def moving(self) -> bool:
        return False


def _axis_quaternion(axis: int, angle: float) -> np.ndarray:
    q = np.zeros(4)
    q[0] = math.cos(0.5 * angle)
    q[1 + axis] = math.sin(0.5 * angle)
    return q


def _quaternion_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a b (rotate by b, then by a)."""
    aw, av = a[0], a[1:]
    bw, bv = b[0], b[1:]
    return np.concatenate(([aw * bw - av @ bv], aw * bv + bw * av + np.cross(av, bv)))


def euler_xyz_quaternion(rx: float, ry: float, rz: float) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the rotation ``euler_xyz_matrix(rx, ry, rz)`` (angles in rad)."""
    # R = Rz Ry Rx: compose in the same order.
    q = _quaternion_product(_axis_quaternion(2, rz),
                            _quaternion_product(_axis_quaternion(1, ry), _axis_quaternion(0, rx)))
    return q / np.linalg.norm(q)


def quaternion_matrix(q: np.ndarray) -> np.ndarray:
    """(3, 3) rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    ])


def slerp(q0: np.ndarray, q1: np.ndarray, s: float) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions on the shortest arc.

    q and -q are the same rotation; taking the one nearer ``q0`` makes the
    interpolation turn by less than half a turn, so Euler keys that differ by
    2π (a continuity choice of the exporter, not a motion) give no spin.

    Parameters
    ----------
    q0, q1 : (4,) unit quaternions (w, x, y, z).
    s : fraction in [0, 1].

    Returns
    -------
    (4,) unit quaternion: a rotation by ``s`` times the angle from q0 to q1 about their fixed axis.
    """
    dot = float(q0 @ q1)
    if dot < 0.0:
        q1 = -q1
        dot = -dot
    if dot > 1.0 - 1e-12:
        # Nearly equal: sin(theta) would vanish; the chord and the arc agree to rounding.
        q = q0 + s * (q1 - q0)
    else:
        theta = math.acos(dot)
        q = (math.sin((1.0 - s) * theta) * q0 + math.sin(s * theta) * q1) / math.sin(theta)
    return q / np.linalg.norm(q)


class KeyframedMotion(Motion):
    """Pose interpolated between keyframes, held before the first and after the last.

    Positions are interpolated linearly per axis. Rotations are interpolated as
    rotations (slerp, shortest arc): a turn about a tilted axis stays about that
    axis, which component-wise Euler interpolation does not do. Where the two
    bracketing keys have the same Euler angles (and before the first / after the
    last key) the matrix is ``euler_xyz_matrix`` of the key's angles, exactly
    as when Euler angles were interpolated linearly, so those results are
    byte-identical to earlier versions.

    Parameters
    ----------
    frames : (K,) increasing key frames, K >= 1.
    positions : (K, 3) positions of the local origin, m.
    rotations_euler_xyz : (K, 3) Euler XYZ angles, rad.
    """

    def __init__(self, frames: Sequence[float], positions: Sequence[Sequence[float]],
                 rotations_euler_xyz: Sequence[Sequence[float]]):
        self.frames = np.array(frames, np.float64).reshape(-1)
        k = len(self.frames)
        self.positions = np.array(positions, np.float64).reshape(k, 3)
        self.rotations_euler_xyz = np.array(rotations_euler_xyz, np.float64).reshape(k, 3)
        if k == 0:
            raise ValueError("KeyframedMotion needs at least one key")
        if np.any(np.diff(self.frames) <= 0.0):
            raise ValueError("key frames must be increasing")
        self._matrices = [euler_xyz_matrix(*(float(a) for a in rot)) for rot in self.rotations_euler_xyz]
        self._quaternions = [euler_xyz_quaternion(*rot) for rot in self.rotations_euler_xyz]

    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        f = self.frames
        # Per-axis np.interp, as before the Motion split (byte-identical positions).
        pos = np.array([np.interp(frame, f, self.positions[:, k]) for k in range(3)])
        if frame <= f[0]:
            return self._matrices[0].copy(), pos
        if frame >= f[-1]:
            return self._matrices[-1].copy(), pos
        j = int(np.searchsorted(f, frame, side="right")) - 1
        if frame == f[j] or np.array_equal(self.rotations_euler_xyz[j], self.rotations_euler_xyz[j + 1]):
            return self._matrices[j].copy(), pos
        s = (frame - f[j]) / (f[j + 1] - f[j])
        return quaternion_matrix(slerp(self._quaternions[j], self._quaternions[j + 1], s)), pos

    @property
    def moving(self) -> bool:
        # Keys that differ at all count as motion (Euler keys 2π apart included: conservative).
        return len(self.frames) > 1 and bool(np.ptp(self.positions, axis=0).any()
                                             or np.ptp(self.rotations_euler_xyz, axis=0).any())


def motion_from_scene(p: dict[str, Any], frame_start: float) -> Motion:
    """The motion of a resolved scene collider (``scene._collider``).

    Parameters
    ----------
    p : dict
        Resolved collider fields: ``position`` (3,) m, ``rotation`` (3,) Euler XYZ
        rad, ``keyframes`` a list of ``{frame, position, rotation}`` in increasing
        frame order (empty: the collider does not move).
    frame_start : float
        The scene's first frame. Static and keyframed motions do not need it;
        a dynamic body's state will start there.

    Returns
    -------
    Motion
        :class:`StaticMotion` at ``position`` / ``rotation`` without keyframes,
        else :class:`KeyframedMotion` through the keys.
    """
    keys = p["keyframes"]
    if not keys:
        return StaticMotion(p["position"], p["rotation"])
    return KeyframedMotion([key["frame"] for key in keys], [key["position"] for key in keys],
                           [key["rotation"] for key in keys])
