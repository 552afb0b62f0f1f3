"""Dynamic Colliders in Blender: what the export checks and writes, the keyframes a bake leaves, Free Bake.

A Collider whose Motion is Dynamic is a rigid body the fluid moves (``core/passes/bodies.py``). The bake
writes its pose at every frame to ``bodies/bodies_NNNN.json``; :func:`key_bodies` turns them into
keyframes on the object (location and rotation, linear interpolation, in an action of their own),
so the file plays back and renders on a farm with no add-on. Before the first keys it remembers
the object's own transform, rotation mode and action (``SPHColliderSettings.rest_*``);
:func:`restore` puts them back (Free Bake), and a new bake starts from them, not from wherever the
keys have moved the object. :func:`convert_rigid_body` makes a Dynamic Collider of an object of
Blender's rigid-body world. Main thread only, like all bpy.
"""

from __future__ import annotations

import logging
from pathlib import Path

import bpy
import numpy as np
from mathutils import Euler, Matrix, Quaternion

from ..core.cache.cache_dir import CacheDir
from ..core.errors import InputError
from . import compat
from .export.errors import ExportError

log = logging.getLogger(__name__)

# F-curves that move an object: a Dynamic collider's own would fight the bake's keys.
TRANSFORM_PATHS = ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale",
                   "delta_location", "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale")


def is_dynamic(ob) -> bool:
    return ob.sph.role == 'COLLIDER' and ob.sph.collider.motion == 'DYNAMIC'


def _own_action(ob):
    """The artist's action on ``ob`` (None when it has none, or when it is the bake's)."""
    c = ob.sph.collider
    if c.rest_saved:
        return c.rest_action
    ad = ob.animation_data
    return ad.action if ad is not None else None


def scripted(ob, frame_start: int) -> bool:
    """Whether the Dynamic collider ``ob`` follows its own animation for a while (Animated Until)."""
    return ob.sph.collider.animated_until > frame_start


def check(ob, frame_start: int) -> None:
    """Raise ExportError when ``ob`` cannot be a Dynamic collider, saying what to change."""
    c = ob.sph.collider
    why = None
    if c.mode != "solid" or c.flip_normals:
        why = "a Dynamic collider must enclose a volume to weigh: set Mode to Solid and untick Flip Normals"
    elif ob.parent is not None:
        why = ("a Dynamic collider moves in world space: clear its parent (Object > Parent > Clear and Keep "
               "Transformation)")
    elif len(ob.constraints):
        why = "a Dynamic collider is moved by the fluid: remove its constraints"
    elif _has_deltas(ob):
        why = "a Dynamic collider's pose is its location and rotation: apply or clear its delta transforms"
    action = _own_action(ob)
    if why is None and action is not None and _moves(action) and not scripted(ob, frame_start):
        why = ("a Dynamic collider is moved by the fluid, and its own keyframes on location, rotation or scale "
               "would fight the bake: set Animated Until to the frame they hand it over, remove them, or set "
               "Motion to Animated")
    if why is not None:
        raise ExportError(f"{ob.name}: Motion", why)


def _has_deltas(ob) -> bool:
    return (any(ob.delta_location) or any(ob.delta_rotation_euler) or tuple(ob.delta_scale) != (1.0, 1.0, 1.0)
            or tuple(ob.delta_rotation_quaternion) != (1.0, 0.0, 0.0, 0.0))


def _moves(action) -> bool:
    curves = _all_fcurves(action)
    return any(fc.data_path in TRANSFORM_PATHS for fc in curves)


def _all_fcurves(action) -> list:
    """Every F-curve of ``action``, in every slot's channelbag (5.0+) or ``Action.fcurves`` (earlier)."""
    if not hasattr(action, "layers"):
        return list(action.fcurves)
    out = [fc for layer in action.layers for strip in layer.strips for bag in getattr(strip, "channelbags", ())
           for fc in bag.fcurves]
    return out or list(getattr(action, "fcurves", ()))


def rest_matrix(ob) -> Matrix:
    """Where the bake starts ``ob``: its transform before the last bake's keys, else its transform now."""
    c = ob.sph.collider
    return _stored_matrix(c) if c.rest_saved else ob.matrix_world.copy()


def _stored_matrix(c) -> Matrix:
    flat = list(c.rest_matrix)
    return Matrix([flat[4 * row:4 * row + 4] for row in range(4)])


def artist_keys(ob, frames) -> list[tuple[int, list[float], list[float]]]:
    """``(frame, position, Euler XYZ rotation)`` of ``ob`` at ``frames`` as its own animation places it,
    not the bake's keys: its action's location, rotation and scale curves evaluated over its transform
    before the bake (a Dynamic collider has no parent, constraints or delta transforms: ``check``)."""
    c = ob.sph.collider
    action = _own_action(ob)
    rest = _stored_matrix(c) if c.rest_saved else ob.matrix_basis.copy()
    mode = c.rest_rotation_mode if c.rest_saved else ob.rotation_mode
    loc, quat, scale = rest.decompose()
    base = {"location": list(loc), "scale": list(scale), "rotation_quaternion": list(quat)}
    if mode not in ('QUATERNION', 'AXIS_ANGLE'):
        base["rotation_euler"] = list(quat.to_euler(mode))
    elif mode == 'AXIS_ANGLE':
        axis, angle = quat.to_axis_angle()
        base["rotation_axis_angle"] = [angle, *axis]
    curves = [fc for fc in (_all_fcurves(action) if action is not None else []) if fc.data_path in base]
    frames = list(frames)
    locations, rotations = [], []
    for frame in frames:
        values = {path: list(v) for path, v in base.items()}
        for fc in curves:
            values[fc.data_path][fc.array_index] = fc.evaluate(frame)
        if mode == 'QUATERNION':
            rot = Quaternion(values["rotation_quaternion"]).normalized()
        elif mode == 'AXIS_ANGLE':
            angle, *axis = values["rotation_axis_angle"]
            rot = Quaternion(axis, angle)
        else:
            rot = Euler(values["rotation_euler"], mode).to_quaternion()
        locations.append(list(values["location"]))
        rotations.append(tuple(rot))
    # Each key's angles closest to the previous key's: the engine interpolates each angle on its own.
    eulers = _continuous_eulers(rotations, 'XYZ')
    return [(f, loc, [float(a) for a in e]) for f, loc, e in zip(frames, locations, eulers)]


def rest_transform(ob) -> tuple[list[float], list[float]]:
    """(position, Euler XYZ rotation) of :func:`rest_matrix`, as the scene file stores a collider's pose."""
    loc, rot, _ = rest_matrix(ob).decompose()
    return [float(x) for x in loc], [float(x) for x in rot.to_euler('XYZ')]


# ---- after a bake: keyframes ------------------------------------------------------------------------

def baked_poses(root: Path) -> dict[str, list[tuple[int, np.ndarray, np.ndarray]]]:
    """``{collider name: [(frame, location m, quaternion w x y z), ...]}`` from the cache, by frame."""
    cache = CacheDir(root)
    folder = cache.root / "bodies"
    if not folder.is_dir():
        return {}
    frames = sorted(int(p.stem.rsplit("_", 1)[1]) for p in folder.glob("bodies_*.json")
                    if p.stem.rsplit("_", 1)[1].isdigit())
    poses: dict[str, list] = {}
    for frame in frames:
        try:
            bodies = cache.read_bodies(frame)
        except InputError as exc:  # a damaged file: the frames before it still key
            log.warning("%s", exc)
            break
        for b in bodies:
            poses.setdefault(b["name"], []).append(
                (frame, np.asarray(b["location"], np.float64), np.asarray(b["rotation_quaternion"], np.float64)))
    return poses


def key_bodies(scene, domain, root: Path, unit: float) -> list[str]:
    """Key every Dynamic collider the cache at ``root`` moved; the names of the objects keyed.

    ``unit``: metres per Blender unit (the cache is in metres). A body whose object is gone or is no
    longer a Dynamic collider is left alone.
    """
    keyed = []
    for name, poses in baked_poses(root).items():
        ob = scene.objects.get(name)
        if ob is None or not is_dynamic(ob) or not poses:
            continue
        _remember_rest(ob, domain)
        _write_keys(ob, poses, unit)
        keyed.append(name)
    if keyed:
        scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)  # show the keyed pose now
    return keyed


def _remember_rest(ob, domain) -> None:
    c = ob.sph.collider
    if c.rest_saved:
        return
    ad = ob.animation_data
    c.rest_matrix = [v for row in ob.matrix_basis for v in row]
    c.rest_rotation_mode = ob.rotation_mode
    c.rest_action = ad.action if ad is not None else None
    c.rest_domain = domain.name
    c.rest_saved = True


def _write_keys(ob, poses, unit: float) -> None:
    """Replace the bake's action of ``ob`` by one keying ``poses`` (linear: the sampled path, no overshoot)."""
    c = ob.sph.collider
    old = c.baked_action
    # The artist's other channels (visibility, custom properties) play on in a copy of their action.
    action = c.rest_action.copy() if c.rest_action is not None else bpy.data.actions.new("")
    action.name = f"{ob.name} SPH Motion"
    ad = ob.animation_data or ob.animation_data_create()
    ad.action = action
    c.baked_action = action
    if old is not None and old != action:
        bpy.data.actions.remove(old)
    if ob.rotation_mode == 'AXIS_ANGLE':
        ob.rotation_mode = 'QUATERNION'
    frames = np.array([p[0] for p in poses], np.float64)
    location = np.array([p[1] for p in poses]) / unit
    curves = compat.action_fcurves(ob, create=True)
    channels = [("location", location)]
    if ob.rotation_mode == 'QUATERNION':
        channels.append(("rotation_quaternion", _continuous_quaternions([p[2] for p in poses])))
    else:
        channels.append(("rotation_euler", _continuous_eulers([p[2] for p in poses], ob.rotation_mode)))
    for path, values in channels:
        for index in range(values.shape[1]):
            fc = curves.find(path, index=index) or curves.new(path, index=index)
            fc.keyframe_points.clear()
            fc.keyframe_points.add(len(frames))
            fc.keyframe_points.foreach_set("co", np.column_stack([frames, values[:, index]]).ravel())
            for kp in fc.keyframe_points:
                kp.interpolation = 'LINEAR'
            fc.update()


def _continuous_quaternions(qs) -> np.ndarray:
    """q and -q are one rotation: keep each key on the side of the previous so interpolation takes the short way."""
    out = np.array(qs, np.float64)
    for k in range(1, len(out)):
        if out[k] @ out[k - 1] < 0.0:
            out[k] = -out[k]
    return out


def _continuous_eulers(qs, order: str) -> np.ndarray:
    """Euler angles in ``order``, each closest to the previous key's, so interpolation does not spin."""
    out, previous = [], None
    for q in qs:
        e = Quaternion(q).to_euler(order) if previous is None else Quaternion(q).to_euler(order, previous)
        previous = e
        out.append(tuple(e))
    return np.array(out, np.float64)


# ---- Free Bake ----------------------------------------------------------------------------------------

def restore(scene, domain=None) -> list[str]:
    """Put back the transform, rotation mode and action the bakes of ``domain`` (any, when None) keyed
    over; the bake's action is deleted. The names of the objects restored."""
    restored = []
    for ob in scene.objects:
        c = ob.sph.collider
        if not c.rest_saved or (domain is not None and c.rest_domain not in ("", domain.name)):
            continue
        baked = c.baked_action
        ad = ob.animation_data
        if ad is not None:
            ad.action = c.rest_action
        ob.rotation_mode = c.rest_rotation_mode or ob.rotation_mode
        ob.matrix_basis = _stored_matrix(c)
        c.baked_action = None
        c.rest_action = None
        c.rest_saved = False
        if baked is not None and baked.users == 0:
            bpy.data.actions.remove(baked)
        restored.append(ob.name)
    return restored


# ---- from Blender's rigid-body world -----------------------------------------------------------------

def convertible(ob) -> bool:
    """An object of Blender's rigid-body world marked Active, with a mesh to weigh."""
    rb = getattr(ob, "rigid_body", None)
    return ob.type == 'MESH' and rb is not None and rb.type == 'ACTIVE'


def volume(ob, unit: float) -> float:
    """The volume (m³) the evaluated mesh of ``ob`` encloses, with the object's scale."""
    import bmesh

    depsgraph = bpy.context.evaluated_depsgraph_get()
    bm = bmesh.new()
    try:
        bm.from_mesh(ob.evaluated_get(depsgraph).to_mesh())
        bm.transform(Matrix.Diagonal((*ob.matrix_world.to_scale(), 1.0)))
        return abs(bm.calc_volume(signed=True)) * unit ** 3
    finally:
        bm.free()
        ob.evaluated_get(depsgraph).to_mesh_clear()


def convert_rigid_body(context, ob, unit: float) -> str:
    """Make ``ob`` (an Active rigid body) a Dynamic Collider with its mass, friction and bounciness; its
    rigid body is removed. An Animated (kinematic) one becomes an Animated Collider. Returns a sentence
    for the report. Raises ExportError when its mesh encloses no volume."""
    rb = ob.rigid_body
    kinematic, mass, friction, bounce = rb.kinematic, rb.mass, rb.friction, rb.restitution
    v = volume(ob, unit)
    if not kinematic and v <= 0.0:
        raise ExportError(ob.name, "its mesh encloses no volume, so it has no density to take from its mass; "
                                   "close the mesh (or give it faces)")
    with context.temp_override(object=ob, active_object=ob, selected_objects=[ob],
                               selected_editable_objects=[ob]):
        bpy.ops.rigidbody.object_remove()
    ob.sph.role = 'COLLIDER'
    c = ob.sph.collider
    c.mode = "solid"
    if kinematic:
        c.motion = 'ANIMATED'
        return f"{ob.name}: Animated rigid body → Animated Collider"
    c.motion = 'DYNAMIC'
    density = mass / v
    c.density = min(max(density, 1.0), 25000.0)
    clamped = "" if 1.0 <= density <= 25000.0 else f" (its {density:.4g} kg/m³ is outside 1-25,000)"
    c.body_friction = friction
    c.restitution = bounce
    return (f"{ob.name}: rigid body of {mass:.3g} kg → Dynamic Collider of {c.density:.4g} kg/m³{clamped}, "
            f"friction {friction:.3g}, bounciness {bounce:.3g}")
