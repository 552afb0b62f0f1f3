"""Every check a bake makes before it simulates, without simulating: what ``validate`` runs.

``scene.parse_scene`` checks each field on its own; :func:`preflight` checks
what needs the files and the fields together, cheaply (no distance field is
built, no particle placed):

* every referenced mesh is read (each frame's file of a deforming collider)
  and must have faces and finite coordinates;
* the distance grid of every mesh collider is sized from its bounding box;
* the particles' and the grids' memory must fit ``simulation.memory_budget_mb``;
* no source may start faster than ``simulation.max_speed``, nor so fast that the
  substeps allowed let it cross more than two support radii in one (the bake
  would stop at its first frame, exit 3, after writing its cache);
* a particle falling from rest for one frame must keep the CFL rule within the
  substeps allowed (``fps`` of 0.001 makes a frame last 1000 s);
* the total work, particles × substeps × frames, must stay under
  :data:`MAX_WORK` (a bake that would take months is refused).

The bake runs it in ``bake.prepare`` (command line and Blender operators alike),
so ``validate`` saying "valid" means the bake starts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import config
from .blowup import MAX_TRAVEL
from .durations import format_long_duration
from .errors import InputError
from .scene import Scene

# Particle-substeps per second measured on the dam break (24,000 particles, 32 ms per substep
# on this project's 2-core machine, BENCHMARKS.md): only for the time shown with the estimate.
PARTICLE_STEPS_PER_SECOND = 7.5e5
# Largest total work accepted: particles x substeps x frames. 1e13 is about 150 days at the rate
# above, and still two weeks on a node ten times faster: such a bake cannot finish in practice.
MAX_WORK = 1e13
# Largest distance grid a mesh collider may ask for, in nodes, before its bytes are even estimated
# (int64 products of larger dimensions overflow). 2**40 nodes is 4 TiB of float32.
_MAX_GRID_NODES = 2**40


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
    """

    particles: int
    particle_bytes: int
    grids: tuple[tuple[str, tuple[int, int, int]], ...]
    grid_bytes: int
    frames: int
    substeps: int

    @property
    def memory_bytes(self) -> int:
        return self.particle_bytes + self.grid_bytes

    @property
    def work(self) -> float:
        """Particle-substeps of the whole bake."""
        return float(self.particles) * self.substeps * self.frames

    @property
    def seconds(self) -> float:
        """Wall time at :data:`PARTICLE_STEPS_PER_SECOND` (an order of magnitude, not a promise)."""
        return self.work / PARTICLE_STEPS_PER_SECOND


def preflight(scene: Scene) -> Estimate:
    """Check what ``parse_scene`` cannot check field by field; return the bake's estimate.

    Raises
    ------
    InputError : naming the JSON path of the field to change, with the estimate in the message.
    """
    _check_start_speeds(scene)
    substeps = _check_substeps(scene)
    particles = scene.estimate_particles()  # reads mesh sources
    grids, grid_bytes = _mesh_grids(scene)
    estimate = Estimate(particles, scene.estimate_bytes(), tuple(grids), grid_bytes,
                        scene.frame_end - scene.frame_start, substeps)
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
        raise InputError("frame_end", f"about {particles:,} particles x {substeps} substeps x {estimate.frames:,} "
                                      f"frames = {estimate.work:.2g} particle-steps, over the limit of "
                                      f"{MAX_WORK:.0e} (about {took}); shorten the frame range, raise "
                                      "particle_spacing or lower simulation.max_substeps")
    return estimate


def _check_start_speeds(scene: Scene) -> None:
    """No source may start above max_speed, nor so fast that the substeps allowed let it cross more
    than ``blowup.MAX_TRAVEL`` support radii in one (the bake would stop at its first frame)."""
    sim = scene.simulation
    limit = sim["max_speed"]
    fixed = sim["substeps"] > 0
    cap = sim["substeps"] if fixed else sim["max_substeps"]
    field = "simulation.substeps" if fixed else "simulation.max_substeps"
    for k, (_, p) in enumerate(scene.sources):
        speed = math.hypot(*p["velocity"])
        if speed > limit:
            raise InputError(f"sources[{k}].velocity",
                             f"{speed:.3g} m/s is above simulation.max_speed ({limit:g} m/s): the bake would "
                             "stop at its first frame as a blow-up; lower the velocity or raise max_speed")
        travel = speed * scene.simulation["time_scale"] / (scene.fps * cap)
        if travel > MAX_TRAVEL * scene.h:
            need = math.ceil(cap * travel / (MAX_TRAVEL * scene.h))
            raise InputError(f"sources[{k}].velocity",
                             f"at {speed:.3g} m/s a particle would move {travel:.3g} m per substep with {cap} "
                             f"substeps per frame, more than {MAX_TRAVEL:g} support radii ({MAX_TRAVEL:g} x "
                             f"{scene.h:g} m), so its collisions could not be resolved; lower the velocity or "
                             f"raise {field} to at least {need}")


def _check_substeps(scene: Scene) -> int:
    """Substeps per frame at most; refuse frames so long that a falling particle breaks the CFL rule."""
    sim = scene.simulation
    fixed = sim["substeps"]
    cap = fixed if fixed > 0 else sim["max_substeps"]
    frame_dt = scene.frame_time
    # After one frame of free fall a particle moves at g dt, so g dt^2 / n per substep of n; the CFL
    # rule bounds that by cfl spacings: n >= g dt^2 / (cfl s). The weakest bound any scene must meet.
    g = math.hypot(*sim["gravity"])
    need = g * frame_dt**2 / (sim["cfl"] * scene.particle_spacing)
    if need > cap:
        field = "simulation.substeps" if fixed > 0 else "simulation.max_substeps"
        scaled = f" and time scale {sim['time_scale']:g}" if sim["time_scale"] != 1.0 else ""
        raise InputError(field, f"a frame lasts {frame_dt:.3g} s at fps {scene.fps:g}{scaled}: a particle falling "
                                f"for one frame would need about {math.ceil(need):,} substeps to move at most "
                                f"{sim['cfl']:g} spacing per substep, over {field.split('.')[1]} ({cap}); raise "
                                f"fps or {field.split('.')[1]}")
    return cap


def _mesh_grids(scene: Scene) -> tuple[list[tuple[str, tuple[int, int, int]]], int]:
    """Read every mesh collider's files; the largest grid of each and their bytes in total."""
    from .colliders.mesh_collider import mesh_settings
    from .colliders.mesh_files import frame_file, resolve_mesh_path
    from .colliders.mesh_io import load_mesh
    from .colliders.sdf_mesh import estimate_sdf_bytes, grid_dims

    grids, total = [], 0
    for k, (kind, p) in enumerate(scene.colliders):
        if kind != "mesh":
            continue
        settings = mesh_settings(p, scene.particle_spacing)
        frames = range(scene.frame_start, scene.frame_end + 1) if p["deforming"] else (scene.frame_start,)
        largest, largest_bytes, seen = None, -1, set()
        for frame in frames:
            text, suffix = frame_file(p, frame)
            if text in seen:
                continue
            seen.add(text)
            where = f"colliders[{k}]{suffix}"
            vertices, triangles = load_mesh(resolve_mesh_path(scene.base_dir, text), where)
            if not np.isfinite(vertices).all() or np.abs(vertices).max() > config.MAX_MAGNITUDE:
                raise InputError(where, f"{text}: the mesh has NaN, infinite or absurd (beyond "
                                        f"{config.MAX_MAGNITUDE:g} m) vertex coordinates; fix the mesh")
            dims = grid_dims(vertices, cell_size=settings["cell_size"], padding=settings["padding"],
                             thickness=settings["thickness"], mode=settings["mode"])
            nodes = math.prod(int(n) for n in dims)
            need = estimate_sdf_bytes(dims, len(triangles)) if nodes <= _MAX_GRID_NODES else math.inf
            if need > largest_bytes:
                largest, largest_bytes = tuple(int(n) for n in dims), need
            budget = scene.simulation["memory_budget_mb"] * 2**20
            if need > budget:
                shape = "x".join(str(int(n)) for n in dims)
                raise InputError(f"colliders[{k}].cell_size",
                                 f"the distance grid of {text} would be {shape} nodes at cell size "
                                 f"{settings['cell_size']:g} m, about {_mib(need)} MiB, over the memory budget of "
                                 f"{budget / 2**20:,.0f} MiB; raise cell_size or simulation.memory_budget_mb")
        grids.append((f"colliders[{k}]", largest))
        total += largest_bytes
    return grids, total


def _mib(nbytes: float) -> str:
    return "more than 4,000,000" if math.isinf(nbytes) else f"{nbytes / 2**20:,.0f}"
