"""Time stepping as objects: the schemes that advance particles, and the substep policy.

Each material model names the scheme that advances its particles
(``MaterialModel.integrator``, a key of :data:`INTEGRATORS`). The simulation
cuts a frame into substeps (:class:`SubstepPolicy`) and, in every substep,
finds neighbours once, then lets each scheme present in the scene advance its
own particles over the substep, in registry order. All particles meet at every
substep boundary, hence at frame boundaries.

* :class:`PredictionRelaxation`: Clavet 2005, thesis Algorithm 1 (gravity,
  velocity stage, prediction x += Δt v, position stage, collisions,
  v = (x - x_prev)/Δt).
* :class:`Leapfrog`: Desbrun & Cani 1996 section 5.2, individual time steps:
  each particle advances at its own power-of-two fraction Δt/2^l of the
  substep, with kick-drift-kick leapfrog (velocity Verlet, eqs. 9-10 in
  synchronised form); positions advance at the smallest step, forces are
  evaluated at each particle's own steps.

Coupling between schemes: each scheme moves only its particles, but its pair
terms reach every neighbour. A position constraint that displaces a particle
of another scheme is turned into a velocity impulse Δx/Δt on that particle
(its position is left to its own scheme), so momentum exchanged between
schemes is conserved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..models.base import MaterialModel, StepContext, WorldView

# collide(idx, t, dt): resolve collider contacts of particles ``idx`` (None: all) for the
# interval [t, t + dt], from ``x_prev`` (start) to ``x`` (predicted end), mutating ``x``.
Collide = Callable[[np.ndarray | None, float, float], None]


class Integrator:
    """A time-stepping scheme; one instance per bake advances all particles of its models.

    ``idx`` is None when the scheme owns every particle of the world (the common
    case, with no gathering), else the (k,) int64 indices of its particles.
    """

    name = ""
    # Finest level of individual time steps: a substep is cut into at most 2^max_level steps.
    max_level = 0

    def __init__(self, settings: dict | None = None):
        """``settings``: the scene's ``simulation`` section (what a scheme may be told by the scene)."""

    def begin(self, world: WorldView, idx: np.ndarray | None, dt: float, gravity: np.ndarray) -> None:
        """Before the neighbour search of a substep (which sorts on x + dt v)."""

    def advance(self, ctx: StepContext, models: Sequence[MaterialModel], idx: np.ndarray | None, t: float,
                collide: Collide) -> None:
        """Advance particles ``idx`` from t to t + ctx.dt."""
        raise NotImplementedError

    def stats(self) -> dict[str, int | float | list]:
        """Per-frame numbers for the manifest (JSON-safe)."""
        return {}


class PredictionRelaxation(Integrator):
    """Clavet 2005, thesis Algorithm 1; every constraint acts on predicted positions.

    Lines 1-2 (gravity) run in :meth:`begin`, before the neighbour search;
    lines 3-17 in :meth:`advance`: the models' velocity stages (viscosity
    impulses), x_prev = x, x += Δt v, the models' position stages (springs,
    double density relaxation), collisions, v = (x - x_prev)/Δt.
    """

    name = "prediction_relaxation"

    def begin(self, world, idx, dt, gravity):
        if idx is None:
            from ..numerics.array_kernels import add_to_rows

            add_to_rows(world.v, np.ascontiguousarray(dt * gravity, np.float64))
        else:
            world.v[idx] += dt * gravity

    def advance(self, ctx, models, idx, t, collide):
        dt = ctx.dt
        x, v, x_prev = ctx.x, ctx.v, ctx.arrays["x_prev"]
        for model in models:
            model.velocity_stage(ctx)
        if idx is None:
            from ..numerics.array_kernels import drift, velocities_from_positions

            drift(x, v, x_prev, dt)
            for model in models:
                model.position_stage(ctx)
            collide(None, t, dt)
            velocities_from_positions(x, x_prev, dt, v)
            return
        others = np.ones(ctx.n, bool)
        others[idx] = False
        x_prev[idx] = x[idx]
        x[idx] += dt * v[idx]
        held = x[others]
        for model in models:
            model.position_stage(ctx)
        v[others] += (x[others] - held) / dt
        x[others] = held
        collide(idx, t, dt)
        v[idx] = (x[idx] - x_prev[idx]) / dt


class Leapfrog(Integrator):
    """Individual power-of-two time steps with kick-drift-kick leapfrog (Desbrun & Cani 1996, 5.2).

    At the start of a substep Δt every particle gets a level l, the smallest with Δt/2^l below its
    models' stable step (``MaterialModel.particle_dt``) and 0.25 (s/|a|)^½ (s the spacing), at most
    :attr:`max_level`; then no particle stays more than two levels (a factor of 4 in step) below a
    neighbour (the limiter of Saitoh & Makino 2009, ApJ 697 L99: a slow particle must see a fast
    one arrive). The substep is cut into 2^L micro-steps (L the largest level); a particle of level
    l takes a step of Δt/2^l every 2^(L-l) micro-steps: half a kick with the acceleration at the
    start of its step, a drift at every micro-step (positions advance at the smallest step, as in
    the paper), half a kick with the acceleration at its end. With ``time_steps = "global"`` (a
    scene setting) every particle takes the smallest step: the same scheme, for comparison.

    Deviation: Desbrun's leapfrog keeps velocities at mid-step and corrects positions by
    (δt_new² - δt_old²)/8 · a when a particle's step changes; here velocities are synchronised at
    the end of every step (velocity Verlet, the same second-order scheme) and levels change only at
    substep boundaries, where every particle is synchronised, so no correction is needed. A
    particle's acceleration at the end of a substep is kept in the world array ``acceleration``
    when its model declares one (permuted and checkpointed with the world, so a resumed bake
    continues exactly) and opens the next substep's first step; particles without one (just
    emitted) are evaluated afresh. What a neighbour of another step length contributes is taken at
    its last evaluation (densities, pressures): momentum is exchanged exactly only between particles
    evaluated together (one level, or ``"global"``). The models' velocity-stage terms act at every
    micro-step, after the kicks that open steps and before the drift, with the micro-step as their
    step (first-order splitting; the accelerations' velocity-dependent part is not re-evaluated after
    them). The part of each acceleration the colliders exert (a model's walls) is kept beside it in
    ``wall_acceleration`` when the model declares that array: what the kicks give of it over the
    substep goes to the colliders' reports (``Walls.received``), so a collider or a body receives
    exactly what the particles got from it, with the opposite sign.
    """

    name = "leapfrog"
    max_level = 10
    # Largest level difference between neighbours (Saitoh & Makino 2009 allow a factor of 4).
    level_gap = 2

    def __init__(self, settings: dict | None = None):
        self.individual = (settings or {}).get("time_steps", "individual") != "global"
        self.levels: list[int] = []
        self.evaluations = 0
        self.micro_steps = 0

    def begin(self, world, idx, dt, gravity):
        self.gravity = np.ascontiguousarray(gravity, np.float64)

    def _accelerations(self, ctx: StepContext, models, owned, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 3) accelerations of particles ``rows``, gravity included."""
        out = np.empty((len(rows), 3))
        out[:] = self.gravity
        self.evaluations += len(rows)
        if len(models) == 1:
            part = np.zeros((len(rows), 3))
            models[0].accelerations(ctx, rows, part)
            out += part
            return out
        for model, mask in zip(models, owned):
            sel = mask[ctx.material[rows]]
            if sel.any():
                part = np.zeros((int(sel.sum()), 3))
                model.accelerations(ctx, rows[sel], part)
                out[sel] += part
        return out

    def _levels(self, ctx: StepContext, models, owned, rows: np.ndarray, acc: np.ndarray) -> np.ndarray:
        from .leapfrog_kernels import levels_from_steps, limit_neighbour_levels

        limit = np.full(len(rows), math.inf)
        for model, mask in zip(models, owned):
            sel = mask[ctx.material[rows]]
            if sel.all():
                limit = np.minimum(limit, model.particle_dt(ctx, rows))
            elif sel.any():
                limit[sel] = np.minimum(limit[sel], model.particle_dt(ctx, rows[sel]))
        level = np.empty(len(rows), np.uint8)
        levels_from_steps(ctx.dt, limit, acc, ctx.spacing, self.max_level, level)
        if not self.individual:
            level[:] = level.max()
            return level
        world = ctx.arrays.get("time_level")
        if world is None or len(world) != ctx.n:
            world = np.zeros(ctx.n, np.uint8)
        else:
            world[:] = 0
        new = np.empty_like(level)
        for _ in range(self.max_level):
            world[rows] = level
            limit_neighbour_levels(rows, ctx.nbr, ctx.count, world, self.level_gap, new)
            if np.array_equal(new, level):
                break
            level, new = new, level
        return level

    @staticmethod
    def _velocity_stage(ctx: StepContext, models, micro: float) -> None:
        """The models' velocity-stage terms (surface tension, the implicit yield solve) over one
        micro-step, on the velocities the drift is about to use: a stiff implicit term (a yield stress)
        then holds every drift, where once a substep the explicit forces' imbalance of the steps in
        between crept a lump down at a rate its yield stress did not change."""
        substep, ctx.dt = ctx.dt, micro
        for model in models:
            model.velocity_stage(ctx)
        ctx.dt = substep

    def advance(self, ctx, models, idx, t, collide):
        from .leapfrog_kernels import drift, ending, keep_collisions, kick

        rows = np.arange(ctx.n, dtype=np.int64) if idx is None else np.ascontiguousarray(idx, np.int64)
        if not len(rows):
            self.levels = []
            return
        x, v, x_prev = ctx.x, ctx.v, ctx.arrays["x_prev"]
        owned = []  # by material id (uint8): whether the model owns it
        for m in models:
            mask = np.zeros(256, bool)
            mask[list(m.setup.materials)] = True
            owned.append(mask)
        kept = ctx.arrays.get("acceleration")
        if kept is not None:
            acc = kept[rows]
            fresh = np.flatnonzero(~np.isfinite(acc[:, 0]))
            if len(fresh):
                acc[fresh] = self._accelerations(ctx, models, owned, rows[fresh])
        else:
            acc = self._accelerations(ctx, models, owned, rows)
        level = self._levels(ctx, models, owned, rows, acc)
        top = int(level.max())
        self.levels = np.bincount(level, minlength=top + 1).tolist()
        if "time_level" in ctx.arrays:
            ctx.arrays["time_level"][rows] = level
        micro = ctx.dt / (1 << top)
        half = 0.5 * ctx.dt
        out_rows = np.empty(len(rows), np.int64)
        out_pos = np.empty(len(rows), np.int64)
        # The colliders' share of the accelerations (a model's walls, ``wall_acceleration``): what the kicks
        # give of it is summed over the substep and reported to the colliders, equal and opposite.
        wall = ctx.arrays.get("wall_acceleration") if ctx.walls is not None else None
        given = np.zeros((len(rows) if wall is not None else 0, 3))
        if wall is None:
            wall = given
        for k in range(1 << top):
            kick(v, acc, rows, level, top, k, half, False, given, wall)
            self._velocity_stage(ctx, models, micro)
            drift(x, v, x_prev, rows, micro)
            collide(idx, t + k * micro, micro)
            keep_collisions(x, v, x_prev, rows, micro)
            m = ending(rows, level, top, k, out_rows, out_pos)
            acc[out_pos[:m]] = self._accelerations(ctx, models, owned, out_rows[:m])
            kick(v, acc, rows, level, top, k, half, True, given, wall)
        self.micro_steps += 1 << top
        if kept is not None:
            kept[rows] = acc
        if len(given):
            full = np.zeros((ctx.n, 3))
            full[rows] = given
            ctx.walls.received(x, full)

    def stats(self):
        out = {"time_levels": list(self.levels), "force_evaluations": self.evaluations,
               "micro_steps": self.micro_steps}
        self.evaluations = self.micro_steps = 0
        return out


INTEGRATORS: dict[str, type[Integrator]] = {
    PredictionRelaxation.name: PredictionRelaxation,
    Leapfrog.name: Leapfrog,
}


@dataclass(frozen=True)
class SubstepPolicy:
    """How many substeps a frame takes: fixed, or from the CFL rule, the models' limits and cost.

    Attributes
    ----------
    fixed : substeps per frame, 0 for automatic.
    cfl : largest distance a particle may travel in one substep, in spacings.
    min_substeps, max_substeps : bounds of the automatic choice.
    """

    fixed: int
    cfl: float
    min_substeps: int
    max_substeps: int

    @classmethod
    def from_settings(cls, sim: dict) -> SubstepPolicy:
        return cls(int(sim["substeps"]), float(sim["cfl"]), int(sim["min_substeps"]), int(sim["max_substeps"]))

    def choose(self, frame_dt: float, vmax: float, spacing: float, models: Sequence[MaterialModel],
               world: WorldView, previous: int = 0) -> int:
        """Substeps for a frame of ``frame_dt`` s whose fastest expected speed is ``vmax`` m/s.

        The CFL rule (no particle travels more than ``cfl`` spacings per substep)
        and each model's stability limit (``max_dt``) give a minimum; more
        substeps than that can be cheaper (Clavet's relaxation needs fewer passes
        per substep when substeps are short), so the cheapest count up to three
        times the minimum is taken (``work_per_substep``), unless ``previous`` (the last
        frame's count) is allowed and within ``config.SUBSTEP_HYSTERESIS`` of it.
        """
        from ..numerics import config

        if self.fixed > 0:
            return self.fixed
        n = math.ceil(vmax * frame_dt / (self.cfl * spacing) - 1e-9)
        for model in models:
            n = max(n, math.ceil(frame_dt / model.max_dt(world) - 1e-9))
        n = int(min(max(n, self.min_substeps), self.max_substeps))
        # The fixed work of a substep (neighbour search, collisions) counted once, whatever the models;
        # each model adds only its own (a block of another model beside the water leaves its choice alone).
        costs = {s: s * (1.0 + sum(m.work_per_substep(frame_dt / s) for m in models))
                 for s in range(n, min(3 * n, self.max_substeps) + 1)}
        best = min(costs, key=lambda s: (costs[s], s))
        if previous in costs and costs[previous] <= (1.0 + config.SUBSTEP_HYSTERESIS) * costs[best]:
            return previous
        return best
