"""The step loop: sources -> neighbours -> each time-stepping scheme -> domain (DESIGN.md section 3).

One :class:`Simulation` owns the particle world of a scene. It builds the
material models present in the scene (``solvers.SOLVERS``, in registry order),
adds their per-particle arrays to the world, groups them by the scheme that
advances them (``integrators.INTEGRATORS``) and, every substep, emits inflow
particles, lets the schemes prepare (gravity), sorts the particles and finds
neighbours once, then lets each scheme advance its particles with its models'
hooks and the colliders. Models see a ``StepContext``, never this object.

Neighbours (Clavet's scheme): the search runs once per substep, on the
positions predicted with gravity (x + Δt v), before the viscosity impulses.
The same neighbour rows then serve viscosity (evaluated at the current
positions), springs and relaxation (evaluated at the predicted positions), with
every pair distance recomputed and pairs beyond h skipped. Pairs that come
within h only through the viscosity update are picked up one substep later
(a deviation from Algorithm 1, which searches after prediction).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..boundary.static_cells import WallCells
from ..boundary.walls import Walls
from ..colliders import Collider, Shape
from ..colliders.contact.clearance import Clearance
from ..colliders.contact.particle_contacts import collide_particles
from ..colliders.contact.reports import ColliderReports
from ..colliders.contact.response import ContactReport
from ..colliders.scene_colliders import scene_collider
from ..errors import SimulationError
from ..models import model_setups
from ..models.base import MaterialModel, StepContext, Workspace, WorldView
from ..numerics import config
from ..numerics.array_kernels import bounds, step_rows
from ..passes.base import PassSetup, WorldPass
from ..passes.registry import WORLD_PASSES
from ..scene.scene_file import Scene
from ..sources.emission import Inflow, fill_volume, initial_velocities
from . import checkpoint_state
from .blowup import BlowUpWatch, collider_work
from .diagnostics import frame_diagnostics, material_densities
from .integrators import INTEGRATORS, Integrator, SubstepPolicy
from .neighbors import NeighborSearch
from .state import ParticleState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FrameStats:
    """What happened during one frame (written to the manifest)."""

    frame: int
    particles: int
    substeps: int
    max_speed: float
    bounds_min: tuple[float, float, float]
    bounds_max: tuple[float, float, float]
    removed: int
    sdf_build_s: float = 0.0  # wall time spent building or loading collider SDFs for this frame, s
    extra: dict = dataclasses.field(default_factory=dict)  # models' and schemes' frame statistics

    def as_dict(self) -> dict:
        return {"frame": self.frame, "particles": self.particles, "substeps": self.substeps,
                "max_speed": round(self.max_speed, 6), "bounds_min": [round(b, 6) for b in self.bounds_min],
                "bounds_max": [round(b, 6) for b in self.bounds_max], "removed": self.removed,
                **self.extra, "sdf_build_s": round(self.sdf_build_s, 6)}


class Simulation:
    """The particle world of one scene, advanced frame by frame.

    Attributes
    ----------
    scene : the validated scene.
    state : all particles (see ``state.ParticleState``).
    frame : the frame the state is at (starts at ``scene.frame_start``).
    h : interaction radius, m; spacing : particle spacing, m; radius : particle radius (spacing / 2), m.
    nbr, count : neighbour rows of the current substep.
    models : one ``MaterialModel`` per model present in the scene, in registry order.
    schemes : (integrator, its models, the material ids it advances), in ``INTEGRATORS`` order.
    contacts : one ``ContactReport`` per collider: impulse and torque it received from the particles this
        frame (what the colliders gave the bodies through their contacts: ``bodies.contact_impulse``, kg m/s).

    Parameters
    ----------
    scene : the validated scene.
    sdf_cache_dir : folder where mesh SDFs are reused across bakes and frames (the bake
        passes ``DIR/sdf``); None builds every field. Fields found there are read at
        once; new ones are written only from the first :meth:`advance_frame` on, so
        setting up a scene that turns out to be bad input writes nothing.
    sdf_cache : an ``SDFCache`` of that folder already holding fields (the one ``preflight``
        filled), used instead of a new one.
    """

    def __init__(self, scene: Scene, sdf_cache_dir: str | os.PathLike | None = None, sdf_cache=None):
        from ..colliders.shapes.sdf_cache import SDFCache

        self.scene = scene
        if sdf_cache is None and sdf_cache_dir is not None:
            sdf_cache = SDFCache(Path(sdf_cache_dir), deferred=True)
        self.sdf_cache = sdf_cache
        self._sdf_build_s = 0.0
        self.spacing = scene.particle_spacing
        self.h = scene.h
        self.radius = 0.5 * self.spacing
        self.gravity = np.asarray(scene.simulation["gravity"], config.REAL)
        self.state = ParticleState()
        self.frame = scene.frame_start
        self.ns = NeighborSearch(self.h)
        self.nbr = np.zeros((0, 1), np.int32)
        self.count = np.zeros(0, np.int32)
        self._clearance = Clearance()
        self._predicted = np.zeros((0, 3))  # x + Δt v of the substep, for the neighbour search
        self.policy = SubstepPolicy.from_settings(scene.simulation)
        self.last_substeps = 0  # the last frame's substeps: the policy keeps them when nearly as cheap
        self.models = self._build_models()
        self.schemes = self._build_schemes()

        self.colliders = [self._build_collider(k, kind, p) for k, (kind, p) in enumerate(scene.colliders)]
        # Every registered world pass, before the sources (emission sets temperatures); those the scene gives
        # something to do run (``passes``), in the order registered.
        setup = PassSetup(scene, self.state, self.colliders, self.sdf_cache)
        self.world_passes: dict[str, WorldPass] = {name: cls.build(setup) for name, cls in WORLD_PASSES.items()}
        self.passes = [p for p in self.world_passes.values() if p.active]
        self._particle_mass = material_densities(scene.materials) * self.spacing**3  # kg, per material
        self._walls: Walls | None = None  # the colliders of the current substep (``step``)
        self._wall_scratch: dict = {}  # the boundary terms' buffers, kept across substeps (walls.Walls)
        self._wall_cells = WallCells()  # the static colliders on the projection's cells, kept for the bake
        self.workspace = Workspace()
        # What each collider and body received, summed over the current frame (``reports.ColliderReports``).
        self.reports = ColliderReports(self.colliders, self.bodies)
        self.watch = BlowUpWatch(scene, self.gravity, self.h, energy_check=all(c.rebuild is None for c in
                                                                                self.colliders))
        self.inflows: list[Inflow] = []
        for k, (kind, p) in enumerate(scene.sources):
            mat = scene.material_index(p["material"])
            if kind == "inflow":
                # Keyed motion is per timeline frame: in slow motion the emitter moves slower in physical time.
                self.inflows.append(Inflow(k, mat, p, self.spacing, scene.physics_fps))
                continue
            pts = fill_volume(kind, p, self.spacing, scene.base_dir, f"sources[{k}]", self._memory_budget)
            pts = pts[self._free_of_colliders(pts)]
            self._emit(pts, initial_velocities(kind, p, pts), mat, k)
        self._apply_domain()

    @property
    def heat(self):
        """The heat pass (``passes.heat.Heat``; inactive when no material conducts)."""
        return self.world_passes["heat"]

    @property
    def phase(self):
        """The phase pass (``passes.phase.Phase``; inactive when nothing melts or solidifies)."""
        return self.world_passes["phase"]

    @property
    def bodies(self):
        """The dynamic colliders (``passes.bodies.Bodies``; false when there is none)."""
        return self.world_passes["bodies"]

    # -- construction helpers -------------------------------------------------------------
    def _build_models(self) -> list[MaterialModel]:
        """One instance per model present in the scene, in registry order (the stage order)."""
        models = []
        for cls, setup in model_setups(self.scene.materials, self.spacing, self.h, float(np.linalg.norm(self.gravity))):
            model = cls(setup)
            for array, spec in model.active_arrays().items():
                self.state.add_array(array, spec.trailing, spec.dtype, fill=spec.fill)
            models.append(model)
        return models

    def _build_schemes(self) -> list[tuple[Integrator, list[MaterialModel], np.ndarray]]:
        """(scheme, its models, the material ids it advances), in the order schemes are registered."""
        schemes = []
        for name, cls in INTEGRATORS.items():
            models = [m for m in self.models if m.integrator == name]
            if models:
                mats = np.array(sorted(k for m in models for k in m.setup.materials), np.int64)
                schemes.append((cls(self.scene.simulation), models, mats))
        return schemes

    def _world(self) -> WorldView:
        return WorldView(self.state.arrays, self.h, self.spacing, self.state.time)

    def _emit(self, x: np.ndarray, v: np.ndarray, material: int, source: int) -> None:
        first = self.state.n
        self.state.append(x, v, material, source)
        new = slice(first, self.state.n)
        for p in self.passes:
            p.on_emitted(self.state, new, source)
        world = self._world()
        for model in self.models:
            if material in model.setup.materials:
                model.on_emitted(world, new)

    @property
    def _memory_budget(self) -> int:
        return int(self.scene.simulation["memory_budget_mb"] * 2**20)

    def _build_collider(self, k: int, kind: str, p: dict) -> Collider:
        return scene_collider(self.scene, k, kind, p, self.sdf_cache, self._timed_build)

    @property
    def contacts(self) -> list[ContactReport]:
        """Per collider, what it received from the particles over the current frame (``reports``)."""
        return self.reports.contacts

    def _timed_build(self, build, *args) -> Shape:
        """Call a shape builder, adding its wall time to the frame's ``sdf_build_s``."""
        t0 = time.perf_counter()
        shape = build(*args)
        self._sdf_build_s += time.perf_counter() - t0
        return shape

    def _rebuild_deforming(self, frame: int) -> None:
        """Give deforming colliders their shape at ``frame`` (the end of the frame being simulated).

        A deforming mesh has one field per frame; the substeps from frame f to
        f + 1 all use the field of f + 1, the shape the collider reaches at the end
        of the interval, so no particle ends the frame inside it. The surface's own
        velocity is not known between frames (only the rigid keyframed motion
        enters the friction of Clavet eq. 6.3).
        """
        for c in self.colliders:
            if c.rebuild is not None:
                c.shape = self._timed_build(c.rebuild, frame)

    def _free_of_colliders(self, pts: np.ndarray) -> np.ndarray:
        """Mask of lattice points not inside any collider at the first frame."""
        if not self.colliders or not len(pts):
            return np.ones(len(pts), bool)
        return self.walls_at(0.0).distance(pts) >= 0.5 * self.radius

    # -- the step -------------------------------------------------------------------------
    def _frame_at(self, t: float) -> float:
        """The timeline's (fractional) frame at physical time ``t`` (s): time_scale stretches frames."""
        return self.scene.frame_start + t * self.scene.physics_fps

    def _scheme_particles(self, mats: np.ndarray) -> np.ndarray | None:
        """Indices of the particles of materials ``mats``; None when that is every particle."""
        if len(self.schemes) == 1:
            return None
        return np.flatnonzero(np.isin(self.state.material, mats))

    def step(self, dt: float) -> None:
        """Advance every particle by one substep ``dt`` (s)."""
        st = self.state
        t = st.time
        for inflow in self.inflows:
            pts = inflow.emit(self._frame_at(t), t, dt)
            if pts is not None:
                self._emit(pts, np.broadcast_to(inflow.velocity, pts.shape), inflow.material, inflow.index)
        if st.n == 0:
            st.time = t + dt
            return
        world = self._world()
        for scheme, _, mats in self.schemes:
            scheme.begin(world, self._scheme_particles(mats), dt, self.gravity)
        if self._predicted.shape != st.x.shape:  # x + Δt v, numpy's sums, in parallel into a kept buffer
            self._predicted = np.empty(st.x.shape)
        step_rows(st.x, dt, st.v, self._predicted)
        st.permute(self.ns.sort(self._predicted))
        # Again after the permutation: predicted[order] (the same sums of the same numbers), faster.
        step_rows(st.x, dt, st.v, self._predicted)
        self.nbr, self.count = self.ns.lists(self._predicted, self.h)
        # The colliders of the substep, asked one way: each particle's clearance at its start (the contact
        # pass's pre-filter), then, once the bodies have taken their impulses, every collider placed at its
        # end in one ``Walls`` that the terms, the contact pass and the passes ask, with where to report.
        self._clearance.measure(st.x, self.colliders, self._frame_at(t), self.radius)
        for p in self.passes:
            p.begin(self._frame_at(t), self._frame_at(t + dt), dt, self.gravity)
        walls = self._walls = self.walls_at(t + dt) if self.colliders else None
        if walls is not None:
            # Each particle's mass, kg, for what the bodies receive (the boundary terms and the collisions).
            walls.masses = self._particle_mass[st.material] if self.bodies else None
            walls.clearance, walls.reports = self._clearance, self.reports
            if any(c.moving for c in self.colliders):  # the moving colliders' velocities (Walls.velocity_at)
                walls.before, walls.dt = [c.transform(self._frame_at(t)) for c in self.colliders], dt
        ctx = StepContext(st.arrays, self.h, self.spacing, t, dt=dt, nbr=self.nbr, count=self.count,
                          bucket_start=self.ns.bucket_start, colour=self.ns.colour,
                          colour_buckets=self.ns.colour_buckets, colour_units=self.ns.colour_units,
                          next_id=st.next_id, resize=st.resize_trailing, walls=walls, workspace=self.workspace)
        # Particles inside a nozzle move with the pipe whatever the models do to them (Inflow.held).
        nozzles = [(inflow.held(st.x, st.arrays["source"]), inflow) for inflow in self.inflows]
        nozzles = [(idx, inflow.carried(st.x[idx], dt), inflow) for idx, inflow in nozzles if len(idx)]
        for scheme, models, mats in self.schemes:
            scheme.advance(ctx, models, self._scheme_particles(mats), t, self._collide)
        for idx, x_end, inflow in nozzles:
            st.x[idx] = x_end
            st.v[idx] = inflow.velocity
        for p in self.passes:
            p.apply(st, self.nbr, self.count, dt, self._frame_at(t + dt), walls)
        if walls is not None:
            self.reports.add_given(walls)
        for p in self.passes:
            p.end()
        st.time = t + dt
        self._apply_domain()

    def walls_at(self, t: float) -> Walls:
        """``StepContext.walls`` for the colliders as they stand at time ``t`` (s)."""
        frame = self._frame_at(t)
        return Walls([(c, *c.transform(frame)) for c in self.colliders], self._wall_scratch, self.spacing, self.h,
                     self._wall_cells)

    def _collide(self, idx: np.ndarray | None, t: float, dt: float) -> None:
        """Contacts of particles ``idx`` (None: all) with every collider over [t, t + dt]
        (``colliders.contact.particle_contacts``), asked through the substep's ``Walls``."""
        if self.colliders:
            collide_particles(self._walls, self.state, idx, self._frame_at(t), self._frame_at(t + dt), dt)

    def _apply_domain(self) -> None:
        """Remove the particles a world pass takes out (an outflow) and those outside the domain box (counted
        per material)."""
        for p in self.passes:
            leaving = p.removed(self.state, self._frame_at(self.state.time))
            if leaving is not None:
                self.state.keep(~leaving)
        dom = self.scene.domain
        if dom is None or self.state.n == 0:
            return
        x = self.state.x
        lo, hi = np.empty(3), np.empty(3)
        bounds(x, lo, hi)
        if np.all(lo >= dom["min"]) and np.all(hi <= dom["max"]):
            return  # the usual case, from the bounds alone (the mask below took 0.4 ms a substep)
        inside = np.all((x >= dom["min"]) & (x <= dom["max"]), axis=1)
        if not inside.all():
            self.state.keep(inside)

    # -- frames ---------------------------------------------------------------------------
    def substeps_for_frame(self, span: float | None = None) -> int:
        """Substeps of the next frame (``integrators.SubstepPolicy``), from the fastest expected speed;
        with ``span`` (s), of that much of it instead (what is left of a frame being re-planned).

        Moving colliders count with the fastest point of their surface (``Collider.surface_speed``:
        translation plus rotation), so a spinning paddle's tip keeps the CFL rule too.
        """
        frame_dt = self.scene.frame_time if span is None else span
        v = self.state.v
        vmax = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if self.state.n else 0.0
        # Gravity accelerates everything during the frame; emitters and colliders bring their own speed.
        vmax += float(np.linalg.norm(self.gravity)) * frame_dt
        for inflow in self.inflows:
            vmax = max(vmax, inflow.peak_speed)
        for c in self.colliders:
            if c.moving:
                # Keyframes are per timeline frame: slow motion speeds the collider up in physical time.
                vmax = max(vmax, c.surface_speed(self.frame, self.scene.physics_fps, self.state.x, self.h))
        previous = self.last_substeps if span is None else 0
        return self.policy.choose(frame_dt, vmax, self.spacing, self.models, self._world(), previous)

    def _substep_cost(self, dt: float) -> float:
        """A substep's cost in units of the fixed work: it once, plus each model's ``work_per_substep``."""
        return 1.0 + sum(m.work_per_substep(dt) for m in self.models)

    def advance_frame(self) -> FrameStats:
        """Advance to the next frame; raise SimulationError on non-finite or runaway values."""
        if self.sdf_cache is not None and self.sdf_cache.deferred:
            # The bake is under way: the fields built while setting up may now be stored.
            self.sdf_cache.flush()
        self._rebuild_deforming(self.frame + 1)
        n_sub = self.substeps_for_frame()
        frame_time = self.scene.simulation["time_scale"] / self.scene.fps  # 1 / fps at time scale 1
        dt = frame_time / n_sub
        self.watch.check_travel(self.frame + 1, self.state.v, dt, n_sub, self.policy.fixed > 0)
        removed_before = sum(self.state.removed.values())
        self.reports.reset()
        planned, done = self._substep_cost(dt), 0
        while done < n_sub:
            self.step(dt)
            done += 1
            # The plan rests on the last frame's passes; when a substep cost far more (a collapse
            # starting, an impact), what is left of the frame is planned again with what it measured.
            if done < n_sub and self.policy.fixed == 0 and self._substep_cost(dt) > config.REPLAN_COST * planned:
                left = (n_sub - done) * dt
                more = min(self.substeps_for_frame(left), self.policy.max_substeps - done)
                if more > n_sub - done:
                    dt, n_sub = left / more, done + more
                planned = self._substep_cost(dt)
        self.last_substeps = n_sub
        self.frame += 1
        return self.check_and_stats(n_sub, sum(self.state.removed.values()) - removed_before)

    def check_and_stats(self, substeps: int = 0, removed: int = 0) -> FrameStats:
        st = self.state
        if st.n:
            if not (np.isfinite(st.x).all() and np.isfinite(st.v).all()):
                raise SimulationError(self.frame, "non-finite positions or velocities (the simulation blew "
                                                  "up); try more substeps, or lower youngs_modulus")
            speed = float(np.sqrt(np.max(np.einsum("ij,ij->i", st.v, st.v))))
            limit = self.scene.simulation["max_speed"]
            if speed > limit:
                raise SimulationError(self.frame, f"a particle reached {speed:.3g} m/s, above "
                                                  f"simulation.max_speed ({limit:g} m/s); try more substeps "
                                                  f"or a lower youngs_modulus")
            lo, hi = np.empty(3), np.empty(3)
            bounds(st.x, lo, hi)
        else:
            speed, lo, hi = 0.0, np.zeros(3), np.zeros(3)
        extra: dict = {}
        world = self._world()
        for model in self.models:
            stats = model.frame_stats(world)
            reason = model.failure(stats)
            if reason:
                raise SimulationError(self.frame, reason)
            extra.update(stats)
        self._watch_frame(substeps)
        for scheme, _, _ in self.schemes:
            extra.update(scheme.stats())
        extra.update(frame_diagnostics(self.scene, st.x, st.v, st.material))  # diagnostics.py
        for p in self.passes:
            extra.update(p.frame_stats(st))
        if len(self.colliders) > 1:
            extra["collider_overlaps"], self.reports.overlaps = self.reports.overlaps, 0
        sdf_build_s, self._sdf_build_s = self._sdf_build_s, 0.0
        return FrameStats(self.frame, st.n, substeps, speed, tuple(map(float, lo)), tuple(map(float, hi)),
                          removed, sdf_build_s, extra)

    def _watch_frame(self, substeps: int) -> None:
        """The end-of-frame blow-up checks (``blowup.BlowUpWatch.check_frame``)."""
        st = self.state
        mass = float(self.watch.densities.max(initial=0.0)) * self.spacing**3
        fps = self.scene.physics_fps
        given = self.bodies.work_given() if self.bodies else None
        work = collider_work(self.colliders, self.contacts, self.frame - 1, fps, mass, given) if substeps else 0.0
        lift = float(np.linalg.norm(self.gravity)) * max((f.params["nozzle_length"] for f in self.inflows),
                                                         default=0.0)
        self.watch.check_frame(self.frame, st.x, st.v, st.material, st.ids, st.next_id, work, lift,
                               self.count if substeps else None, self.ns)

    def cache_fields(self) -> dict[str, tuple[np.ndarray, str]]:
        """The models' extra per-particle fields for the particle frames: name -> (values, PLY dtype)."""
        out = {name: field for p in self.passes for name, field in p.cache_fields(self.state).items()}
        for model in self.models:
            for f in model.cache_fields:
                arr = self.state.arrays[f.array]
                out[f.name] = (arr if f.component is None else arr[:, f.component], f.dtype)
        return out

    # -- checkpoints (``checkpoint_state``) ---------------------------------------------------
    def checkpoint(self) -> tuple[dict[str, np.ndarray], dict]:
        """The full state: per-particle arrays (springs included) and scalars (JSON-safe)."""
        return checkpoint_state.capture(self)

    def restore(self, arrays: dict[str, np.ndarray], meta: dict) -> None:
        """Load a checkpoint made by :meth:`checkpoint` of the same scene."""
        checkpoint_state.restore(self, arrays, meta)
