"""Blender scene -> the core's scene file and meshes (DESIGN.md section 2).

Everything the core needs is written under ``<cache>/input/``: ``scene.json``
and one PLY per Fluid and Collider (per frame for deforming colliders). Meshes
are evaluated (modifiers, armatures, shape keys applied); fluids are written in
world space, colliders in their local frame with the object's scale applied so
that the core only has to move them rigidly (position + Euler XYZ rotation,
sampled every frame for animated colliders).

Errors name the Blender object and the setting, so that a message from the
core's validation (``materials[1].params.kinematic_viscosity: must be at least 0``)
reaches the artist as ``Honey: Viscosity: must be at least 0``. Main thread only.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ..core.atomic import write_json
from ..core.colliders import COLLIDERS
from ..core.errors import InputError
from ..core.params import resolve, typed
from ..core.plyio import write_ply
from ..core.scene import DOMAIN_PARAMETERS, FORMAT, Scene, parse_scene
from ..core.sources import INFLOW_KEY_PARAMETERS, SOURCES
from . import migrate
from . import properties as props

log = logging.getLogger(__name__)

INPUT_DIR = "input"
SCENE_FILE = "scene.json"
_VERTEX = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4")])


class ExportError(InputError):
    """Bad Blender setup; ``where`` is the object name (and the setting, if one)."""


@dataclass
class Exported:
    """A written and validated scene: the file, the core's Scene, and which JSON paths came from which objects."""

    scene_path: Path
    scene: Scene
    origins: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the export decided for the artist (see _sample_motion)


# ---- finding things -----------------------------------------------------------------------------

def domains(scene) -> list:
    return sorted((ob for ob in scene.objects if ob.sph.role == 'DOMAIN'), key=lambda ob: ob.name)


def find_domain(scene, name: str = ""):
    """The Domain to bake: ``name``, else the active object if it is a Domain, else the only one."""
    found = domains(scene)
    if name:
        for ob in found:
            if ob.name == name:
                return ob
        raise ExportError(name, "no Domain object of that name in the scene; "
                                f"Domains: {', '.join(o.name for o in found) or 'none'}")
    if not found:
        raise ExportError("Scene", "has no Domain: select an object and set Physics > SPH Fluid > Type to Domain "
                                   "(or use Make Domain around the fluid)")
    active = bpy.context.view_layer.objects.active if bpy.context.view_layer else None
    if active is not None and active.sph.role == 'DOMAIN' and active in found:
        return active
    if len(found) > 1:
        raise ExportError("Scene", f"has {len(found)} Domains ({', '.join(o.name for o in found)}); make one "
                                   "active or give the domain's name (bake(domain=...))")
    return found[0]


def members(scene, role: str) -> list:
    """The objects of ``role`` that take part: a disabled one (its Enabled box off) is left out."""
    return sorted((ob for ob in scene.objects if ob.sph.role == role and ob.sph.enabled), key=lambda ob: ob.name)


def cache_dir(domain) -> Path:
    """The Domain's cache directory as an absolute path (``//`` resolved against the .blend)."""
    text = domain.sph.domain.cache_directory.strip()
    if not text:
        raise ExportError(f"{domain.name}: Cache Directory", "is empty; set a folder (e.g. //sph_cache)")
    if text.startswith("//") and not bpy.data.filepath:
        raise ExportError(f"{domain.name}: Cache Directory",
                          f"{text!r} is relative to the .blend file, which is not saved yet; save the file "
                          "first or choose an absolute folder")
    return Path(bpy.path.abspath(text)).resolve()


# ---- meshes -------------------------------------------------------------------------------------

def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "object"


def mesh_arrays(ob, depsgraph, space: str):
    """Evaluated triangles of ``ob``: (vertices float32 (N, 3), triangles int32 (M, 3)).

    ``space``: "world" (matrix_world applied) or "scaled" (local coordinates times the object's
    world scale: the collider frame the core moves rigidly).
    """
    ob_eval = ob.evaluated_get(depsgraph)
    try:
        me = ob_eval.to_mesh()
    except RuntimeError:
        me = None
    if me is None:
        raise ExportError(ob.name, f"is a {ob.type.lower()} object with no surface; use a mesh (or a curve, "
                                   "text or surface that converts to one)")
    try:
        me.calc_loop_triangles()
        co = np.empty(3 * len(me.vertices), np.float32)
        me.vertices.foreach_get("co", co)
        tris = np.empty(3 * len(me.loop_triangles), np.int32)
        me.loop_triangles.foreach_get("vertices", tris)
    finally:
        ob_eval.to_mesh_clear()
    co = co.reshape(-1, 3).astype(np.float64)
    m = np.array(ob.matrix_world, dtype=np.float64)
    if space == "world":
        co = co @ m[:3, :3].T + m[:3, 3]
    else:
        co = co * np.array(ob.matrix_world.to_scale(), dtype=np.float64)
    return co.astype(np.float32), tris.reshape(-1, 3)


def _write_mesh(path: Path, co: np.ndarray, tris: np.ndarray, unit: float = 1.0) -> None:
    """Write a mesh as PLY; ``unit``: metres per Blender unit (vertices are stored in metres)."""
    if unit != 1.0:
        # In float64: 15 units x 0.01 then rounds to the same float32 as 0.15 m modelled in metres.
        co = (co.astype(np.float64) * unit).astype(np.float32)
    v = np.empty(len(co), _VERTEX)
    v["x"], v["y"], v["z"] = co[:, 0], co[:, 1], co[:, 2]
    write_ply(path, v, tris)


def signed_volume(co: np.ndarray, tris: np.ndarray) -> float:
    """Volume enclosed by a closed triangle mesh (divergence theorem), sign by orientation."""
    a, b, c = (co[tris[:, k]].astype(np.float64) for k in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def _transform(ob) -> tuple[list[float], list[float]]:
    loc, rot, _ = ob.matrix_world.decompose()
    return [float(x) for x in loc], [float(x) for x in rot.to_euler('XYZ')]


# ---- values from properties ---------------------------------------------------------------------

def typed_value(value):
    """Blender stores floats as float32: 0.05 reads back as 0.0500000007. Round to what was typed."""
    if isinstance(value, float):
        return float(f"{value:.7g}")
    if hasattr(value, "__len__") and not isinstance(value, str):
        return [typed_value(float(v)) for v in value]
    return value


def spacing(domain) -> float:
    """The Domain's particle spacing as typed (metres)."""
    return typed_value(domain.sph.domain.particle_spacing)


def unit_scale(scene, domain) -> float:
    """Metres per Blender unit for the bake: the scene's Unit Scale (Scene > Units) when the Domain's
    Use Unit Scale is on and the scene has a unit system (Blender applies no scale without one), else 1."""
    u = scene.unit_settings
    if not domain.sph.domain.use_unit_scale or u.system == 'NONE':
        return 1.0
    return typed_value(float(u.scale_length))  # as typed: float32 0.01 reads 0.00999999978


def _scaled(p) -> bool:
    """Whether Blender shows ``p`` in scene units: lengths, and velocity vectors (VELOCITY subtype).

    Gravity (m/s²) is not scaled: -9.81 is the Earth's in every unit scale (Blender shows it in scene
    units, but an artist modelling in centimetres means real gravity). Rates (m³/s), speeds like
    max_speed (plain numbers in the panel) and material parameters are typed in SI.
    """
    return p.unit == "m" or (p.kind == "vector" and p.unit == "m/s")


def _scale_fields(item: dict, params, u: float) -> None:
    for p in params:
        if _scaled(p) and p.name in item:
            v = item[p.name]
            item[p.name] = typed_value([float(x) * u for x in v] if isinstance(v, list) else float(v) * u)


def to_metres(data: dict, u: float) -> None:
    """Scale the lengths and speeds of an exported scene dict from scene units to metres, in place.

    The mesh files are scaled when written (``_write_mesh``); materials have no length parameter.
    """
    from ..core.colliders import COMMON_PARAMETERS

    _scale_fields(data, props.TOP_PARAMETERS, u)
    _scale_fields(data["domain"], DOMAIN_PARAMETERS, u)
    _scale_fields(data["surface"], props.SURFACE_PARAMETERS, u)
    for item in data["sources"]:
        _scale_fields(item, SOURCES[item["type"]], u)
        for key in item.get("keyframes", []):
            _scale_fields(key, INFLOW_KEY_PARAMETERS, u)
    for item in data["colliders"] + data.get("outflows", []):
        params = COMMON_PARAMETERS + COLLIDERS[item["type"]].parameters
        _scale_fields(item, params, u)
        for key in item.get("keyframes", []):
            _scale_fields(key, params, u)


def values(group, params) -> dict:
    return {p.name: typed_value(getattr(group, p.name)) for p in params}


def _material(ob) -> dict:
    m = ob.sph.material
    # Files from before per-model groups: the farm command and appended objects may have missed
    # the load handler. A no-op for current files.
    migrate.upgrade(m)
    if migrate.pending(m):  # linked from an old file: its values cannot be moved here
        raise ExportError(ob.name, "is linked from a file saved by an older version of the add-on; open and save "
                                   "that file with this version first")
    model = m.model
    if model not in props.SOLVERS:
        raise ExportError(f"{ob.name}: Model", f"{model or 'the stored model'!r} is not a material model of this "
                                               f"version; choose one of {', '.join(props.SOLVERS)}")
    return {"name": ob.name, "model": model, **_preset_and_overrides(props.model_group(m, model), model)}


def _preset_and_overrides(group, model: str) -> dict:
    """A model group's preset and the values that differ from it (the scene file stores only those)."""
    preset = props.preset_of(group)
    current = values(group, props.SOLVERS[model].parameters)
    base = {k: typed_value(v) for k, v in props.preset_values(model, preset).items()}
    return {"preset": preset, "params": {k: v for k, v in current.items() if v != typed_value(base.get(k))}}


def material_params(ob) -> tuple[str, object]:
    """``ob``'s material model and its typed ``Params``, as a bake would read them from the scene file.

    Reads only (a panel calls it while drawing): an object still holding settings of an older
    version gives the values its group holds now. Raises ExportError for a model this version
    does not have, InputError for a value the model refuses.
    """
    m = ob.sph.material
    model = m.model
    if model not in props.SOLVERS:
        raise ExportError(f"{ob.name}: Model", f"{model or 'the stored model'!r} is not a material model of this "
                                               "version")
    spec = props.SOLVERS[model]
    item = _preset_and_overrides(props.model_group(m, model), model)
    resolved = resolve(spec.parameters, item["params"], f"{ob.name}: {props.model_label(model)}",
                       base=props.preset_values(model, item["preset"]))
    return model, typed(spec.Params, resolved)


# ---- the export ---------------------------------------------------------------------------------

def build_scene(scene, domain, out_dir: Path, frames: tuple[int, int] | None = None,
                notes: list[str] | None = None) -> tuple[dict, dict]:
    """The scene dict (and origins: JSON path -> object name), writing meshes into ``out_dir``.

    ``notes`` receives one sentence per decision the artist did not ask for (a Static collider
    found animated and exported as Animated).
    """
    d = domain.sph.domain
    # Enums saved by position (Collider mode, surface field) in files the load handler missed
    # (the farm command, appended objects); Fluids and Inflows are upgraded in _material.
    for ob in (domain, *members(scene, 'COLLIDER')):
        migrate.upgrade(ob.sph.material)
    migrate.upgrade_unit_scale(domain)
    migrate.upgrade_surface_normals(domain)
    if domain.library is None:
        # Stored explicitly, so a file saved from now on is never taken for one from before the setting
        # (or, for normals, from before its default changed).
        d.use_unit_scale = d.use_unit_scale
        d.surface.normals = d.surface.normals
    unit = unit_scale(scene, domain)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    frame_start, frame_end = frames if frames is not None else (d.frame_start, d.frame_end)
    if frame_end < frame_start:
        raise ExportError(f"{domain.name}: Frame End", f"{frame_end} is before Frame Start {frame_start}")
    gravity = tuple(scene.gravity) if d.use_scene_gravity else tuple(d.gravity)
    if d.use_scene_gravity and not scene.use_gravity:
        gravity = (0.0, 0.0, 0.0)
    simulation = values(d, props.DOMAIN_SIMULATION)
    simulation["gravity"] = typed_value(gravity)
    # Controls added since scene files were first written are left out at their defaults, so a file
    # that does not use them exports the scene older versions wrote (and a bake they began resumes).
    if simulation["time_scale"] == 1.0:
        del simulation["time_scale"]
    data = {
        "format": FORMAT,
        "name": domain.name,
        "particle_spacing": spacing(domain),
        "frame_start": int(frame_start),
        "frame_end": int(frame_end),
        "fps": typed_value(scene.render.fps / scene.render.fps_base),
        "simulation": simulation,
        "materials": [],
        "sources": [],
        "colliders": [],
        "surface": values(d.surface, props.SURFACE_PARAMETERS),
    }
    origins = {"particle_spacing": domain.name, "frame_start": domain.name, "frame_end": domain.name,
               "simulation": domain.name, "surface": domain.name, "domain": domain.name, "$": domain.name,
               "sources": domain.name}
    lo, hi = _world_bounds(domain)
    data["domain"] = {"min": lo, "max": hi}
    if d.closed_borders and not all(getattr(d, p.name) for p in props.BORDER_SIDES):
        origins[f"colliders[{len(data['colliders'])}]"] = domain.name
        data["colliders"].append({"type": "box_container", "name": domain.name,
                                  "position": typed_value([(a + b) / 2 for a, b in zip(lo, hi)]),
                                  "size": typed_value([b - a for a, b in zip(lo, hi)]),
                                  **{k: v for k, v in values(d, props.BORDER_SIDES).items() if v},
                                  **({"friction": typed_value(d.wall_friction)} if d.wall_friction else {})})
    out_dir.mkdir(parents=True, exist_ok=True)
    emitters = members(scene, 'FLUID') + members(scene, 'INFLOW')
    for ob in emitters:
        origins[f"materials[{len(data['materials'])}]"] = ob.name
        data["materials"].append(_material(ob))
    for ob in members(scene, 'FLUID'):
        origins[f"sources[{len(data['sources'])}]"] = ob.name
        data["sources"].append(_fluid_source(ob, depsgraph, out_dir, d.particle_spacing, unit))
    inflows = members(scene, 'INFLOW')
    for ob in inflows:
        origins[f"sources[{len(data['sources'])}]"] = ob.name
        data["sources"].append(_inflow_source(ob))
    if not data["sources"]:
        raise ExportError("Scene", "has no enabled Fluid or Inflow object; set an object's Physics > SPH Fluid > "
                                   "Type to Fluid (filled with particles) or Inflow (emits them), or tick its "
                                   "Enabled box")
    colliders = members(scene, 'COLLIDER')
    for ob in colliders:
        origins[f"colliders[{len(data['colliders'])}]"] = ob.name
        data["colliders"].append(_collider_static(ob, depsgraph, out_dir, unit))
    outflows = members(scene, 'OUTFLOW')
    for k, ob in enumerate(outflows):  # no key without Outflows: older files export as before
        origins[f"outflows[{k}]"] = ob.name
        data.setdefault("outflows", []).append(_outflow(ob, depsgraph, out_dir, unit))
    motion = Motion(colliders, data["colliders"][len(data["colliders"]) - len(colliders):], inflows,
                    data["sources"][len(data["sources"]) - len(inflows):],
                    [(ob, it) for ob, it in zip(members(scene, 'FLUID'), data["sources"])
                     if ob.sph.fluid.inherit_velocity != 0.0], unit, outflows, data.get("outflows", []))
    # Velocities the motion gives (inherit velocity) are per second of physics: fps / time scale.
    found = _sample_motion(scene, motion, out_dir, frame_start, frame_end,
                           data["fps"] / data["simulation"].get("time_scale", 1.0))
    if notes is not None:
        notes += found
    if unit != 1.0:
        to_metres(data, unit)
    return data, origins


def _world_bounds(ob) -> tuple[list[float], list[float]]:
    m = np.array(ob.matrix_world, dtype=np.float64)
    corners = np.array([tuple(c) for c in ob.bound_box], dtype=np.float64) @ m[:3, :3].T + m[:3, 3]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    if np.any(hi - lo <= 0):
        raise ExportError(ob.name, "the Domain has no volume; use a box-shaped mesh that encloses the fluid")
    return typed_value(lo), typed_value(hi)


def _fluid_source(ob, depsgraph, out_dir: Path, spacing: float, unit: float = 1.0) -> dict:
    co, tris = mesh_arrays(ob, depsgraph, "world")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Fluid object has no faces, so no volume to fill; use a closed mesh")
    volume = abs(signed_volume(co, tris))
    if volume < 0.5 * spacing ** 3:
        raise ExportError(ob.name, f"the Fluid object encloses no volume ({volume:.3g} m^3: it is flat or open); "
                                   "use a closed mesh, or give it thickness with a Solidify modifier")
    name = f"fluid_{_safe(ob.name)}.ply"
    _write_mesh(out_dir / name, co, tris, unit)
    return {"type": "mesh", "material": ob.name, "path": name, **values(ob.sph.fluid, props.FLUID_SOURCE),
            "velocity": typed_value(ob.sph.material.initial_velocity)}


def _inflow_source(ob) -> dict:
    s = ob.sph.inflow
    if s.speed <= 0:
        raise ExportError(f"{ob.name}: Speed", "must be above 0 for the Inflow to emit")
    axis = np.array(ob.matrix_world.to_3x3(), dtype=np.float64) @ np.array([0.0, 0.0, -1.0])
    axis /= np.linalg.norm(axis)
    return {"type": "inflow", "material": ob.name, "center": typed_value(ob.matrix_world.translation),
            "velocity": typed_value(axis * s.speed), **values(s, props.INFLOW)}


def _collider_static(ob, depsgraph, out_dir: Path, unit: float = 1.0) -> dict:
    c = ob.sph.collider
    co, tris = mesh_arrays(ob, depsgraph, "scaled")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Collider has no faces; particles collide with faces, so add some "
                                   "(or remove its Collider role)")
    name = f"collider_{_safe(ob.name)}.ply"
    if c.motion != 'DEFORMING':
        _write_mesh(out_dir / name, co, tris, unit)
    position, rotation = _transform(ob)
    item = {"type": "mesh", "name": ob.name, "path": name, "position": position, "rotation": rotation,
            **values(c, props.COLLIDER_COMMON), **values(c, props.COLLIDER_MESH)}
    return _clean_item(item)


def _outflow(ob, depsgraph, out_dir: Path, unit: float = 1.0) -> dict:
    """A mesh outflow: the object's evaluated mesh in its scaled local frame, placed where it stands."""
    co, tris = mesh_arrays(ob, depsgraph, "scaled")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Outflow has no faces, so no volume; use a closed mesh")
    name = f"outflow_{_safe(ob.name)}.ply"
    _write_mesh(out_dir / name, co, tris, unit)
    position, rotation = _transform(ob)
    return _clean_item({"type": "mesh", "name": ob.name, "path": name, "position": position, "rotation": rotation})


def _clean_item(item: dict) -> dict:
    return {k: (typed_value(v) if isinstance(v, (float, list)) else v) for k, v in item.items()}


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


def _sample_motion(scene, m: Motion, out_dir: Path, frame_start: int, frame_end: int, fps: float) -> list[str]:
    """Keyframes of moving colliders and inflows, per-frame meshes of deforming colliders; notes.

    A Collider left at Static whose world transform changes over the range (an action, a
    constraint, a parent's animation) would silently ignore its motion: it is exported as Animated,
    with a note. An Inflow or Outflow gets keyframes only when it moves, so a still one exports as
    before.
    """
    declared = [ob for ob in m.colliders if ob.sph.collider.motion != 'STATIC']
    watched = [ob for ob in (*m.colliders, *m.inflows, *m.outflows) if ob not in declared]
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
                _write_mesh(out_dir / it["path"].replace(".ply", f"_{frame:04d}.ply"), co, tris, m.unit)

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


def _moved(matrices: list[np.ndarray]) -> bool:
    return any(not np.allclose(a, matrices[0], rtol=0.0, atol=1e-7) for a in matrices[1:])


def _key(ob, frame: int, previous: list[dict]) -> dict:
    """The pose of ``ob`` at ``frame``: a collider key; an inflow key is made from it (_inflow_keys)."""
    position, rotation = _transform(ob)
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


def export(scene, domain, frames: tuple[int, int] | None = None) -> Exported:
    """Write ``<cache>/input/scene.json`` and its meshes; validate with the core. Raises ExportError.

    The validated Scene is returned for the bake to use as it is (one validation per bake).
    """
    root = cache_dir(domain)
    out_dir = root / INPUT_DIR
    _check_can_create(root, domain)
    notes: list[str] = []
    data, origins = build_scene(scene, domain, out_dir, frames, notes)
    # Validated as JSON gives it back, so the Scene's raw dict equals the file, and equals the
    # cache's stored scene.json when a resume compares the two.
    raw = json.loads(json.dumps(data))
    try:
        validated = parse_scene(raw, out_dir)
    except InputError as exc:
        raise explain(exc, origins) from None
    path = out_dir / SCENE_FILE
    try:
        # Rewritten only when it changed, so an unchanged scene leaves the file (and its mtime) alone.
        current = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, or damaged: write it afresh
        current = None
    if current != raw:
        write_json(path, raw)
    return Exported(path, validated, origins, notes)


def _check_can_create(root: Path, domain) -> None:
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ExportError(f"{domain.name}: Cache Directory",
                          f"{root} cannot be written ({probe} is not a writable folder); choose another folder")


def explain(exc: InputError, origins: dict[str, str], cache_root: Path | None = None,
            domain_name: str = "") -> ExportError:
    """Turn a core InputError (JSON path) into one naming the Blender object and setting."""
    where = exc.where
    if cache_root is not None and where.startswith(str(cache_root)):
        return ExportError(f"{domain_name}: Cache Directory", exc.message)
    parts = re.findall(r"[A-Za-z_$]+(?:\[\d+\])?", where)
    obj = None
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in origins:
            obj = origins[key]
            break
    if obj is None:
        return ExportError(where, exc.message)
    # The last path component names the setting, unless the error is about a whole item.
    last = parts[-1] if parts else ""
    whole_item = re.fullmatch(r"(materials|sources|colliders)\[\d+\]", last) is not None
    in_material = parts[0].startswith("materials[")
    return ExportError(obj if whole_item or not last else f"{obj}: {_label(last, obj if in_material else '')}",
                       exc.message)


def _label(key: str, material_of: str = "") -> str:
    """The UI label of setting ``key``; ``material_of``: the object whose material the error is in.

    Two models may declare the same name with different labels: the object's own model is asked
    first, then every model (material paths) or the other settings first (other paths).
    """
    key = re.sub(r"\[\d+\]$", "", key)
    models = [props.by_name(spec.parameters) for spec in props.SOLVERS.values()]
    others = [props.by_name(props.SURFACE_PARAMETERS), props.by_name(props.SIMULATION_PARAMETERS),
              props.by_name(props.TOP_PARAMETERS), props.by_name(props.COMMON_PARAMETERS),
              props.by_name(props.MESH_PARAMETERS)]
    tables = [*_own_model_table(material_of), *models, *others] if material_of else [*others, *models]
    for table in tables:
        if key in table:
            return table[key].ui_label
    return key


def _own_model_table(name: str) -> list[dict]:
    """The parameters of the model the named object uses, if it still exists (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return []
    ob = bpy.data.objects.get(name)
    model = ob.sph.material.model if ob is not None else ""
    return [props.by_name(props.SOLVERS[model].parameters)] if model in props.SOLVERS else []
