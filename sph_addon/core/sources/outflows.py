"""Outflow volumes: particles that enter one are removed (counted in the manifest's ``removed``).

An outflow is a shape of the collider registry (``colliders.COLLIDERS``: ``box``, ``sphere`` or a
closed ``mesh`` through its signed distance field) placed like a collider (``position``,
``rotation``), whose solid side removes particles instead of pushing them: a drain, a sink
under a waterfall, the end of a channel. A particle is removed at the end of the substep in
which its centre is inside (signed distance below 0), as the domain box removes the particles
outside it. An outflow moves through ``keyframes`` as a collider does (the Blender export samples
an Outflow that moves every frame); its mesh cannot deform.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..colliders import COLLIDERS, COMMON_PARAMETERS, Shape, parse_placed
from ..colliders.motion import Motion, motion_from_scene
from ..errors import InputError
from ..passes.base import PassSetup, WorldPass

# Shapes with an inside worth removing (a plane would empty the lower half of the world, a
# container everything outside it: the domain box does that).
OUTFLOW_KINDS = ("box", "sphere", "mesh")
# Where an outflow is: the placement fields of a collider, without its contact settings.
PLACEMENT_PARAMETERS = tuple(p for p in COMMON_PARAMETERS if p.name in ("name", "position", "rotation"))


@dataclass
class Outflow:
    """A placed outflow: its shape (signed distance, negative inside) and its motion."""

    name: str
    shape: Shape
    motion: Motion


def parse_outflow(item: Any, where: str, base_dir: Path, frame_range: tuple[int, int]) -> tuple[str, dict]:
    """Validate one item of the scene's ``outflows`` list: (type, resolved fields)."""
    kind, ct, p = parse_placed(item, where, OUTFLOW_KINDS, "outflow type", PLACEMENT_PARAMETERS)
    if ct.deforming(p) or any(k in item for k in ct.list_fields):
        raise InputError(f"{where}.deforming", "an outflow's mesh cannot deform; give one mesh (a static path)")
    if ct.check is not None:
        ct.check(p, item, where, base_dir, frame_range)
    return kind, p


def scene_outflows(scene, sdf_cache=None) -> list[Outflow]:
    """The outflows of ``scene`` (a ``scene.Scene``) as shapes at its first frame, their mesh grids
    clipped as colliders' are (``colliders.reach.scene_build_context``); the bake and ``preflight``
    build them alike. ``sdf_cache``: an ``SDFCache`` or None."""
    from ..colliders.shapes.reach import scene_build_context

    out = []
    for k, (kind, p) in enumerate(scene.outflows):
        shape = COLLIDERS[kind].build(p, scene_build_context(scene, f"outflows[{k}]", p, sdf_cache))
        out.append(Outflow(p["name"] or f"outflow {k}", shape, motion_from_scene(p, scene.frame_start)))
    return out


def inside_outflows(outflows: list[Outflow], x: np.ndarray, frame: float) -> np.ndarray:
    """(n,) bool: whether each particle centre ``x`` (n,3), m, is inside an outflow at ``frame``."""
    from ..colliders.contact.response import placed_distances

    inside = np.zeros(len(x), bool)
    d = np.empty(len(x))
    for o in outflows:
        rot, pos = o.motion.transform(frame)
        placed_distances(o.shape.code, o.shape.params, o.shape.grid, np.ascontiguousarray(rot, np.float64),
                         np.ascontiguousarray(pos, np.float64), np.ascontiguousarray(x, np.float64), d)
        inside |= d < 0.0
    return inside


class Outflows(WorldPass):
    """The scene's outflow volumes as a world pass: the particles inside one leave the world at the end of
    each substep, with those outside the domain box (none when the scene has no outflow)."""

    name = "outflows"

    @classmethod
    def build(cls, setup: PassSetup) -> Outflows:
        return cls(scene_outflows(setup.scene, setup.sdf_cache))

    def __init__(self, outflows: list[Outflow]):
        self.outflows = outflows
        self.active = bool(outflows)

    def removed(self, state, frame: float) -> np.ndarray | None:
        return inside_outflows(self.outflows, state.x, frame) if state.n else None
