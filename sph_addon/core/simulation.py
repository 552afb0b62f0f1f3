"""The step loop: sources -> neighbours -> velocity stage -> prediction -> position stage
-> collisions -> velocities from positions (Clavet 2005, thesis Algorithm 1).

One :class:`Simulation` owns the particle world of a scene. Each material model
in ``solvers.SOLVERS`` contributes to the velocity stage (forces, impulses) and
to the position stage (constraints on predicted positions); colliders act
after the models, then velocities are recovered from the positions, so the
integrator is the same for every model and force-based models (Desbrun-Cani's
``sph``, Becker's ``elastic``) plug into the velocity stage.

Deviation from Algorithm 1: the neighbour search runs once per substep, on
the positions predicted with gravity (x + Δt v), before the viscosity impulses.
The same neighbour rows then serve viscosity (evaluated at the current
positions), springs and relaxation (evaluated at the predicted positions), with
every pair distance recomputed and pairs beyond h skipped. Pairs that come
within h only through the viscosity update are picked up one substep later.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import config
from .colliders import COLLIDERS, BuildContext, Collider, Shape
from .errors import SimulationError
from .neighbors import NeighborSearch
from .scene import Scene
from .solvers import SOLVERS
from .sources import Inflow, fill_volume
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
    springs: int
    sdf_build_s: float = 0.0  # wall time spent building or loading collider SDFs for this frame, s

    def as_dict(self) -> dict:
        return {"frame": self.frame, "particles": self.particles, "substeps": self.substeps,
                "max_speed": round(self.max_speed, 6), "bounds_min": [round(b, 6) for b in self.bounds_min],
                "bounds_max": [round(b, 6) for b in self.bounds_max], "removed": self.removed,
                "springs": self.springs, "sdf_build_s": round(self.sdf_build_s, 6)}


class Simulation:
    """The particle world of one scene, advanced frame by frame.

    Attributes
    ----------
    scene : the validated scene.
    state : all particles (see ``state.ParticleState``).
    frame : the frame the state is at (starts at ``scene.frame_start``).
    h : interaction radius, m; spacing : particle spacing, m; radius : particle radius (spacing / 2), m.
    nbr, count : neighbour rows of the current substep.

    Parameters
    ----------
    scene : the validated scene.
    sdf_cache_dir : folder where mesh SDFs are reused across bakes and frames (the bake
        passes ``DIR/sdf``); None builds every field. Fields found there are read at
        once; new ones are written only from the first :meth:`advance_frame` on, so
        setting up a scene that turns out to be bad input writes nothing.
    """

    def __init__(self, scene: Scene, sdf_cache_dir: str | os.PathLike | None = None):
        from .colliders.sdf_cache import SDFCache

        self.scene = scene
        self.sdf_cache = SDFCache(Path(sdf_cache_dir), deferred=True) if sdf_cache_dir is not None else None
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
        self._index_of_id: np.ndarray | None = None
        self._contact = np.zeros(0, np.uint8)

        materials = [m.params for m in scene.materials]
        self.models = []
        for name in dict.fromkeys(m.model for m in scene.materials):
            owned = [m.model == name for m in scene.materials]
            self.models.append(SOLVERS[name].model_class(self, materials, owned))

        self.colliders = [self._build_collider(k, kind, p) for k, (kind, p) in enumerate(scene.colliders)]
        self.inflows: list[Inflow] = []
        for k, (kind, p) in enumerate(scene.sources):
            mat = scene.material_index(p["material"])
            if kind == "inflow":
                self.inflows.append(Inflow(k, mat, p, self.spacing))
                continue
            pts = fill_volume(kind, p, self.spacing, scene.base_dir, f"sources[{k}]", self._memory_budget)
            pts = pts[self._free_of_colliders(pts)]
            self.state.append(pts, np.broadcast_to(p["velocity"], pts.shape), mat, k)
        self._apply_domain()

    # -- construction helpers -------------------------------------------------------------
    @property
    def _memory_budget(self) -> int:
        return int(self.scene.simulation["memory_budget_mb"] * 2**20)

    def _build_collider(self, k: int, kind: str, p: dict) -> Collider:
        ctype = COLLIDERS[kind]
        ctx = BuildContext(base_dir=self.scene.base_dir, where=f"colliders[{k}]", spacing=self.spacing,
                           frame=self.frame, memory_budget=self._memory_budget, sdf_cache=self.sdf_cache)
        shape = self._timed_build(ctype.build, p, ctx)
        rebuild = None
        if ctype.deforming(p):
            def rebuild(frame: int, build=ctype.build, p=p, ctx=ctx) -> Shape:
                return build(p, dataclasses.replace(ctx, frame=frame))
        keys = p["keyframes"] or [{"frame": float(self.scene.frame_start), "position": p["position"],
                                   "rotation": p["rotation"]}]
        return Collider(
            name=p["name"] or f"{kind} {k}", shape=shape, friction=p["friction"], stickiness=p["stickiness"],
            stick_distance=p["stick_distance"] if p["stick_distance"] > 0 else 0.5 * self.spacing,
            key_frames=np.array([key["frame"] for key in keys], float),
            key_position=np.array([key["position"] for key in keys], float),
            key_rotation=np.array([key["rotation"] for key in keys], float),
            continuous=p["continuous"], rebuild=rebuild)

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
        from .colliders.response import distances

        keep = np.ones(len(pts), bool)
        if not len(pts):
            return keep
        for c in self.colliders:
            rot, pos = c.transform(float(self.scene.frame_start))
            local = np.ascontiguousarray((pts - pos) @ rot, dtype=np.float64)
            d = np.empty(len(local))
            distances(c.shape.sdf, c.shape.params, c.shape.grid, local, d)
            keep &= d >= 0.5 * self.radius
        return keep

    # -- the step -------------------------------------------------------------------------
    def index_of_id(self) -> np.ndarray:
        """(next_id,) int64 map from stable id to current index, -1 for removed particles."""
        if self._index_of_id is None:
            idx = np.full(self.state.next_id, -1, np.int64)
            idx[self.state.ids] = np.arange(self.state.n)
            self._index_of_id = idx
        return self._index_of_id

    def _frame_at(self, t: float) -> float:
        return self.scene.frame_start + t * self.scene.fps

    def step(self, dt: float) -> None:
        """Advance every particle by one substep ``dt`` (s): Clavet Algorithm 1."""
        st = self.state
        t = st.time
        for inflow in self.inflows:
            pts = inflow.emit(self._frame_at(t), t, dt)
            if pts is not None:
                st.append(pts, np.broadcast_to(inflow.direction * inflow.speed, pts.shape), inflow.material,
                          inflow.index)
        if st.n == 0:
            st.time = t + dt
            return
        st.v[:] += dt * self.gravity
        predicted = st.x + dt * st.v
        order = self.ns.sort(predicted)
        st.permute(order)
        predicted = predicted[order]
        self._index_of_id = None
        self.nbr, self.count = self.ns.lists(predicted, self.h)

        for model in self.models:
            model.velocity_stage(self, dt)
        st.arrays["x_prev"][:] = st.x
        st.x[:] += dt * st.v
        for model in self.models:
            model.position_stage(self, dt)
        self._collide(t, dt)
        st.v[:] = (st.x - st.arrays["x_prev"]) / dt
        st.time = t + dt
        self._apply_domain()

    def _collide(self, t: float, dt: float) -> None:
        if not self.colliders:
            return
        from .colliders.response import collide

        st = self.state
        if len(self._contact) != st.n:
            self._contact = np.zeros(st.n, np.uint8)
        self._contact[:] = 0
        f0, f1 = self._frame_at(t), self._frame_at(t + dt)
        for c in self.colliders:
            r0, t0 = c.transform(f0)
            r1, t1 = c.transform(f1)
            collide(c.shape.sdf, c.shape.params, c.shape.grid, r0, t0, r1, t1, st.x, st.arrays["x_prev"], dt,
                    self.radius, c.friction, c.stickiness, c.stick_distance, c.continuous, self._contact)

    def _apply_domain(self) -> None:
        dom = self.scene.domain
        if dom is None or self.state.n == 0:
            return
        x = self.state.x
        inside = np.all((x >= dom["min"]) & (x <= dom["max"]), axis=1)
        if not inside.all():
            self.state.keep(inside)
            self._index_of_id = None

    # -- frames ---------------------------------------------------------------------------
    def substeps_for_frame(self) -> int:
        """Fixed substeps, or automatic: the CFL rule (no particle travels more than ``cfl``
        spacings per substep) and each model's stability limit (``model.max_dt``)."""
        sim = self.scene.simulation
        if sim["substeps"] > 0:
            return int(sim["substeps"])
        frame_dt = 1.0 / self.scene.fps
        v = self.state.v
        vmax = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v)))) if self.state.n else 0.0
        # Gravity accelerates everything during the frame; emitters and colliders bring their own speed.
        vmax += float(np.linalg.norm(self.gravity)) * frame_dt
        for inflow in self.inflows:
            vmax = max(vmax, inflow.speed)
        for c in self.colliders:
            if c.moving:
                fr = self.frame
                _, p0 = c.transform(fr)
                _, p1 = c.transform(fr + 1)
                vmax = max(vmax, float(np.linalg.norm(p1 - p0)) * self.scene.fps)
        n = math.ceil(vmax * frame_dt / (sim["cfl"] * self.spacing) - 1e-9)
        for model in self.models:
            n = max(n, math.ceil(frame_dt / model.max_dt(self) - 1e-9))
        n = int(min(max(n, sim["min_substeps"]), sim["max_substeps"]))
        # More substeps than the CFL rule needs can be cheaper (fewer relaxation passes each):
        # take the cheapest count up to three times the minimum.
        costs = {s: sum(m.substep_cost(self, frame_dt, s) for m in self.models)
                 for s in range(n, min(3 * n, sim["max_substeps"]) + 1)}
        return min(costs, key=lambda s: (costs[s], s))

    def advance_frame(self) -> FrameStats:
        """Advance to the next frame; raise SimulationError on non-finite or runaway values."""
        if self.sdf_cache is not None and self.sdf_cache.deferred:
            # The bake is under way: the fields built while setting up may now be stored.
            self.sdf_cache.flush()
        self._rebuild_deforming(self.frame + 1)
        n_sub = self.substeps_for_frame()
        dt = 1.0 / (self.scene.fps * n_sub)
        removed_before = sum(self.state.removed.values())
        for _ in range(n_sub):
            self.step(dt)
        self.frame += 1
        return self.check_and_stats(n_sub, sum(self.state.removed.values()) - removed_before)

    def check_and_stats(self, substeps: int = 0, removed: int = 0) -> FrameStats:
        st = self.state
        if st.n:
            if not (np.isfinite(st.x).all() and np.isfinite(st.v).all()):
                raise SimulationError(self.frame, "non-finite positions or velocities (the simulation blew "
                                                  "up); try more substeps or a lower stiffness")
            speed = float(np.sqrt(np.max(np.einsum("ij,ij->i", st.v, st.v))))
            limit = self.scene.simulation["max_speed"]
            if speed > limit:
                raise SimulationError(self.frame, f"a particle reached {speed:.3g} m/s, above "
                                                  f"simulation.max_speed ({limit:g} m/s); try more substeps "
                                                  f"or a lower stiffness")
            lo, hi = st.x.min(axis=0), st.x.max(axis=0)
        else:
            speed, lo, hi = 0.0, np.zeros(3), np.zeros(3)
        springs = sum(m.spring_count(st) for m in self.models if hasattr(m, "spring_count"))
        sdf_build_s, self._sdf_build_s = self._sdf_build_s, 0.0
        return FrameStats(self.frame, st.n, substeps, speed, tuple(map(float, lo)), tuple(map(float, hi)),
                          removed, springs, sdf_build_s)

    # -- checkpoints ----------------------------------------------------------------------
    def checkpoint(self) -> tuple[dict[str, np.ndarray], dict]:
        """The full state: per-particle arrays (springs included) and scalars (JSON-safe)."""
        st = self.state
        meta = {"frame": self.frame, "time": st.time, "next_id": st.next_id,
                "removed": {str(k): v for k, v in st.removed.items()},
                "inflow_volume": [f.emitted_volume for f in self.inflows]}
        return dict(st.arrays), meta

    def restore(self, arrays: dict[str, np.ndarray], meta: dict) -> None:
        """Load a checkpoint made by :meth:`checkpoint` of the same scene."""
        st = self.state
        for name, arr in arrays.items():
            st.arrays[name] = np.ascontiguousarray(arr)
            st._specs[name] = (arr.shape[1:], arr.dtype)
        st.next_id = int(meta["next_id"])
        st.time = float(meta["time"])
        st.removed = {int(k): int(v) for k, v in meta["removed"].items()}
        self.frame = int(meta["frame"])
        for f, vol in zip(self.inflows, meta["inflow_volume"]):
            f.emitted_volume = float(vol)
        self._index_of_id = None
