"""How a collider moves: its rigid transform (local -> world) at any fractional frame.

A collider is a shape (a signed distance field in its local frame, see
``sdf_analytic``) and a motion. The contact response (``response.collide``,
Clavet 2005, thesis Algorithm 7) only needs the transform at the start and end
of each substep, so a motion is anything with ``transform(frame) -> (R, t)``.

- :class:`StaticMotion`: one pose for the whole bake.
- :class:`KeyframedMotion`: poses at keyframes (the Blender export samples
  every frame); positions and Euler angles are interpolated linearly, held
  before the first and after the last key. The angles are what Blender
  animates (one curve per angle), so keys 0 and 480° about Z turn the collider
  through 480°, as Blender shows it, not 120° along the shortest arc.

Where a dynamic rigid body plugs in (Clavet 2005, thesis section 6.3 and
Algorithm 7, two-way coupling; not implemented yet): it is one more
:class:`Motion` whose state (position, orientation quaternion, linear and
angular velocity, mass, inertia) is integrated once per substep from the
impulse and torque the fluid gave it (``response.impulse_and_torque``, gathered
as ``response.ContactReport``), and whose state is saved in checkpoints so a
resumed bake continues exactly. ``transform`` then reads that state instead of
keys.

Rotations follow :func:`euler_xyz_matrix` (Blender's XYZ Euler, R = Rz Ry Rx,
local -> world). numpy only: this runs a few times per substep per collider.
"""

from __future__ import annotations

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

    @abstractmethod
    def turn(self, frame0: float, frame1: float) -> float:
        """Largest angle (rad) the collider turns through from ``frame0`` to ``frame1`` (an upper bound)."""


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

    def turn(self, frame0: float, frame1: float) -> float:
        return 0.0


class KeyframedMotion(Motion):
    """Pose interpolated between keyframes, held before the first and after the last.

    Positions and Euler XYZ angles are interpolated linearly, each component on its own
    (per-axis ``np.interp``), as Blender interpolates the curves of its location and
    rotation channels between samples: the angles mean turns, so keys 2π apart make a full
    revolution, as they do in Blender. At a key, between two keys with the same angles and
    outside the keys the matrix is ``euler_xyz_matrix`` of the key's angles.

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

    def _euler(self, frame: float) -> np.ndarray:
        """(3,) Euler XYZ angles at ``frame``, rad."""
        return np.array([np.interp(frame, self.frames, self.rotations_euler_xyz[:, k]) for k in range(3)])

    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        f = self.frames
        pos = np.array([np.interp(frame, f, self.positions[:, k]) for k in range(3)])
        if frame <= f[0]:
            return self._matrices[0].copy(), pos
        if frame >= f[-1]:
            return self._matrices[-1].copy(), pos
        j = int(np.searchsorted(f, frame, side="right")) - 1
        if frame == f[j] or np.array_equal(self.rotations_euler_xyz[j], self.rotations_euler_xyz[j + 1]):
            return self._matrices[j].copy(), pos
        return euler_xyz_matrix(*(float(a) for a in self._euler(frame))), pos

    def turn(self, frame0: float, frame1: float) -> float:
        """The angles' total change from ``frame0`` to ``frame1``, rad: the rotation Rz(c) Ry(b) Rx(a) turns
        at |ω| <= |ȧ| + |ḃ| + |ċ| (each factor turns about a unit axis), so no point turns through more."""
        lo, hi = min(frame0, frame1), max(frame0, frame1)
        knots = [lo, *(f for f in self.frames if lo < f < hi), hi]
        angles = np.array([self._euler(f) for f in knots])
        return float(np.abs(np.diff(angles, axis=0)).sum())

    @property
    def moving(self) -> bool:
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
