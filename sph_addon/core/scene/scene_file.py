"""The scene file (``sph_addon.scene/2``): loading, validation, resolution.

Every field is declared (``params.Parameter``) here or in the registries of
models, sources and colliders; ``docs/scene_format.md`` is generated from the
same declarations (``python -m sph_addon schema``). Validation happens before
any work: the first bad field raises :class:`InputError` with its JSON path,
e.g. ``materials[1].params.viscosity: must be at least 0, got -3``.

Format 2 differs from format 1 only in the ``viscoelastic`` model's parameters:
``stiffness``, ``repulsion_factor`` and ``rest_density`` are gone (Clavet's
constants are derived from ``density_error``, the spacing and
``surface_tension``; see ``numerics/lattice.py``). Format-1 files are still
read; one that overrides a removed parameter is refused at that field's path
with what replaced it (the model's ``removed_parameters``), never run with other physics.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cache.jsonfile import read_json
from ..colliders import COLLIDERS, COMMON_PARAMETERS, parse_placed
from ..errors import InputError
from ..models import SOLVERS
from ..numerics import config
from ..passes.heat_parameters import SIMULATION_PARAMETERS as HEAT_SIMULATION_PARAMETERS
from ..passes.phase import check_phases, parse_melt_keys
from ..sources.emission import SOURCES, check_source_files, estimate_count, parse_inflow_keys
from ..sources.outflows import parse_outflow
from ..world.diagnostics import parse_diagnostics
from ..world.state import bytes_per_particle
from .params import Parameter, check_name, resolve, typed

FORMAT = "sph_addon.scene/2"
# Formats read: every older one still accepted (written files are always FORMAT).
READABLE_FORMATS = ("sph_addon.scene/1", FORMAT)

TOP_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("name", "scene", description="A name for messages and the cache manifest."),
    Parameter("particle_spacing", 0.05, "m", 1e-4, 10.0, label="Particle Spacing",
              description="Distance between particles of the initial lattice; sets the resolution."),
    Parameter("frame_start", 1, "", -100000, 1000000, description="First frame (Blender's numbering)."),
    Parameter("frame_end", 60, "", -100000, 1000000, description="Last frame, included."),
    Parameter("fps", 30.0, "1/s", 1e-3, 10000.0, description="Frames per second."),
)

SIMULATION_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("gravity", (0.0, 0.0, -9.81), "m/s^2", description="Gravity acceleration (Z up)."),
    Parameter("time_scale", 1.0, "", 1e-3, 1000.0, label="Time Scale",
              description="Seconds of physics per second of the timeline: each frame advances time_scale / fps "
                          "seconds (0.5: slow motion at half speed); rates, speeds and ages stay in physical "
                          "seconds, frame numbers (inflow ranges, collider keyframes) stay the timeline's."),
    Parameter("substeps", 0, "", 0, 10000, label="Substeps",
              description="Steps per frame; 0 chooses them each frame from the fastest particle or moving "
                          "collider surface, rotation included (CFL)."),
    Parameter("max_substeps", 64, "", 1, 10000, description="Upper bound of automatic substeps."),
    Parameter("min_substeps", 2, "", 1, 10000, description="Lower bound of automatic substeps."),
    Parameter("cfl", 1.0, "", 0.01, 10.0, label="CFL Number",
              description="Largest distance a particle or a moving collider's surface may travel in one "
                          "substep, in particle spacings."),
    Parameter("time_steps", "individual", choices=("individual", "global"), label="Time Steps",
              description="For the sph model (leapfrog): individual gives each particle the longest power-of-two "
                          "share of the substep its own stability allows (Desbrun & Cani 1996, section 5.2); "
                          "global gives every particle the shortest (the same result at a higher cost)."),
    Parameter("support_factor", 2.0, "", 1.2, 5.0, label="Interaction Radius",
              description="h / particle spacing: the interaction radius h of Clavet's kernels."),
    Parameter("max_speed", 100.0, "m/s", 1e-3, 1e6,
              description="A particle faster than this means the simulation blew up: the bake stops (exit 3)."),
    Parameter("memory_budget_mb", config.DEFAULT_MEMORY_BUDGET / 2**20, "MiB", 1.0, 1e7, label="Memory Budget (MiB)",
              description="The bake is refused before it starts if the estimated memory exceeds this."),
    Parameter("checkpoint_every", 1, "", 1, 100000,
              description="Write a resumable checkpoint every N frames."),
    *HEAT_SIMULATION_PARAMETERS,
)

DOMAIN_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("min", (-1e9, -1e9, -1e9), "m", description="Lower corner; particles below it are removed."),
    Parameter("max", (1e9, 1e9, 1e9), "m", description="Upper corner; particles beyond it are removed."),
)

MATERIAL_KEYS = ("name", "model", "preset", "params")
SCENE_KEYS = {p.name for p in TOP_PARAMETERS} | {"format", "simulation", "materials", "sources", "colliders",
                                                  "domain", "surface", "diagnostics", "outflows",
                                                  "whitewater"}
# Bytes per particle beyond the base arrays: neighbour rows (~40 int32), solver scratch,
# springs (~24 slots of id + rest length) and the cache writer's float32 copy.
_EXTRA_BYTES_PER_PARTICLE = 40 * 4 + 12 * 8 + 24 * 16 + 32

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Material:
    """A material of the scene: ``params`` is an instance of its model's generated ``Params``."""

    name: str
    model: str
    preset: str
    params: Any


@dataclass(frozen=True)
class Scene:
    """A validated scene; every value checked and defaulted."""

    name: str
    particle_spacing: float
    frame_start: int
    frame_end: int
    fps: float
    simulation: dict[str, Any]
    materials: tuple[Material, ...]
    sources: tuple[tuple[str, dict[str, Any]], ...]
    colliders: tuple[tuple[str, dict[str, Any]], ...]
    domain: dict[str, Any] | None
    surface: dict[str, Any]
    base_dir: Path = field(default=Path("."))
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    diagnostics: dict[str, Any] = field(default_factory=dict)  # {"front": {...}} if asked (diagnostics.py)
    outflows: tuple[tuple[str, dict[str, Any]], ...] = ()  # volumes that remove particles (outflows.py)

    @property
    def h(self) -> float:
        """Interaction radius h, m."""
        return self.simulation["support_factor"] * self.particle_spacing

    @property
    def frame_time(self) -> float:
        """Physical time one frame advances, s: time_scale / fps."""
        return self.simulation["time_scale"] / self.fps

    @property
    def physics_fps(self) -> float:
        """Frames per physical second, fps / time_scale (fps itself at time_scale 1, bit for bit)."""
        return self.fps / self.simulation["time_scale"]

    def material_index(self, name: str) -> int:
        for k, m in enumerate(self.materials):
            if m.name == name:
                return k
        raise KeyError(name)

    def estimate_particles(self) -> int:
        duration = (self.frame_end - self.frame_start + 1) / self.physics_fps
        return sum(estimate_count(kind, p, self.particle_spacing, duration, self.base_dir, f"sources[{k}]")
                   for k, (kind, p) in enumerate(self.sources))

    def estimate_bytes(self) -> int:
        return self.estimate_particles() * (bytes_per_particle() + _EXTRA_BYTES_PER_PARTICLE)


def load_scene(path: str | Path) -> Scene:
    """Read and validate a scene file; raise InputError naming the file or field."""
    path = Path(path)
    return parse_scene(read_json(path, "scene file"), path.parent.resolve())


def parse_scene(data: Any, base_dir: Path = Path(".")) -> Scene:
    """Validate a scene given as parsed JSON."""
    if not isinstance(data, dict):
        raise InputError("$", "the scene must be a JSON object")
    fmt = data.get("format")
    if fmt not in READABLE_FORMATS:
        older = ", ".join(map(repr, READABLE_FORMATS[:-1]))
        raise InputError("format", f"expected {FORMAT!r} (or the older {older}), got {fmt!r}")
    for key in data:
        if key not in SCENE_KEYS:
            raise InputError(key, f"unknown field; known fields: {', '.join(sorted(SCENE_KEYS))}")
    top = resolve(TOP_PARAMETERS, {k: data[k] for k in data if k in {p.name for p in TOP_PARAMETERS}}, "$")
    top = {k: v for k, v in top.items()}
    if "particle_spacing" not in data:
        raise InputError("particle_spacing", "required (metres between particles)")
    if top["frame_end"] < top["frame_start"]:
        raise InputError("frame_end", f"must not be before frame_start ({top['frame_start']})")
    sim = resolve(SIMULATION_PARAMETERS, data.get("simulation"), "simulation")
    if sim["min_substeps"] > sim["max_substeps"]:
        raise InputError("simulation.min_substeps", "must not exceed simulation.max_substeps")

    materials = _materials(data.get("materials"))
    names = [m.name for m in materials]
    base_dir = Path(base_dir)
    sources = _list(data, "sources", lambda item, where: _source(item, where, names, base_dir))
    if not sources:
        raise InputError("sources", "the scene has no particle source; add a box, sphere, mesh or inflow")
    for k, (kind, p) in enumerate(sources):
        if kind == "inflow" and SOLVERS[materials[names.index(p["material"])].model].keeps_shape:
            raise InputError(f"sources[{k}].material", f"{p['material']!r} is an elastic solid, which keeps the "
                             "shape it was filled in; an inflow emits a stream: use a box, sphere or mesh source")
    _check_bound_meshes(sources, materials)
    check_phases(materials, [SOLVERS[m.model].density_of(m.params) for m in materials], sources)
    frame_range = (top["frame_start"], top["frame_end"])
    colliders = _list(data, "colliders", lambda item, where: _collider(item, where, base_dir, frame_range))
    outflows = _list(data, "outflows", lambda item, where: parse_outflow(item, where, base_dir, frame_range))
    domain = None
    if data.get("domain") is not None:
        domain = resolve(DOMAIN_PARAMETERS, data["domain"], "domain")
        if any(a >= b for a, b in zip(domain["min"], domain["max"])):
            raise InputError("domain", "min must be below max on every axis")
    surface = data.get("surface") or {}
    if not isinstance(surface, dict):
        raise InputError("surface", "expected an object")
    from ..surface.settings import SURFACE_PARAMETERS, surface_settings

    surface_settings(data)  # validates the section (JSON paths in errors) before any work
    surface = resolve(SURFACE_PARAMETERS, surface, "surface")
    from ..whitewater.settings import resolve_values

    resolve_values(data.get("whitewater"))  # validated before any work; the whitewater stage reads it
    scene = Scene(name=top["name"], particle_spacing=top["particle_spacing"], frame_start=top["frame_start"],
                  frame_end=top["frame_end"], fps=top["fps"], simulation=sim, materials=tuple(materials),
                  sources=tuple(sources), colliders=tuple(colliders), domain=domain, surface=surface,
                  base_dir=base_dir, raw=data, diagnostics=parse_diagnostics(data.get("diagnostics")),
                  outflows=tuple(outflows))
    _check_memory(scene)
    _check_body_sizes(scene)
    return scene


def _list(data: dict, key: str, parse) -> list:
    items = data.get(key, [])
    if not isinstance(items, list):
        raise InputError(key, "expected a list")
    return [parse(item, f"{key}[{k}]") for k, item in enumerate(items)]


def _materials(items: Any) -> list[Material]:
    if not isinstance(items, list) or not items:
        raise InputError("materials", "expected a non-empty list of materials")
    if len(items) > 255:
        raise InputError("materials", "at most 255 materials")
    out: list[Material] = []
    for k, item in enumerate(items):
        where = f"materials[{k}]"
        if not isinstance(item, dict):
            raise InputError(where, "expected an object")
        for key in item:
            if key not in MATERIAL_KEYS:
                raise InputError(f"{where}.{key}", f"unknown field; known fields: {', '.join(MATERIAL_KEYS)}")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}.name", "required: a non-empty string")
        if name in [m.name for m in out]:
            raise InputError(f"{where}.name", f"duplicate material name {name!r}")
        model = check_name(item.get("model", "viscoelastic"), SOLVERS, f"{where}.model", "model")
        spec = SOLVERS[model]
        preset = item.get("preset")
        preset = "" if preset is None else preset
        overrides = item.get("params")
        if isinstance(preset, str) and preset in spec.moved_presets and preset not in spec.presets:
            model, overrides = _moved_preset(spec, preset, overrides, where)
            spec = SOLVERS[model]
        if preset != "":
            check_name(preset, sorted(spec.presets), f"{where}.preset", "preset")
        _refuse_removed(spec, model, overrides, f"{where}.params")
        base = {p.name: p.default for p in spec.parameters}
        base.update(spec.presets.get(preset, {}))
        params = typed(spec.Params, resolve(spec.parameters, overrides, f"{where}.params", base=base))
        out.append(Material(name, model, preset, params))
    return out


def _moved_preset(spec, preset: str, overrides: Any, where: str) -> tuple[str, Any]:
    """The model that has ``preset`` now (``MaterialModel.moved_presets``) and the overrides it declares;
    the others (the old model's method settings: springs, viscosity, ...) are dropped with a warning."""
    model = spec.moved_presets[preset]
    declared = {p.name for p in SOLVERS[model].parameters}
    if not isinstance(overrides, dict):
        return model, overrides
    dropped = sorted(set(overrides) - declared)
    if dropped:
        log.warning("%s: preset %r is now a material of the %r model, which has no %s; they are ignored", where,
                    preset, model, ", ".join(dropped))
    return model, {k: v for k, v in overrides.items() if k in declared}


def _refuse_removed(spec, model: str, params: Any, where: str) -> None:
    """Refuse an override of a parameter an older format had (the model's ``removed_parameters``) with how
    to convert it."""
    removed = SOLVERS[model].removed_parameters if model in SOLVERS else {}
    if not isinstance(params, dict):
        return  # resolve() says what is wrong
    declared = {p.name for p in spec.parameters}
    for key in params:
        if key in removed and key not in declared:
            raise InputError(f"{where}.{key}", removed[key])


def _source(item: Any, where: str, material_names: list[str], base_dir: Path) -> tuple[str, dict]:
    if not isinstance(item, dict):
        raise InputError(where, "expected an object")
    kind = check_name(item.get("type"), SOURCES, f"{where}.type", "source type")
    # An inflow's keyframes are a list of objects, checked apart from its plain fields.
    lists = ("keyframes",) if kind == "inflow" else ("melt_keyframes",)
    own = {k: v for k, v in item.items() if k != "type" and k not in lists}
    p = resolve(SOURCES[kind], own, where)
    if p["material"] not in material_names:
        raise InputError(f"{where}.material",
                         f"unknown material {p['material']!r}; the scene defines {', '.join(material_names)}")
    if kind == "box" and any(a >= b for a, b in zip(p["min"], p["max"])):
        raise InputError(f"{where}.max", "must be above min on every axis")
    if kind == "inflow":
        if math.hypot(*p["velocity"]) == 0:
            raise InputError(f"{where}.velocity",
                             "an inflow needs a non-zero velocity (it sets the direction)")
        if p["shape"] == "rectangle" and (p["size"][0] <= 0 or p["size"][1] <= 0):
            raise InputError(f"{where}.size", "width and height must be positive")
        p["keyframes"] = parse_inflow_keys(item.get("keyframes", []), p, where)
    else:
        p["melt_keyframes"] = parse_melt_keys(item.get("melt_keyframes", []), where)
    check_source_files(kind, p, base_dir, where)
    return kind, p


def _check_bound_meshes(sources: list[tuple[str, dict]], materials: list[Material]) -> None:
    """A mesh is carried by its particles' rotations (``bound_mesh``): only the elastic model keeps them."""
    models = {m.name: m.model for m in materials}
    for k, (kind, p) in enumerate(sources):
        if kind == "mesh" and p["bind_mesh"] and models[p["material"]] != "elastic":
            raise InputError(f"sources[{k}].bind_mesh",
                             f"only a soft solid carries its mesh, but material {p['material']!r} has model "
                             f"{models[p['material']]!r}; give the source a material with model \"elastic\" "
                             "(e.g. preset \"jelly\"), or set bind_mesh to false")


def _collider(item: Any, where: str, base_dir: Path, frame_range: tuple[int, int]) -> tuple[str, dict]:
    kind, ct, p = parse_placed(item, where, COLLIDERS, "collider type", COMMON_PARAMETERS)
    if ct.check is not None:
        # Files referenced by the collider (mesh paths, one per frame when deforming) must
        # exist and be readable now; their content is checked when the shape is built.
        ct.check(p, item, where, base_dir, frame_range)
    if p["dynamic"]:
        _check_dynamic(kind, ct, p, where, frame_range[0])
    return kind, p


def _check_dynamic(kind: str, ct, p: dict, where: str, frame_start: float) -> None:
    """A dynamic collider is a closed solid that nothing but the fluid and contacts move (and its keyframes,
    until its ``animated_until`` frame)."""
    if kind not in ("box", "sphere", "mesh") or (kind == "mesh" and (p["mode"] != "solid" or p["flip_normals"])):
        raise InputError(f"{where}.dynamic", f"a {kind if kind != 'mesh' else 'shell or flipped mesh'} has no "
                                             "volume to weigh; a dynamic collider is a box, a sphere or a closed "
                                             "mesh with mode \"solid\" and flip_normals false")
    if ct.deforming(p):
        raise InputError(f"{where}.dynamic", "a dynamic collider is moved by the fluid and its contacts; it "
                                             "cannot change shape: give it one mesh, or set dynamic to false")
    if p["keyframes"] and p["animated_until"] <= frame_start:
        raise InputError(f"{where}.dynamic", "a dynamic collider is moved by the fluid and its contacts; remove "
                                             "its keyframes, or set animated_until to the frame its keyframes "
                                             "hand it over to the fluid")


# Bytes per point of the grids a dynamic body is sampled on every half spacing (its surface samples, a
# point and its distance; ``colliders.rigid_body.surface_samples``), with the temporaries that build them.
BODY_BYTES_PER_POINT = 64


def _check_body_sizes(scene: Scene) -> None:
    """A dynamic box or sphere is sampled on a grid of half a particle spacing over its bounds: one a
    kilometre wide at 2 cm asked for hundreds of TiB (a traceback); refused against the memory budget."""
    budget = scene.simulation["memory_budget_mb"] * 2**20
    for k, (kind, p) in enumerate(scene.colliders):
        if not p["dynamic"] or kind not in ("box", "sphere"):
            continue
        extent = [float(a) for a in p["size"]] if kind == "box" else [2.0 * float(p["radius"])] * 3
        points = math.prod(math.ceil(2.0 * a / scene.particle_spacing) + 4.0 for a in extent)
        if points * BODY_BYTES_PER_POINT > budget:
            field = "size" if kind == "box" else "radius"
            raise InputError(f"colliders[{k}].{field}",
                             f"a dynamic {kind} this large is sampled at about {points:,.0f} points every half "
                             f"particle spacing, about {points * BODY_BYTES_PER_POINT / 2**20:,.0f} MiB, over "
                             f"the memory budget of {budget / 2**20:,.0f} MiB; make it smaller or static, or "
                             "increase particle_spacing or simulation.memory_budget_mb")


def _check_memory(scene: Scene) -> None:
    budget = scene.simulation["memory_budget_mb"] * 2**20
    need = scene.estimate_bytes()
    if need > budget:
        raise InputError(
            "particle_spacing",
            f"about {scene.estimate_particles():,} particles would need about {need / 2**20:,.0f} MiB, over the "
            f"memory budget of {budget / 2**20:,.0f} MiB; increase particle_spacing or "
            f"simulation.memory_budget_mb")
