"""Every check a bake makes before it simulates, without simulating: what ``validate`` runs.

:func:`check_bake` is that one function: ``validate`` and ``bake.prepare`` (command line and
Blender operators alike) call it with the same arguments, ``--frames`` included, so ``validate``
saying "valid" means the bake starts. It reads and validates the scene (``scene.parse_scene``,
each field on its own), then :func:`preflight` checks what needs the files and the fields together:

* every referenced mesh is read (each frame's file of a deforming collider)
  and must have faces and finite, bounded coordinates (``mesh_io.check_coordinates``);
* the distance grid of every mesh collider is sized from its bounding box, clipped to the domain
  as the collider moves over the bake (``colliders.reach``, ``colliders.sdf_clip``);
* the particles' and the grids' memory must fit ``simulation.memory_budget_mb``;
* no source may give its particles a speed above ``simulation.max_speed``, nor one so fast that
  the substeps allowed let them cross more than four support radii in one (the bake would stop
  as a blow-up, exit 3, after writing its cache): a volume's velocity, and every speed an inflow
  emits at over its keyframes;
* a particle falling from rest for one frame must keep the CFL rule within the
  substeps allowed (``fps`` of 0.001 makes a frame last 1000 s), and so must each material's
  stable step (``MaterialModel.max_dt``: a strong surface tension on a light liquid);
* the total work, particles × substeps × frames, must stay under
  :data:`MAX_WORK` (a bake that would take months is refused);
* every collider and outflow is built at the first frame as the bake builds it, through the
  bake's SDF cache (the bake reuses the fields): a solid mesh that encloses nothing, as a
  collider or an outflow, is refused here;
* no collider's solid may hold most of the particles the volume sources create
  (a container mesh wound inward without ``flip_normals`` deleted all the
  fluid, exit 0): a sample of the sources' particles is tested against the built shapes.

A deforming collider's later frames are read and sized, not built: a frame's mesh that encloses
nothing only shows when the bake reaches it.
"""

from __future__ import annotations

import copy
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..cache.jsonfile import read_json
from ..durations import format_long_duration
from ..errors import InputError
from ..passes.heat import substep_cycles
from ..world.blowup import MAX_TRAVEL
from .held_log import held_records
from .scene_file import Scene, parse_scene

# Particle-substeps per second measured on the dam break (24,000 particles, 32 ms per substep
# on this project's 2-core machine, BENCHMARKS.md): only for the time shown with the estimate.
PARTICLE_STEPS_PER_SECOND = 7.5e5
# Largest total work accepted: particles x substeps x frames. 1e13 is about 150 days at the rate
# above, and still two weeks on a node ten times faster: such a bake cannot finish in practice.
MAX_WORK = 1e13


@dataclass(frozen=True)
class Estimate:
    """What a bake of the scene would take; every figure an upper estimate.

    Attributes
    ----------
    particles : particles at the end of the bake (every source filled, every inflow run).
    particle_bytes : their memory, bytes.
    grids : (JSON path of the collider, nodes per axis) of every mesh collider's distance grid
        (for a deforming one, its largest frame).
    grid_bytes : the grids' memory, bytes, all held at once.
    frames : frames simulated (frame_start is the initial state).
    substeps : substeps per frame at most (the fixed count, or simulation.max_substeps).
    heat_cycles : conduction cycles per substep (``passes.heat.substep_cycles``; 1 without heat): each
        costs at most what a substep does, so the work counts every one.
    """

    particles: int
    particle_bytes: int
    grids: tuple[tuple[str, tuple[int, int, int]], ...]
    grid_bytes: int
    frames: int
    substeps: int
    heat_cycles: int = 1

    @property
    def memory_bytes(self) -> int:
        return self.particle_bytes + self.grid_bytes

    @property
    def work(self) -> float:
        """Particle-substeps of the whole bake, each of heat's cycles counted as one."""
        return float(self.particles) * self.substeps * self.heat_cycles * self.frames

    @property
    def seconds(self) -> float:
        """Wall time at :data:`PARTICLE_STEPS_PER_SECOND` (an order of magnitude, not a promise)."""
        return self.work / PARTICLE_STEPS_PER_SECOND


def check_bake(scene: str | os.PathLike | Scene, frames: tuple[int, int] | None = None,
               sdf_cache=None) -> tuple[Scene, Estimate]:
    """Every check a bake of ``scene`` over ``frames`` makes before it starts: ``validate`` runs this,
    and so does ``bake.prepare`` with the same arguments, so the two cannot disagree.

    Parameters
    ----------
    scene : a scene file, read and validated here; or a Scene validated already (Blender's
        export), used as it is unless ``frames`` changes its range.
    frames : override of the scene's (frame_start, frame_end), applied before validation: a
        scene whose own range is invalid bakes with a valid ``--frames``, and validates with it.
    sdf_cache : as for :func:`preflight`.

    Returns
    -------
    the validated scene (its range overridden) and the bake's estimate.

    Raises
    ------
    InputError : the field or file to change. The warnings numpy gave on the values that made
        it (an overflow on a mesh of 1e300 m) and the checks' log records (``held_log``) are dropped:
        the error line says what is wrong.
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught, held_records(InputError):
            warnings.simplefilter("always", RuntimeWarning)
            scene = _scene_for_frames(scene, frames)
            return scene, preflight(scene, sdf_cache)
    except InputError:
        caught.clear()
        raise
    finally:
        # Without an input error they are news: given back to the warnings machinery as they came.
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _scene_for_frames(scene: str | os.PathLike | Scene, frames: tuple[int, int] | None) -> Scene:
    """The scene to bake: a file read and validated with ``frames`` applied first, or a Scene as given."""
    if isinstance(scene, Scene):
        if frames is None or frames == (scene.frame_start, scene.frame_end):
            return scene
        raw, base_dir = copy.deepcopy(scene.raw), scene.base_dir
    else:
        path = Path(scene)
        raw, base_dir = read_json(path, "scene file"), path.parent.resolve()
    if frames is not None and isinstance(raw, dict):  # not a dict: parse_scene says what is wrong
        raw["frame_start"], raw["frame_end"] = frames
    return parse_scene(raw, base_dir)


def preflight(scene: Scene, sdf_cache=None) -> Estimate:
    """Check what ``parse_scene`` cannot check field by field; return the bake's estimate.

    Parameters
    ----------
    scene : the validated scene.
    sdf_cache : ``colliders.sdf_cache.SDFCache`` for the mesh fields built here (the bake's,
        deferred, so a bake refused here writes nothing and a bake that starts reuses them);
        None builds them without keeping them.

    Raises
    ------
    InputError : naming the JSON path of the field to change, with the estimate in the message.
    """
    _check_start_speeds(scene)
    substeps = _check_substeps(scene)
    particles = scene.estimate_particles()  # reads mesh sources
    grids, grid_bytes = _mesh_grids(scene)
    estimate = Estimate(particles, scene.estimate_bytes(), tuple(grids), grid_bytes,
                        scene.frame_end - scene.frame_start, substeps,
                        substep_cycles(scene, scene.frame_time / substeps))
    budget = scene.simulation["memory_budget_mb"] * 2**20
    if estimate.memory_bytes > budget:
        where = grids[-1][0] + ".cell_size" if grids else "particle_spacing"
        raise InputError(where, f"the particles ({estimate.particle_bytes / 2**20:,.0f} MiB) and the distance grids "
                                f"({grid_bytes / 2**20:,.0f} MiB) would need about "
                                f"{estimate.memory_bytes / 2**20:,.0f} MiB, over the memory budget of "
                                f"{budget / 2**20:,.0f} MiB; raise cell_size or particle_spacing, or "
                                "simulation.memory_budget_mb")
    if estimate.work > MAX_WORK:
        took = format_long_duration(estimate.seconds)
        cycles = f" x {estimate.heat_cycles:,} heat cycles" if estimate.heat_cycles > 1 else ""
        raise InputError("frame_end", f"about {particles:,} particles x {substeps} substeps{cycles} x "
                                      f"{estimate.frames:,} frames = {estimate.work:.2g} particle-steps, over the "
                                      f"limit of {MAX_WORK:.0e} (about {took}); shorten the frame range, raise "
                                      "particle_spacing or lower simulation.max_substeps"
                                      + (" or the thermal diffusivity" if cycles else ""))
    _check_sources_free(scene, particles, _build_shapes(scene, sdf_cache))
    return estimate


def _source_speeds(scene: Scene) -> list[tuple[str, float]]:
    """(JSON path, m/s) of every speed a source gives its particles: a volume's velocity, every
    speed an inflow emits at over its keyframes (``sources.emitted_speeds``)."""
    from ..sources.emission import emitted_speeds

    out = []
    for k, (kind, p) in enumerate(scene.sources):
        speeds = emitted_speeds(p, scene.physics_fps) if kind == "inflow" else [(".velocity",
                                                                                  math.hypot(*p["velocity"]))]
        out += [(f"sources[{k}]{suffix}", speed) for suffix, speed in speeds]
    return out


def _check_start_speeds(scene: Scene) -> None:
    """No source may start above max_speed, nor so fast that the substeps allowed let it cross more
    than ``blowup.MAX_TRAVEL`` support radii in one (the bake would stop at the frame it emits in)."""
    sim = scene.simulation
    limit = sim["max_speed"]
    fixed = sim["substeps"] > 0
    cap = sim["substeps"] if fixed else sim["max_substeps"]
    field = "simulation.substeps" if fixed else "simulation.max_substeps"
    for where, speed in _source_speeds(scene):
        if speed > limit:
            raise InputError(where, f"{speed:.3g} m/s is above simulation.max_speed ({limit:g} m/s): the bake would "
                                    "stop as a blow-up as soon as particles move at it; lower the velocity or raise "
                                    "max_speed")
        travel = speed * scene.simulation["time_scale"] / (scene.fps * cap)
        if travel > MAX_TRAVEL * scene.h:
            need = math.ceil(cap * travel / (MAX_TRAVEL * scene.h))
            raise InputError(where,
                             f"at {speed:.3g} m/s a particle would move {travel:.3g} m per substep with {cap} "
                             f"substeps per frame, more than {MAX_TRAVEL:g} support radii ({MAX_TRAVEL:g} x "
                             f"{scene.h:g} m), so its collisions could not be resolved; lower the velocity or "
                             f"raise {field} to at least {need}")


def _check_substeps(scene: Scene) -> int:
    """Substeps per frame at most; refuse frames so long that a falling particle breaks the CFL rule."""
    sim = scene.simulation
    fixed = sim["substeps"]
    cap = fixed if fixed > 0 else sim["max_substeps"]
    field = "simulation.substeps" if fixed > 0 else "simulation.max_substeps"
    frame_dt = scene.frame_time
    # After one frame of free fall a particle moves at g dt, so g dt^2 / n per substep of n; the CFL
    # rule bounds that by cfl spacings: n >= g dt^2 / (cfl s). The weakest bound any scene must meet.
    g = math.hypot(*sim["gravity"])
    need = g * frame_dt**2 / (sim["cfl"] * scene.particle_spacing)
    if need > cap:
        scaled = f" and time scale {sim['time_scale']:g}" if sim["time_scale"] != 1.0 else ""
        raise InputError(field, f"a frame lasts {frame_dt:.3g} s at fps {scene.fps:g}{scaled}: a particle falling "
                                f"for one frame would need about {math.ceil(need):,} substeps to move at most "
                                f"{sim['cfl']:g} spacing per substep, over {field.split('.')[1]} ({cap}); raise "
                                f"fps or {field.split('.')[1]}")
    _check_model_steps(scene, cap, field)
    return cap


def _check_model_steps(scene: Scene, cap: int, field: str) -> None:
    """Refuse a material whose model is stable only at shorter substeps than ``cap`` per frame allow.

    The substep rule never takes more than ``cap`` (``integrators.SubstepPolicy``): beyond a model's
    stable step (``MaterialModel.max_dt`` of an empty world: what its parameters alone impose) its
    explicit forces grow without a source. Surface tension of 100 N/m on a liquid of 1 kg/m³ at
    5 cm needs 150 substeps per frame; at 64 the cube of it "rounded off" at 45 m/s and the bake
    stopped as a blow-up at its second frame.
    """
    from ..models import SOLVERS
    from ..models.base import ModelSetup, WorldView
    from ..world.integrators import INTEGRATORS
    from ..world.state import ParticleState

    world = WorldView(ParticleState().arrays, scene.h, scene.particle_spacing)
    g = math.hypot(*scene.simulation["gravity"])
    for k, mat in enumerate(scene.materials):
        model = SOLVERS[mat.model](ModelSetup(scene.particle_spacing, scene.h, len(scene.materials),
                                              {k: mat.params}, g))
        # A scheme with individual levels cuts a substep into up to 2^max_level steps of its own: its
        # models are stable at substeps that much longer (the policy still prefers max_dt).
        dt = model.max_dt(world) * (1 << INTEGRATORS[model.integrator].max_level)
        need = math.ceil(scene.frame_time / dt - 1e-9)
        if need > cap:
            raise InputError(f"materials[{k}]", f"with these parameters its {mat.model} model is stable only at "
                                                f"substeps of at most {dt:.3g} s, {need:,} per frame at fps "
                                                f"{scene.fps:g}, over {field} ({cap}): its motion would grow "
                                                f"without a source; raise {field} to at least {need:,}, or soften "
                                                "the material (for a viscoelastic liquid, a lower surface_tension or "
                                                "a higher density)")


def _mesh_grids(scene: Scene) -> tuple[list[tuple[str, tuple[int, int, int]]], int]:
    """Read every mesh collider's and mesh outflow's files; the largest grid of each and their bytes in total."""
    from ..cache.mesh_io import load_mesh
    from ..colliders.motion import motion_from_scene
    from ..colliders.shapes.mesh_collider import check_grid_budget, mesh_settings
    from ..colliders.shapes.mesh_files import frame_file, resolve_mesh_path
    from ..colliders.shapes.reach import scene_reach

    budget = scene.simulation["memory_budget_mb"] * 2**20
    grids, total = [], 0
    meshes = [(f"colliders[{k}]", p) for k, (kind, p) in enumerate(scene.colliders) if kind == "mesh"]
    meshes += [(f"outflows[{k}]", p) for k, (kind, p) in enumerate(scene.outflows) if kind == "mesh"]
    for item, p in meshes:
        settings = mesh_settings(p, scene.particle_spacing)
        # As Simulation clips the grid (``reach.scene_build_context``): a dynamic body's field is whole.
        reach = None if p.get("dynamic") else scene_reach(scene, motion_from_scene(p, scene.frame_start))
        frames = range(scene.frame_start, scene.frame_end + 1) if p["deforming"] else (scene.frame_start,)
        largest, largest_bytes, seen = None, -1, set()
        for frame in frames:
            text, suffix = frame_file(p, frame)
            if text in seen:
                continue
            seen.add(text)
            where = f"{item}{suffix}"
            vertices, triangles = load_mesh(resolve_mesh_path(scene.base_dir, text), where)
            dims, need = check_grid_budget(vertices, triangles, settings, budget, item, text, reach=reach)
            if need > largest_bytes:
                largest, largest_bytes = dims, need
        grids.append((item, largest))
        total += largest_bytes
    return grids, total


# Share of the sources' particles inside one collider's solid from which the scene is refused:
# "most" of them; a source overlapping a wall a little is normal, the bake drops those particles.
SWALLOWED_SHARE = 0.5
# About this many source points are tested (a coarser lattice for larger sources): the share, not
# each particle, is what matters.
_SWALLOW_SAMPLE = 100_000


def _sample_sources(scene: Scene, particles: int) -> np.ndarray:
    """Points of the volume sources on a lattice coarse enough to give about ``_SWALLOW_SAMPLE`` of
    the ``particles`` the bake will make: the swallow check needs a share, and filling a source of a
    million particles here as well as in the bake would cost seconds twice."""
    from ..sources.emission import fill_volume

    budget = int(scene.simulation["memory_budget_mb"] * 2**20)
    coarse = max(1, math.ceil((particles / _SWALLOW_SAMPLE) ** (1.0 / 3.0)))
    filled = []
    for k, (kind, p) in enumerate(scene.sources):
        if kind == "inflow":
            continue
        try:
            filled.append(fill_volume(kind, p, coarse * scene.particle_spacing, scene.base_dir, f"sources[{k}]",
                                      budget))
        except InputError:
            if coarse == 1:
                raise
            # Too thin for the coarse lattice: the bake's own lattice decides (and says what is wrong).
            filled.append(fill_volume(kind, p, scene.particle_spacing, scene.base_dir, f"sources[{k}]", budget))
    return np.concatenate(filled) if filled else np.zeros((0, 3))


def _build_shapes(scene: Scene, sdf_cache=None) -> list:
    """Every collider's shape and every outflow's at ``frame_start``, built as the bake builds them
    (``colliders.reach.scene_build_context``): what only a built field shows (a solid mesh that
    encloses nothing, an open outflow) is refused here, and the bake finds the fields in its SDF
    cache. Returns the colliders' shapes."""
    from ..colliders import COLLIDERS
    from ..colliders.shapes.reach import scene_build_context
    from ..sources.outflows import scene_outflows

    shapes = [COLLIDERS[kind].build(p, scene_build_context(scene, f"colliders[{k}]", p, sdf_cache))
              for k, (kind, p) in enumerate(scene.colliders)]
    scene_outflows(scene, sdf_cache)
    return shapes


def _check_sources_free(scene: Scene, particles: int, shapes: list) -> None:
    """Refuse a collider whose solid would hold most of the volume sources' particles.

    The test is the bake's own: a particle is dropped at the start when its signed
    distance to a collider at ``frame_start`` is below a quarter spacing
    (``Simulation._free_of_colliders``), on a sample of the sources' points (``_sample_sources``).
    ``shapes``: the colliders' (:func:`_build_shapes`).
    """
    from ..colliders.contact.response import distances
    from ..colliders.motion import motion_from_scene

    spacing = scene.particle_spacing
    pts = _sample_sources(scene, particles)
    if not len(pts):
        return
    frame = scene.frame_start
    for k, ((kind, p), shape) in enumerate(zip(scene.colliders, shapes)):
        rot, pos = motion_from_scene(p, frame).transform(frame)
        local = np.ascontiguousarray((pts - pos) @ rot)
        d = np.empty(len(local))
        distances(shape.code, shape.params, shape.grid, local, d)
        share = float(np.mean(d < 0.25 * spacing))
        if share > SWALLOWED_SHARE:
            raise InputError(f"colliders[{k}]", f"its inside covers the sources: {share:.0%} of the particles they "
                                                f"would create lie in its solid and would be deleted; "
                                                f"{_swallow_remedy(scene, kind, p)}")


def _mesh_at_start(scene: Scene, p: dict):
    """(vertices, triangles) of a mesh collider's file at ``frame_start``."""
    from ..cache.mesh_io import load_mesh
    from ..colliders.shapes.mesh_files import frame_file, resolve_mesh_path

    text, _ = frame_file(p, scene.frame_start)
    return load_mesh(resolve_mesh_path(scene.base_dir, text))


def _swallow_remedy(scene: Scene, kind: str, p: dict) -> str:
    """What to do about a collider swallowing the sources, from what it is."""
    if kind == "box":
        return "move the sources out of it, or use a box_container to keep particles inside a box"
    if kind != "mesh" or p["mode"] != "solid":
        return "move the sources out of it"
    if p["flip_normals"]:
        return "unset flip_normals if the mesh is a solid object, or move the sources"
    vertices, triangles = _mesh_at_start(scene, p)
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    if np.einsum("ij,ij->i", a, np.cross(b, c)).sum() < 0:  # 6 x the signed volume (divergence theorem)
        return "its faces point inward, as a container's do: set flip_normals to keep the particles inside it"
    return "set flip_normals if the mesh is a container meant to hold them, or move the sources"

