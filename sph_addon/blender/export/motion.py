"""What moves over the bake's frames: keyframes of colliders, inflows and outflows, deforming meshes.

The export samples the scene at every frame of the range only for objects that move: Colliders
marked Animated or Deforming, and any Collider, Inflow or Outflow whose world transform changes
(probed at a few frames, every frame when it has animation data or constraints). A Collider
left at Static that moves is exported as Animated, with a note for the artist. Fluids that
inherit their object's velocity get it from the object's motion at the first frame. Main
thread only, like all bpy: the scene's frame is changed and restored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from .errors import ExportError
from .meshes import mesh_arrays, transform, write_mesh
from .values import typed_value

log = logging.getLogger(__name__)


@dataclass
class Motion:
    """What the export samples over the frame range, with the scene items it fills in."""

    colliders: list
    collider_items: list
    inflows: list
    inflow_items: list
    fluids: list  # (object, source item) of Fluids that inherit their velocity
    unit: float = 1.0  # metres per Blender unit, for the meshes of deforming colliders
    outflows: list = field(default_factory=list)
    outflow_items: list = field(default_factory=list)


def sample_motion(scene, m: Motion, out_dir: Path, frame_start: int, frame_end: int, fps: float) -> list[str]:
    """Keyframes of moving colliders and inflows, per-frame meshes of deforming colliders; notes.

    A Collider left at Static whose world transform changes over the range (an action, a
    constraint, a parent's animation) would silently ignore its motion: it is exported as Animated,
    with a note. An Inflow or Outflow gets keyframes only when it moves, so a still one exports as
    before.
    """
    # Dynamic colliders are moved by the bake (their keys are its result, not its input).
    colliders = [ob for ob in m.colliders if ob.sph.collider.motion != 'DYNAMIC']
    declared = [ob for ob in colliders if ob.sph.collider.motion != 'STATIC']
    watched = [ob for ob in (*colliders, *m.inflows, *m.outflows) if ob not in declared]
    probes = {ob.name: [] for ob in watched}
    if watched and frame_end > frame_start:
        _at_frames(scene, _probe_frames(frame_start, frame_end),
                   lambda f, dg: [probes[ob.name].append(_matrix(ob)) for ob in watched])
    suspects = [ob for ob in watched if _moved(probes[ob.name]) or (frame_end > frame_start and _may_move(ob))]
    sampled = [*declared, *suspects]
    keys = {ob.name: [] for ob in sampled}
    matrices = {ob.name: [] for ob in sampled}

    def visit(frame, depsgraph):
        for ob in sampled:
            matrices[ob.name].append(_matrix(ob))
            keys[ob.name].append(_key(ob, frame, keys[ob.name]))
            if ob in declared and ob.sph.collider.motion == 'DEFORMING':
                co, tris = mesh_arrays(ob, depsgraph, "scaled")
                if len(tris) == 0:
                    raise ExportError(ob.name, f"the Collider has no faces at frame {frame}")
                it = m.collider_items[m.colliders.index(ob)]
                write_mesh(out_dir / it["path"].replace(".ply", f"_{frame:04d}.ply"), co, tris, m.unit)

    if sampled:
        _at_frames(scene, range(frame_start, frame_end + 1), visit)
    notes = []
    for ob in sampled:
        if ob not in declared and not _moved(matrices[ob.name]):
            continue  # a hint of animation that does not move it over this range
        if ob in m.inflows:
            _inflow_keys(m.inflow_items[m.inflows.index(ob)], ob, keys[ob.name])
            continue
        it = m.outflow_items[m.outflows.index(ob)] if ob in m.outflows else m.collider_items[m.colliders.index(ob)]
        it["keyframes"] = [{k: v for k, v in key.items() if k != "axis"} for key in keys[ob.name]]
        it["position"], it["rotation"] = it["keyframes"][0]["position"], it["keyframes"][0]["rotation"]
        if ob in m.outflows:
            continue
        if ob not in declared:
            notes.append(f"{ob.name}: its Motion is Static but it moves over frames {frame_start}-{frame_end}; "
                         "baked as Animated (set Motion to Animated to say so)")
        elif ob.sph.collider.motion == 'DEFORMING':
            it["path"] = it["path"].replace(".ply", "_{frame:04d}.ply")
            it["deforming"] = True
    for ob, it in m.fluids:
        it["velocity"] = typed_value(np.asarray(it["velocity"]) + ob.sph.fluid.inherit_velocity
                                     * _origin_velocity(scene, ob, frame_start, fps))
    for note in notes:
        log.warning("%s", note)
    return notes


def _at_frames(scene, frames, visit) -> None:
    """Call ``visit(frame, depsgraph)`` with the scene at each frame; the current frame is restored."""
    keep = scene.frame_current, scene.frame_subframe
    try:
        for frame in frames:
            scene.frame_set(frame)
            visit(frame, bpy.context.evaluated_depsgraph_get())
    finally:
        scene.frame_set(keep[0], subframe=keep[1])


def _matrix(ob) -> np.ndarray:
    return np.array(ob.matrix_world, dtype=np.float64)


def _may_move(ob) -> bool:
    """Whether ``ob`` or a parent has an action, drivers, NLA tracks or constraints (it may move
    between the frames a probe looks at, and then every frame is compared)."""
    while ob is not None:
        ad = ob.animation_data
        if ad is not None and (ad.action is not None or len(ad.drivers) or len(ad.nla_tracks)):
            return True
        if len(ob.constraints):
            return True
        ob = ob.parent
    return False


def _probe_frames(frame_start: int, frame_end: int) -> list[int]:
    """The range's ends and three frames between: enough to catch any transform that changes."""
    return sorted({round(frame_start + (frame_end - frame_start) * k / 4) for k in range(5)})


def _moved(matrices: list[np.ndarray]) -> bool:
    return any(not np.allclose(a, matrices[0], rtol=0.0, atol=1e-7) for a in matrices[1:])


def _key(ob, frame: int, previous: list[dict]) -> dict:
    """The pose of ``ob`` at ``frame``: a collider key; an inflow key is made from it (_inflow_keys)."""
    position, rotation = transform(ob)
    if previous:
        rotation = _continuous_euler(ob, previous[-1]["rotation"])
    axis = np.array(ob.matrix_world.to_3x3(), dtype=np.float64) @ np.array([0.0, 0.0, -1.0])
    return {"frame": frame, "position": typed_value(position), "rotation": typed_value(rotation),
            "axis": axis / max(np.linalg.norm(axis), 1e-300)}


def _inflow_keys(item: dict, ob, keys: list[dict]) -> None:
    """An inflow's keyframes (centre, velocity along the object's -Z at each frame)."""
    speed = ob.sph.inflow.speed
    item["keyframes"] = [{"frame": k["frame"], "center": k["position"], "velocity": typed_value(k["axis"] * speed)}
                         for k in keys]
    item["center"], item["velocity"] = item["keyframes"][0]["center"], item["keyframes"][0]["velocity"]


def _origin_velocity(scene, ob, frame: int, fps: float) -> np.ndarray:
    """Velocity (m/s) of ``ob``'s origin at ``frame``: its move to the next frame times the frame rate."""
    where = []
    _at_frames(scene, (frame, frame + 1), lambda f, dg: where.append(np.array(ob.matrix_world.translation)))
    return (where[1] - where[0]) * fps


def _continuous_euler(ob, previous: list[float]) -> list[float]:
    """Euler angles closest to the previous frame's, so per-substep interpolation does not spin."""
    from mathutils import Euler

    _, rot, _ = ob.matrix_world.decompose()
    return [float(x) for x in rot.to_euler('XYZ', Euler(previous, 'XYZ'))]
