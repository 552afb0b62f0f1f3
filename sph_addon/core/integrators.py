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

from .solvers.base import MaterialModel, StepContext, WorldView

# collide(idx, t, dt): resolve collider contacts of particles ``idx`` (None: all) for the
# interval [t, t + dt], from ``x_prev`` (start) to ``x`` (predicted end), mutating ``x``.
Collide = Callable[[np.ndarray | None, float, float], None]


class Integrator:
    """A time-stepping scheme; one instance per bake advances all particles of its models.

    ``idx`` is None when the scheme owns every particle of the world (the common
    case, with no gathering), else the (k,) int64 indices of its particles.
    """

    name = ""

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
            from .array_kernels import add_to_rows

            add_to_rows(world.v, np.ascontiguousarray(dt * gravity, np.float64))
        else:
            world.v[idx] += dt * gravity

    def advance(self, ctx, models, idx, t, collide):
        dt = ctx.dt
        x, v, x_prev = ctx.x, ctx.v, ctx.arrays["x_prev"]
        for model in models:
            model.velocity_stage(ctx)
        if idx is None:
            from .array_kernels import drift, velocities_from_positions

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

    At the start of a substep Δt every particle gets a level l, the smallest
    with Δt/2^l below its models' stable step (``MaterialModel.particle_dt``),
    at most :attr:`max_level`. The substep is cut into 2^L micro-steps (L the
    largest level); a particle of level l takes a step of Δt/2^l every
    2^(L-l) micro-steps: half a kick with the acceleration at the start of its
    step, a drift at every micro-step (positions advance at the smallest step,
    as in the paper), half a kick with the acceleration at its end.

    Deviation: Desbrun's leapfrog keeps velocities at mid-step and corrects
    positions by (δt_new² - δt_old²)/8 · a when a particle's step changes; here
    velocities are synchronised at the end of every step (velocity Verlet, the
    same second-order scheme) and levels change only at substep boundaries,
    where every particle is synchronised, so no correction is needed. The
    acceleration at the start of a substep is evaluated afresh (one extra
    evaluation per substep) so that nothing but positions and velocities
    carries over, and a resumed bake continues exactly.
    """

    name = "leapfrog"
    max_level = 10

    def __init__(self):
        self.levels: list[int] = []

    def begin(self, world, idx, dt, gravity):
        self.gravity = gravity

    def _accelerations(self, ctx: StepContext, models, owned, idx: np.ndarray) -> np.ndarray:
        out = np.zeros((len(idx), 3))
        out[:] = self.gravity
        for model, mats in zip(models, owned):
            sel = np.isin(ctx.material[idx], mats)
            if sel.any():
                part = np.zeros((int(sel.sum()), 3))
                model.accelerations(ctx, idx[sel], part)
                out[sel] += part
        return out

    def _levels(self, ctx: StepContext, models, owned, idx: np.ndarray) -> np.ndarray:
        limit = np.full(len(idx), math.inf)
        for model, mats in zip(models, owned):
            sel = np.isin(ctx.material[idx], mats)
            if sel.any():
                limit[sel] = np.minimum(limit[sel], model.particle_dt(ctx, idx[sel]))
        with np.errstate(divide="ignore"):
            level = np.ceil(np.log2(ctx.dt / limit) - 1e-12)
        return np.clip(level, 0, self.max_level).astype(np.int64)

    def advance(self, ctx, models, idx, t, collide):
        if idx is None:
            idx = np.arange(ctx.n)
        if not len(idx):
            self.levels = []
            return
        x, v, x_prev = ctx.x, ctx.v, ctx.arrays["x_prev"]
        owned = [np.fromiter(m.setup.materials, np.int64) for m in models]
        level = self._levels(ctx, models, owned, idx)
        top = int(level.max())
        self.levels = np.bincount(level, minlength=top + 1).tolist()
        micro = ctx.dt / (1 << top)
        stride = np.left_shift(1, top - level)
        half_step = (0.5 * ctx.dt / np.left_shift(1, level))[:, None]
        acc = self._accelerations(ctx, models, owned, idx)
        for k in range(1 << top):
            start = k % stride == 0
            v[idx[start]] += half_step[start] * acc[start]
            x_prev[idx] = x[idx]
            x[idx] += micro * v[idx]
            drifted = x[idx]
            collide(idx, t + k * micro, micro)
            v[idx] += (x[idx] - drifted) / micro
            end = (k + 1) % stride == 0
            acc[end] = self._accelerations(ctx, models, owned, idx[end])
            v[idx[end]] += half_step[end] * acc[end]

    def stats(self):
        return {"time_levels": list(self.levels)}


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
        from . import config

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
