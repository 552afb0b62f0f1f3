"""What whitewater particles may not enter: the scene's domain box and its colliders.

A whitewater particle outside the domain box is removed, as the simulation removes liquid particles
there. Colliders come from the cache's scene file: planes, boxes, box containers and spheres, static or
keyframed (``colliders.motion``), each placed at the substep's end; a dynamic box or sphere (a body the
liquid moved) takes its baked poses from ``DIR/bodies/bodies_####.json``, location linear and rotation
normalised-linear between frames. Mesh colliders are not read (their meshes are the original scene's
files, relative to it, not to the cache): a whitewater particle may enter them.

Inside a collider, spray is removed (it has hit the solid: a droplet joins the wall's film) and foam and
bubbles are put back on its surface with their velocity into it removed. Near a collider, the liquid
neighbours a wall hides are counted (Ihmsen 2012, section 6): the lattice sites of the spherical cap of
radius h cut by the wall's tangent plane.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..colliders.shapes.sdf_dispatch import sdf_eval
from ..errors import InputError
from ..numerics import config
from ..numerics.kernel_cache import njit, prange

ANALYTIC_KINDS = ("plane", "box", "box_container", "sphere")


@njit(**config.NJIT)
def collide_point(i, p, u, kind, codes, params, grid, rot, trans, lo, hi, h, sites):
    """(alive, hidden neighbours) of particle i: removed outside [lo, hi] or as spray (kind 0) inside a
    collider; foam and bubbles inside one put back on its surface without their velocity into it (``p``
    and ``u`` mutated); the liquid sites a collider hides within h, π (h-d)² (2h+d) / 3 times ``sites``
    per m³ (the cap beyond the wall's tangent plane)."""
    wall = 0.0
    for a in range(3):
        if p[i, a] < lo[a] or p[i, a] > hi[a]:
            return False, wall
    for c in range(codes.shape[0]):
        ex = p[i, 0] - trans[c, 0]
        ey = p[i, 1] - trans[c, 1]
        ez = p[i, 2] - trans[c, 2]
        # local = Rᵀ (p - t)
        lx = rot[c, 0, 0] * ex + rot[c, 1, 0] * ey + rot[c, 2, 0] * ez
        ly = rot[c, 0, 1] * ex + rot[c, 1, 1] * ey + rot[c, 2, 1] * ez
        lz = rot[c, 0, 2] * ex + rot[c, 1, 2] * ey + rot[c, 2, 2] * ez
        d, nx, ny, nz = sdf_eval(codes[c], params[c], grid, lx, ly, lz)
        if not d < h:
            continue
        if d >= 0.0:
            wall += sites * math.pi * (h - d) ** 2 * (2.0 * h + d) / 3.0
            continue
        if kind[i] == 0:
            return False, wall
        wx = rot[c, 0, 0] * nx + rot[c, 0, 1] * ny + rot[c, 0, 2] * nz
        wy = rot[c, 1, 0] * nx + rot[c, 1, 1] * ny + rot[c, 1, 2] * nz
        wz = rot[c, 2, 0] * nx + rot[c, 2, 1] * ny + rot[c, 2, 2] * nz
        p[i, 0] -= d * wx
        p[i, 1] -= d * wy
        p[i, 2] -= d * wz
        un = u[i, 0] * wx + u[i, 1] * wy + u[i, 2] * wz
        if un < 0.0:
            u[i, 0] -= un * wx
            u[i, 1] -= un * wy
            u[i, 2] -= un * wz
        wall += sites * 2.0 * math.pi * h ** 3 / 3.0  # on the surface: half the sphere is wall
    return True, wall


@njit(**config.NJIT_PARALLEL)
def _collide(p, u, kind, alive, codes, params, grid, rot, trans, lo, hi, h, sites, wall):
    """:func:`collide_point` for every particle still ``alive`` (cleared for those removed)."""
    for i in prange(p.shape[0]):
        wall[i] = 0.0
        if alive[i]:
            alive[i], wall[i] = collide_point(i, p, u, kind, codes, params, grid, rot, trans, lo, hi, h, sites)


def _body_frames(cache) -> list[int]:
    """The frames whose bodies file the cache holds (sorted), [] without a cache."""
    folder = None if cache is None else cache.root / "bodies"
    if folder is None or not folder.is_dir():
        return []
    out = []
    for path in folder.glob("bodies_*.json"):
        stem = path.stem[len("bodies_"):]
        if stem.lstrip("-").isdigit():
            out.append(int(stem))
    return sorted(out)


class BakedPoses:
    """The poses a bake wrote for the dynamic collider ``colliders[index]`` (``CacheDir.write_bodies``), as a
    motion: ``transform(frame)`` -> (R, t), between frames the location linear and the quaternion
    normalised-linear (the shorter arc); before the first and after the last file, held."""

    def __init__(self, cache, index: int, frames: list[int]):
        self.cache, self.index, self.frames = cache, index, frames
        self._poses: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _pose(self, frame: int) -> tuple[np.ndarray, np.ndarray]:
        frame = min(max(frame, self.frames[0]), self.frames[-1])
        if frame not in self._poses:
            body = [b for b in self.cache.read_bodies(frame) if b["collider"] == self.index]
            if not body:
                raise InputError(str(self.cache.bodies_path(frame)), f"no pose of colliders[{self.index}]; "
                                                                     "bake again")
            self._poses[frame] = (np.array(body[0]["rotation_quaternion"], np.float64),
                                  np.array(body[0]["location"], np.float64))
        return self._poses[frame]

    def transform(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        from ..colliders.rigid_body import quaternion_matrix

        f0 = math.floor(frame)
        s = frame - f0
        q0, t0 = self._pose(f0)
        if s == 0.0:
            return quaternion_matrix(q0 / np.linalg.norm(q0)), t0.copy()
        q1, t1 = self._pose(f0 + 1)
        if float(np.sum(q0 * q1)) < 0.0:
            q1 = -q1
        q = (1.0 - s) * q0 + s * q1
        return quaternion_matrix(q / np.linalg.norm(q)), (1.0 - s) * t0 + s * t1


class Boundaries:
    """The domain box and the analytic colliders of a cache's scene (see the module docstring).

    Parameters
    ----------
    scene : the scene file's JSON object.
    spacing : particle spacing, m (the lattice density of the hidden neighbours).
    cache : the ``CacheDir`` whose ``bodies/`` holds the dynamic colliders' poses, or None (they are skipped).
    """

    def __init__(self, scene: Mapping[str, Any], spacing: float, cache=None):
        from ..colliders import COLLIDERS, COMMON_PARAMETERS, parse_placed
        from ..colliders.motion import motion_from_scene
        from ..colliders.shapes import BuildContext
        from ..scene.params import resolve
        from ..scene.scene_file import DOMAIN_PARAMETERS

        domain = resolve(DOMAIN_PARAMETERS, scene.get("domain"), "domain")
        self.lo = np.array(domain["min"], np.float64)
        self.hi = np.array(domain["max"], np.float64)
        self.spacing = float(spacing)
        frame_start = scene.get("frame_start", 1)
        shapes, motions, self.skipped = [], [], []
        items = scene.get("colliders") or []
        if not isinstance(items, list):
            raise InputError("colliders", "expected a list")
        for k, item in enumerate(items):
            kind, ct, p = parse_placed(item, f"colliders[{k}]", COLLIDERS, "collider type", COMMON_PARAMETERS)
            baked = _body_frames(cache) if p["dynamic"] else []
            if kind not in ANALYTIC_KINDS or (p["dynamic"] and not baked):
                self.skipped.append(p["name"] or f"{kind} {k}")
                continue
            shapes.append(ct.build(p, BuildContext(where=f"colliders[{k}]", spacing=spacing)))
            motions.append(BakedPoses(cache, k, baked) if p["dynamic"] else motion_from_scene(p, frame_start))
        self.motions = motions
        width = max([len(s.params) for s in shapes] + [1])
        self.codes = np.array([s.code for s in shapes], np.int64)
        self.params = np.zeros((len(shapes), width))
        for c, s in enumerate(shapes):
            self.params[c, :len(s.params)] = s.params
        self.grid = np.zeros((1, 1, 1), np.float32)

    def poses(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        """(k, 3, 3) rotations and (k, 3) positions of the colliders at a fractional frame."""
        rot = np.zeros((len(self.motions), 3, 3))
        trans = np.zeros((len(self.motions), 3))
        for c, m in enumerate(self.motions):
            rot[c], trans[c] = m.transform(frame)
        return rot, trans

    def apply(self, p: np.ndarray, u: np.ndarray, kind: np.ndarray, alive: np.ndarray, frame: float,
              h: float) -> np.ndarray:
        """Enforce the boundaries at ``frame`` on positions ``p`` and velocities ``u`` (both mutated) and
        ``alive`` (cleared for removed particles); return the hidden liquid neighbours of each particle."""
        wall = np.zeros(len(p))
        _collide(p, u, kind, alive, *self.arrays(frame, h), wall)
        return wall

    def arrays(self, frame: float, h: float) -> tuple:
        """What :func:`collide_point` takes after the particle arrays, at a fractional frame."""
        rot, trans = self.poses(frame)
        return self.codes, self.params, self.grid, rot, trans, self.lo, self.hi, h, 1.0 / self.spacing ** 3
