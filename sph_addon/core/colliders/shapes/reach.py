"""The region of a collider's frame that particles can reach over a bake: the domain as it moves.

Particles outside the scene's domain box are removed, so a collider's field is
only ever looked up inside the domain, seen from the collider's local frame at
each moment of the bake. A mesh collider's distance grid is clipped to that
box (``sdf_clip``). numpy only: validation (``preflight``) sizes grids with it.
"""

from __future__ import annotations

import math

import numpy as np

from ..motion import Motion

# Poses sampled per frame. Between two samples a point turning with the collider leaves the chord
# of its arc by at most d (1 - cos(θ/2)), added to the box (θ the rotation between samples).
SAMPLES_PER_FRAME = 4


def domain_in_local_frame(domain: dict | None, motion: Motion, frame_start: int, frame_end: int,
                          grow: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Bounds, in the collider's frame, of the domain box over frames [frame_start, frame_end].

    Parameters
    ----------
    domain : the scene's ``domain`` (``min``, ``max`` in m), or None (unbounded).
    motion : the collider's motion (local -> world).
    frame_start, frame_end : the bake's frames.
    grow : m added on every side (how far a particle may be predicted past the domain).

    Returns
    -------
    (lo, hi), each (3,) float64 in m, or None when there is no domain.
    """
    if domain is None:
        return None
    lo_w, hi_w = np.asarray(domain["min"], np.float64), np.asarray(domain["max"], np.float64)
    corners = np.array([[(lo_w, hi_w)[a][0], (lo_w, hi_w)[b][1], (lo_w, hi_w)[c][2]]
                        for a in (0, 1) for b in (0, 1) for c in (0, 1)])
    if motion.moving:
        frames = frame_start + np.arange((frame_end - frame_start) * SAMPLES_PER_FRAME + 1) / SAMPLES_PER_FRAME
    else:
        frames = np.array([float(frame_start)])
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    sag, prev = 0.0, None
    for f in frames:
        r, t = motion.transform(float(f))
        local = (corners - t) @ r
        lo, hi = np.minimum(lo, local.min(axis=0)), np.maximum(hi, local.max(axis=0))
        if prev is not None and not np.array_equal(prev[0], r):
            angle = math.acos(min(1.0, max(-1.0, 0.5 * (float(np.trace(r @ prev[0].T)) - 1.0))))
            far = float(np.max(np.linalg.norm(local, axis=1)))
            sag = max(sag, far * (1.0 - math.cos(0.5 * angle)))
        prev = (r, t)
    return lo - grow - sag, hi + grow + sag


def scene_reach(scene, motion: Motion) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`domain_in_local_frame` for a collider of ``scene`` (a ``scene.Scene``).

    A particle is predicted at most a CFL step (``simulation.cfl`` spacings, at least one) past
    the domain before the domain removes it; the box grows by that.
    """
    grow = max(1.0, float(scene.simulation["cfl"])) * scene.particle_spacing
    return domain_in_local_frame(scene.domain, motion, scene.frame_start, scene.frame_end, grow)


def scene_build_context(scene, where: str, p: dict, sdf_cache=None):
    """The ``BuildContext`` of a collider or outflow ``p`` of ``scene`` (a ``scene.Scene``) at its first
    frame, its grid clipped to :func:`scene_reach`.

    The bake (``Simulation``) and its checks (``preflight``) build shapes through this one
    context, so the fields the checks build are the ones the bake finds in its SDF cache.

    Parameters
    ----------
    where : JSON path of the item, e.g. ``colliders[2]``.
    p : its resolved fields (placement and keyframes).
    sdf_cache : ``sdf_cache.SDFCache`` or None.
    """
    from .. import BuildContext
    from ..motion import motion_from_scene

    return BuildContext(base_dir=scene.base_dir, where=where, spacing=scene.particle_spacing,
                        frame=scene.frame_start, memory_budget=int(scene.simulation["memory_budget_mb"] * 2**20),
                        sdf_cache=sdf_cache,
                        # A dynamic body goes wherever the fluid takes it: its field covers all of it.
                        reach=None if p.get("dynamic") else scene_reach(scene, motion_from_scene(p, scene.frame_start)))
