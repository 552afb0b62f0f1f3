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
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ..core.atomic import write_json
from ..core.errors import InputError
from ..core.plyio import write_ply
from ..core.scene import FORMAT, Scene, parse_scene
from . import migrate
from . import properties as props

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
    return sorted((ob for ob in scene.objects if ob.sph.role == role), key=lambda ob: ob.name)


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


def _write_mesh(path: Path, co: np.ndarray, tris: np.ndarray) -> None:
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
    group = props.model_group(m, model)
    preset = props.preset_of(group)
    current = values(group, props.SOLVERS[model].parameters)
    base = {k: typed_value(v) for k, v in props.preset_values(model, preset).items()}
    overrides = {k: v for k, v in current.items() if v != typed_value(base.get(k))}
    return {"name": ob.name, "model": model, "preset": preset, "params": overrides}


# ---- the export ---------------------------------------------------------------------------------

def build_scene(scene, domain, out_dir: Path, frames: tuple[int, int] | None = None) -> tuple[dict, dict]:
    """The scene dict (and origins: JSON path -> object name), writing meshes into ``out_dir``."""
    d = domain.sph.domain
    # Enums saved by position (Collider mode, surface field) in files the load handler missed
    # (the farm command, appended objects); Fluids and Inflows are upgraded in _material.
    for ob in (domain, *members(scene, 'COLLIDER')):
        migrate.upgrade(ob.sph.material)
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
        data["sources"].append(_fluid_source(ob, depsgraph, out_dir, d.particle_spacing))
    for ob in members(scene, 'INFLOW'):
        origins[f"sources[{len(data['sources'])}]"] = ob.name
        data["sources"].append(_inflow_source(ob))
    if not data["sources"]:
        raise ExportError("Scene", "has no Fluid or Inflow object; set an object's Physics > SPH Fluid > Type "
                                   "to Fluid (filled with particles) or Inflow (emits them)")
    colliders = members(scene, 'COLLIDER')
    for ob in colliders:
        origins[f"colliders[{len(data['colliders'])}]"] = ob.name
        data["colliders"].append(_collider_static(ob, depsgraph, out_dir))
    _sample_motion(scene, colliders, data["colliders"][len(data["colliders"]) - len(colliders):],
                   out_dir, frame_start, frame_end)
    for k, ob in enumerate(members(scene, 'OUTFLOW')):  # no key without Outflows: older files export as before
        origins[f"outflows[{k}]"] = ob.name
        data.setdefault("outflows", []).append(_outflow(ob, depsgraph, out_dir))
    return data, origins


def _world_bounds(ob) -> tuple[list[float], list[float]]:
    m = np.array(ob.matrix_world, dtype=np.float64)
    corners = np.array([tuple(c) for c in ob.bound_box], dtype=np.float64) @ m[:3, :3].T + m[:3, 3]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    if np.any(hi - lo <= 0):
        raise ExportError(ob.name, "the Domain has no volume; use a box-shaped mesh that encloses the fluid")
    return typed_value(lo), typed_value(hi)


def _fluid_source(ob, depsgraph, out_dir: Path, spacing: float) -> dict:
    co, tris = mesh_arrays(ob, depsgraph, "world")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Fluid object has no faces, so no volume to fill; use a closed mesh")
    volume = abs(signed_volume(co, tris))
    if volume < 0.5 * spacing ** 3:
        raise ExportError(ob.name, f"the Fluid object encloses no volume ({volume:.3g} m^3: it is flat or open); "
                                   "use a closed mesh, or give it thickness with a Solidify modifier")
    name = f"fluid_{_safe(ob.name)}.ply"
    _write_mesh(out_dir / name, co, tris)
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


def _collider_static(ob, depsgraph, out_dir: Path) -> dict:
    c = ob.sph.collider
    co, tris = mesh_arrays(ob, depsgraph, "scaled")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Collider has no faces; particles collide with faces, so add some "
                                   "(or remove its Collider role)")
    name = f"collider_{_safe(ob.name)}.ply"
    if c.motion != 'DEFORMING':
        _write_mesh(out_dir / name, co, tris)
    position, rotation = _transform(ob)
    item = {"type": "mesh", "name": ob.name, "path": name, "position": position, "rotation": rotation,
            **values(c, props.COLLIDER_COMMON), **values(c, props.COLLIDER_MESH)}
    return _clean_item(item)


def _outflow(ob, depsgraph, out_dir: Path) -> dict:
    """A mesh outflow: the object's evaluated mesh in its scaled local frame, placed where it stands."""
    co, tris = mesh_arrays(ob, depsgraph, "scaled")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Outflow has no faces, so no volume; use a closed mesh")
    name = f"outflow_{_safe(ob.name)}.ply"
    _write_mesh(out_dir / name, co, tris)
    position, rotation = _transform(ob)
    return _clean_item({"type": "mesh", "name": ob.name, "path": name, "position": position, "rotation": rotation})


def _clean_item(item: dict) -> dict:
    return {k: (typed_value(v) if isinstance(v, (float, list)) else v) for k, v in item.items()}


def _sample_motion(scene, colliders, items, out_dir: Path, frame_start: int, frame_end: int) -> None:
    """Keyframes of animated colliders and per-frame meshes of deforming ones, sampled every frame."""
    moving = [(ob, it) for ob, it in zip(colliders, items) if ob.sph.collider.motion != 'STATIC']
    if not moving:
        return
    keep = scene.frame_current, scene.frame_subframe
    keys = {ob.name: [] for ob, _ in moving}
    try:
        for frame in range(frame_start, frame_end + 1):
            scene.frame_set(frame)
            depsgraph = bpy.context.evaluated_depsgraph_get()
            for ob, it in moving:
                position, rotation = _transform(ob)
                prev = keys[ob.name][-1]["rotation"] if keys[ob.name] else None
                if prev is not None:
                    rotation = _continuous_euler(ob, prev)
                keys[ob.name].append({"frame": frame, "position": typed_value(position),
                                      "rotation": typed_value(rotation)})
                if ob.sph.collider.motion == 'DEFORMING':
                    co, tris = mesh_arrays(ob, depsgraph, "scaled")
                    if len(tris) == 0:
                        raise ExportError(ob.name, f"the Collider has no faces at frame {frame}")
                    _write_mesh(out_dir / it["path"].replace(".ply", f"_{frame:04d}.ply"), co, tris)
    finally:
        scene.frame_set(keep[0], subframe=keep[1])
    for ob, it in moving:
        it["keyframes"] = keys[ob.name]
        it["position"], it["rotation"] = keys[ob.name][0]["position"], keys[ob.name][0]["rotation"]
        if ob.sph.collider.motion == 'DEFORMING':
            it["path"] = it["path"].replace(".ply", "_{frame:04d}.ply")
            it["deforming"] = True


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
    data, origins = build_scene(scene, domain, out_dir, frames)
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
    return Exported(path, validated, origins)


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
