"""Blender scene -> the core's scene file and meshes (DESIGN.md section 2).

Everything the core needs is written under ``<cache>/input/``: ``scene.json``
and one PLY per Fluid and Collider (per frame for deforming colliders). This
module finds the objects and assembles the file; the parts live beside it:
``export_values`` (properties as the file stores them, in metres, materials),
``export_meshes`` (evaluated meshes as arrays and PLY files), ``export_motion``
(what moves over the frames: keyframes, deforming meshes) and ``export_errors``
(messages naming the object and the setting).

Errors name the Blender object and the setting, so that a message from the
core's validation (``materials[1].params.kinematic_viscosity: must be at least 0``)
reaches the artist as ``Honey: Viscosity: must be at least 0``. Main thread only.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

from ...core.cache.atomic import write_json
from ...core.errors import InputError
from ...core.scene.scene_file import FORMAT, Scene, parse_scene
from .. import compat, dynamic_colliders, migrate
from .. import properties as props
from .errors import ExportError, explain
from .meshes import base_mesh_world, mesh_arrays, safe_name, signed_volume, transform, write_mesh
from .motion import Motion, sample_motion
from .values import material_item, spacing, to_metres, typed_value, unit_scale, values

INPUT_DIR = "input"
SCENE_FILE = "scene.json"


@dataclass
class Exported:
    """A written and validated scene: the file, the core's Scene, and which JSON paths came from which objects."""

    scene_path: Path
    scene: Scene
    origins: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the export decided for the artist (see sample_motion)


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

# ---- values from properties ---------------------------------------------------------------------

# ---- the export ---------------------------------------------------------------------------------

def build_scene(scene, domain, out_dir: Path, frames: tuple[int, int] | None = None,
                notes: list[str] | None = None) -> tuple[dict, dict]:
    """The scene dict (and origins: JSON path -> object name), writing meshes into ``out_dir``.

    ``notes`` receives one sentence per decision the artist did not ask for (a Static collider
    found animated and exported as Animated).
    """
    d = domain.sph.domain
    _upgrade(scene, domain)
    unit = unit_scale(scene, domain)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    frame_start, frame_end = frames if frames is not None else (d.frame_start, d.frame_end)
    if frame_end < frame_start:
        raise ExportError(f"{domain.name}: Frame End", f"{frame_end} is before Frame Start {frame_start}")
    data = {
        "format": FORMAT,
        "name": domain.name,
        "particle_spacing": spacing(domain),
        "frame_start": int(frame_start),
        "frame_end": int(frame_end),
        "fps": typed_value(scene.render.fps / scene.render.fps_base),
        "simulation": _simulation(scene, d),
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
    # Solids last: the material numbers of Fluids and Inflows stay what they were before Solids existed.
    solids = members(scene, 'SOLID')
    emitters = members(scene, 'FLUID') + members(scene, 'INFLOW') + solids
    for ob in emitters + _phase_targets(scene, emitters):
        origins[f"materials[{len(data['materials'])}]"] = ob.name
        data["materials"].append(material_item(ob))
    for ob in members(scene, 'FLUID'):
        origins[f"sources[{len(data['sources'])}]"] = ob.name
        data["sources"].append(_fluid_source(ob, depsgraph, out_dir, d.particle_spacing, unit))
    inflows = members(scene, 'INFLOW')
    first_inflow = len(data["sources"])
    for ob in inflows:
        origins[f"sources[{len(data['sources'])}]"] = ob.name
        data["sources"].append(_inflow_source(ob))
    for ob in solids:
        origins[f"sources[{len(data['sources'])}]"] = ob.name
        data["sources"].append({**_solid_source(ob, out_dir, d.particle_spacing, unit),
                                **_melt_keys(ob, frame_start, frame_end)})
    if not data["sources"]:
        raise ExportError("Scene", "has no enabled Fluid, Inflow or Solid object; set an object's Physics > SPH "
                                   "Fluid > Type to Fluid (filled with particles), Inflow (emits them) or Solid, "
                                   "or tick its Enabled box")
    colliders = members(scene, 'COLLIDER')
    for ob in colliders:
        origins[f"colliders[{len(data['colliders'])}]"] = ob.name
        data["colliders"].append(_collider_static(ob, depsgraph, out_dir, unit, (frame_start, frame_end)))
    outflows = members(scene, 'OUTFLOW')
    for k, ob in enumerate(outflows):  # no key without Outflows: older files export as before
        origins[f"outflows[{k}]"] = ob.name
        data.setdefault("outflows", []).append(_outflow(ob, depsgraph, out_dir, unit))
    motion = Motion(colliders, data["colliders"][len(data["colliders"]) - len(colliders):], inflows,
                    data["sources"][first_inflow:first_inflow + len(inflows)],
                    [(ob, it) for ob, it in zip(members(scene, 'FLUID'), data["sources"])
                     if ob.sph.fluid.inherit_velocity != 0.0], unit, outflows, data.get("outflows", []))
    # Velocities the motion gives (inherit velocity) are per second of physics: fps / time scale.
    found = sample_motion(scene, motion, out_dir, frame_start, frame_end,
                          data["fps"] / data["simulation"].get("time_scale", 1.0))
    if notes is not None:
        notes += found
    if unit != 1.0:
        to_metres(data, unit)
    return data, origins


def _upgrade(scene, domain) -> None:
    """Bring the Domain and its Colliders up to date with this version before they are read."""
    d = domain.sph.domain
    # Enums saved by position (Collider mode, surface field) in files the load handler missed
    # (the farm command, appended objects); Fluids and Inflows are upgraded in material_item.
    for ob in (domain, *members(scene, 'COLLIDER')):
        migrate.upgrade(ob.sph.material)
    migrate.upgrade_unit_scale(domain)
    migrate.upgrade_surface_normals(domain)
    if domain.library is None:
        # Stored explicitly, so a file saved from now on is never taken for one from before the setting
        # (or, for normals, from before its default changed).
        d.use_unit_scale = d.use_unit_scale
        d.surface.normals = d.surface.normals


# Domain simulation settings newer than the first scene files (left out of the file at their defaults).
_ADDED_SIMULATION = ("time_scale", "time_steps")
_SIMULATION_DEFAULTS = {p.name: p.default for p in props.DOMAIN_SIMULATION}


def _simulation(scene, d) -> dict:
    """The scene file's ``simulation`` section from the Domain's settings and the scene's gravity."""
    gravity = tuple(scene.gravity) if d.use_scene_gravity else tuple(d.gravity)
    if d.use_scene_gravity and not scene.use_gravity:
        gravity = (0.0, 0.0, 0.0)
    simulation = values(d, props.DOMAIN_SIMULATION)
    simulation["gravity"] = typed_value(gravity)
    # Controls added since scene files were first written are left out at their defaults, so a file
    # that does not use them exports the scene older versions wrote (and a bake they began resumes).
    for name in _ADDED_SIMULATION:
        if simulation[name] == _SIMULATION_DEFAULTS[name]:
            del simulation[name]
    return simulation


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
    name = f"fluid_{safe_name(ob.name)}.ply"
    write_mesh(out_dir / name, co, tris, unit)
    return {"type": "mesh", "material": ob.name, "path": name, **values(ob.sph.fluid, props.FLUID_SOURCE),
            "velocity": typed_value(ob.sph.material.initial_velocity), **_spin(ob)}


def _spin(ob) -> dict:
    """A Fluid's or Solid's Angular Velocity as its source's ``angular_velocity``, only when set: files saved
    before it export as they did."""
    spin = typed_value(ob.sph.material.initial_angular_velocity)
    return {"angular_velocity": spin} if any(spin) else {}


def _phase_targets(scene, emitters: list) -> list:
    """The objects a material melts or solidifies into (Melts Into, Solidifies Into: an object's name) that emit
    nothing themselves, a Fluid with its Enabled box off say: their materials are exported without a source, so
    a jelly can melt into a liquid that no object fills."""
    names = {ob.name for ob in emitters}
    found = []
    for ob in emitters:
        m = ob.sph.material
        group = props.model_group(m, m.model) if m.model in props.SOLVERS else None
        for key in ("melts_into", "solidifies_into"):
            target = scene.objects.get(str(getattr(group, key, "") or ""))
            if target is not None and target.name not in names and target.sph.role in props.MATERIAL_ROLES:
                names.add(target.name)
                found.append(target)
    return sorted(found, key=lambda ob: ob.name)


def _melt_keys(ob, frame_start: int, frame_end: int) -> dict:
    """A Solid's Melt Amount as the source's ``melt_keyframes``: keyed, its F-curve at every frame of the
    range (the core interpolates linearly between them), the frames where the amount does not change
    dropped; not keyed, one key when it is above 0; nothing at 0 (files saved before it export as they did)."""
    fcurves = compat.action_fcurves(ob)
    fc = fcurves.find("sph.fluid.melt_amount") if fcurves is not None else None
    if fc is None:
        amount = float(ob.sph.fluid.melt_amount)
        return {"melt_keyframes": [{"frame": frame_start, "amount": amount}]} if amount > 0.0 else {}
    amounts = [min(max(float(fc.evaluate(f)), 0.0), 1.0) for f in range(frame_start, frame_end + 1)]
    keys = [{"frame": frame_start + k, "amount": a} for k, a in enumerate(amounts)
            if k in (0, len(amounts) - 1) or not amounts[k - 1] == a == amounts[k + 1]]
    return {"melt_keyframes": keys}


def _solid_source(ob, out_dir: Path, spacing: float, unit: float = 1.0) -> dict:
    """A Solid: its own mesh (before modifiers, world space) filled with particles that carry it (bind_mesh)."""
    model = ob.sph.material.model
    if model != props.SOLID_MODEL:
        # Said here in the panel's words: the core's refusal of bind_mesh speaks of the scene file.
        solid = props.model_label(props.SOLID_MODEL)
        raise ExportError(f"{ob.name}: Model",
                          f"only particles of the {solid} model carry a Solid's mesh ({props.model_label(model)} "
                          f"particles do not); choose {solid}, or make the object a Fluid (a material that splits "
                          "and merges, like the SPH model's putty or clay, is a Fluid)")
    co, tris = base_mesh_world(ob)
    volume = abs(signed_volume(co, tris)) if len(tris) else 0.0
    if volume < 0.5 * spacing ** 3:
        raise ExportError(ob.name, f"the Solid's mesh encloses no volume ({volume:.3g} m^3: it is flat or open; "
                                   "modifiers do not count, the particles fill the mesh itself); use a closed mesh")
    name = f"solid_{safe_name(ob.name)}.ply"
    write_mesh(out_dir / name, co, tris, unit)
    return {"type": "mesh", "material": ob.name, "path": name, **values(ob.sph.fluid, props.FLUID_SOURCE),
            "velocity": typed_value(ob.sph.material.initial_velocity), **_spin(ob), "bind_mesh": True}


def _inflow_source(ob) -> dict:
    s = ob.sph.inflow
    if s.speed <= 0:
        raise ExportError(f"{ob.name}: Speed", "must be above 0 for the Inflow to emit")
    axis = np.array(ob.matrix_world.to_3x3(), dtype=np.float64) @ np.array([0.0, 0.0, -1.0])
    axis /= np.linalg.norm(axis)
    return {"type": "inflow", "material": ob.name, "center": typed_value(ob.matrix_world.translation),
            "velocity": typed_value(axis * s.speed), **values(s, props.INFLOW)}


def _collider_static(ob, depsgraph, out_dir: Path, unit: float, frames: tuple[int, int]) -> dict:
    c = ob.sph.collider
    co, tris = mesh_arrays(ob, depsgraph, "scaled")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Collider has no faces; particles collide with faces, so add some "
                                   "(or remove its Collider role)")
    name = f"collider_{safe_name(ob.name)}.ply"
    if c.motion != 'DEFORMING':
        write_mesh(out_dir / name, co, tris, unit)
    dynamic = c.motion == 'DYNAMIC'
    if dynamic:
        dynamic_colliders.check(ob, frames[0])
    # A Dynamic collider keyed by a previous bake starts where it stood before those keys.
    position, rotation = dynamic_colliders.rest_transform(ob) if dynamic else transform(ob)
    item = {"type": "mesh", "name": ob.name, "path": name, "position": position, "rotation": rotation,
            **values(c, props.COLLIDER_COMMON), **values(c, props.COLLIDER_MESH)}
    if dynamic:
        item.update(dynamic=True, **values(c, props.COLLIDER_DYNAMIC))
        if dynamic_colliders.scripted(ob, frames[0]):
            # Its own animation until the frame it is handed over (the last key at or after it).
            last = min(frames[1], math.ceil(c.animated_until))
            keys = dynamic_colliders.artist_keys(ob, range(frames[0], last + 1))
            item["keyframes"] = [{"frame": f, "position": typed_value(p), "rotation": typed_value(r)}
                                 for f, p, r in keys]
            item["position"], item["rotation"] = item["keyframes"][0]["position"], item["keyframes"][0]["rotation"]
    return _clean_item(item)


def _outflow(ob, depsgraph, out_dir: Path, unit: float = 1.0) -> dict:
    """A mesh outflow: the object's evaluated mesh in its scaled local frame, placed where it stands."""
    co, tris = mesh_arrays(ob, depsgraph, "scaled")
    if len(tris) == 0:
        raise ExportError(ob.name, "the Outflow has no faces, so no volume; use a closed mesh")
    name = f"outflow_{safe_name(ob.name)}.ply"
    write_mesh(out_dir / name, co, tris, unit)
    position, rotation = transform(ob)
    return _clean_item({"type": "mesh", "name": ob.name, "path": name, "position": position, "rotation": rotation})


def _clean_item(item: dict) -> dict:
    return {k: (typed_value(v) if isinstance(v, (float, list)) and k != "keyframes" else v) for k, v in item.items()}


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


