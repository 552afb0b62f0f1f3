"""One frame of whitewater: emit from the earlier baked frame, then advance every particle to the later one
in substeps, the liquid between the two frames interpolated linearly in time (Ihmsen et al. 2012).

The frame's state at frame f is what frame f-1's particles and emission become over [f-1, f]; the first
baked frame has none.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from .advection import BUBBLE_ABOVE, FULL_NEIGHBOURS, SPRAY_BELOW, substep
from .boundaries import Boundaries
from .emission import EMIT_MIN_NEIGHBOURS, emission_counts, emit
from .liquid_field import LiquidField
from .potentials import potentials
from .settings import WhitewaterSettings
from .state import WhitewaterState

log = logging.getLogger(__name__)

MAX_SUBSTEPS = 64  # automatic substeps stop here (a step may then move a particle farther than STEP_SPACINGS)
# Automatic substeps: the farthest a particle moves in one, in particle spacings: the default interaction
# radius, the reach of the liquid field a particle samples.
STEP_SPACINGS = 2.0


@dataclass
class Liquid:
    """The liquid particles of one baked frame: positions (n, 3) m and velocities (n, 3) m/s."""

    frame: int
    x: np.ndarray
    v: np.ndarray


def neighbour_scale(settings: WhitewaterSettings) -> float:
    """The paper's neighbour thresholds hold for about 30 neighbours in a full support; ours holds the
    lattice sites of a sphere of radius h: the thresholds scale with its volume."""
    sites = 4.0 / 3.0 * math.pi * (settings.support / settings.spacing) ** 3
    return sites / (4.0 / 3.0 * math.pi * 8.0) * (FULL_NEIGHBOURS / 32.0)


def substeps(settings: WhitewaterSettings, state: WhitewaterState, fields: tuple[LiquidField, ...]) -> int:
    """The frame's steps: the setting, or enough that nothing moves more than ``STEP_SPACINGS`` in one."""
    if settings.substeps > 0:
        return settings.substeps
    speed = max([f.max_speed for f in fields] + [float(np.sqrt((state.v ** 2).sum(axis=1)).max())
                                                  if len(state) else 0.0])
    # Spray also gains g Δt over the frame.
    speed += math.hypot(*settings.gravity) * settings.frame_time
    return int(min(MAX_SUBSTEPS, max(1, math.ceil(speed * settings.frame_time / (STEP_SPACINGS * settings.spacing)))))


def emitted(liquid: Liquid, settings: WhitewaterSettings, ranges: dict, next_id: int, room: int,
            field: LiquidField | None = None) -> WhitewaterState:
    """The particles ``liquid`` emits over one frame (``emission``), ids from ``next_id``, at most ``room``
    of them (the first in emission order); ``field``: its sorted frame, reused."""
    scale = neighbour_scale(settings)
    pot = potentials(liquid.x, liquid.v, settings.support, ranges["kinetic_energy"][0], field)
    n_d, phi_k = emission_counts(pot, ranges, settings.trapped_air_rate, settings.wave_crest_rate,
                                 settings.frame_time, EMIT_MIN_NEIGHBOURS * scale)
    x, v, life = emit(liquid.x, liquid.v, n_d, phi_k, 0.5 * settings.spacing, settings.frame_time,
                      (settings.lifetime_min, settings.lifetime_max), settings.seed, liquid.frame)
    if len(x) > room:
        log.warning("frame %d: %d whitewater particles emitted, %d kept (whitewater.max_particles)", liquid.frame,
                    len(x), max(room, 0))
        x, v, life = x[:max(room, 0)], v[:max(room, 0)], life[:max(room, 0)]
    m = len(x)
    return WhitewaterState(x, v, np.zeros(m, np.uint8), np.zeros(m), life,
                           (next_id + np.arange(m, dtype=np.int64)).astype(np.uint32), next_id + m)


def _join(a: WhitewaterState, b: WhitewaterState) -> WhitewaterState:
    return WhitewaterState(np.concatenate([a.x, b.x]), np.concatenate([a.v, b.v]),
                           np.concatenate([a.kind, b.kind]), np.concatenate([a.age, b.age]),
                           np.concatenate([a.life, b.life]), np.concatenate([a.ids, b.ids]), b.next_id)


def _kept(state: WhitewaterState, alive: np.ndarray, settings: WhitewaterSettings) -> np.ndarray:
    """Alive, a type that is kept, and foam not older than its lifetime."""
    keep = alive & ~((state.kind == 1) & (state.age >= state.life))
    for k, on in enumerate((settings.spray, settings.foam, settings.bubbles)):
        if not on:
            keep &= state.kind != k
    return keep


def advance_frame(state: WhitewaterState, a: Liquid, b: Liquid, settings: WhitewaterSettings, ranges: dict,
                  boundaries: Boundaries, fields: dict | None = None) -> WhitewaterState:
    """The whitewater at frame ``b.frame`` from the state at ``a.frame`` (one frame earlier).

    Parameters
    ----------
    state : the particles at ``a.frame``.
    a, b : the liquid at the two frames.
    settings : resolved settings.
    ranges : {potential name: (τ_min, τ_max)} (``stage.potential_ranges``).
    boundaries : the domain and colliders.
    fields : {frame: LiquidField} of frames sorted already (a chain passes frame b's on to the next frame);
        updated to hold ``b.frame``'s only.
    """
    h = settings.support
    fields = {} if fields is None else fields
    field_a = fields.get(a.frame) or LiquidField(a.x, a.v, h)
    field_b = fields.get(b.frame) or LiquidField(b.x, b.v, h)
    fields.clear()
    fields[b.frame] = field_b
    state = _join(state, emitted(a, settings, ranges, state.next_id, settings.max_particles - len(state), field_a))
    n = substeps(settings, state, (field_a, field_b))
    dt = settings.frame_time / n
    g = np.array(settings.gravity, np.float64)
    scale = neighbour_scale(settings)
    motion = (settings.spray_drag, settings.bubble_buoyancy, settings.bubble_drag, SPRAY_BELOW * scale,
              BUBBLE_ABOVE * scale)
    alive = np.ones(len(state), bool)
    wall = boundaries.apply(state.x, state.v, state.kind, alive, a.frame, h)
    for k in range(n):
        # The type a particle moved as over the frame's last step is the one its file records: a pass that
        # only classified at the frame's end would cost a step's sampling (the next frame classifies anyway).
        substep(state.x, state.v, state.kind, state.age, alive, wall, field_a.arrays(), field_b.arrays(), h,
                k / n, True, dt, g, motion, boundaries.arrays(a.frame + (k + 1) / n, h))
        keep = _kept(state, alive, settings)
        if not keep.all():
            state, wall, alive = state.take(keep), wall[keep], alive[keep]
    return state
