"""Declared whitewater settings (the scene file's top-level ``"whitewater"`` object).

Ihmsen, Akinci, Gissler & Teschner 2012, *Unified spray, foam and bubbles for
particle-based fluids*: the emission rates k_ta and k_wc, the clamp ranges
[τ_min, τ_max] of the three potentials, the lifetimes, the bubbles' buoyancy k_b
and drag k_d. The ranges' defaults are the paper's (trapped air 5-20, wave crest 2-8, kinetic energy
5-50). A range whose ``..._max`` is 0 is automatic (SPlisHSPlasH's
generator): τ_max = the mean over the bake's frames of that potential's largest
value, τ_min = 0.1 τ_max, never below the floors of :data:`AUTO_FLOORS`. This
module imports no numba, so the scene validator and the Blender UI read it cheaply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..scene.params import Parameter, resolve

# Bump when a change of the whitewater code changes its output for the same settings, so that
# whitewater files written by an older version are written again.
ALGORITHM_VERSION = 1

# Automatic ranges never normalise below the paper's lower bounds (trapped air 5 m/s, wave crest 2,
# kinetic energy 5 J/kg): a pool at rest has potentials of round-off size, and dividing by their
# maximum would turn that noise into full emission.
AUTO_FLOORS = {"trapped_air": 5.0, "wave_crest": 2.0, "kinetic_energy": 5.0}
POTENTIALS = ("trapped_air", "wave_crest", "kinetic_energy")

WHITEWATER_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("enable", False, label="Whitewater",
              description="Let the whitewater stage (python -m sph_addon whitewater DIR) add spray, foam and "
                          "bubbles to the baked frames (Ihmsen et al. 2012)."),
    Parameter("trapped_air_rate", 4000.0, "1/s", 0.0, 1e7, label="Trapped Air Rate",
              description="k_ta: particles a liquid particle emits per second at full trapped-air and kinetic "
                          "potentials (Ihmsen 2012, section 5: n_d = Φ_k (k_ta Φ_ta + k_wc Φ_wc) Δt)."),
    Parameter("wave_crest_rate", 50000.0, "1/s", 0.0, 1e7, label="Wave Crest Rate",
              description="k_wc: particles a liquid particle emits per second at full wave-crest and kinetic "
                          "potentials (Ihmsen 2012, section 5)."),
    Parameter("trapped_air_min", 5.0, "m/s", 0.0, 1e6, label="Trapped Air Min",
              description="τ_min of the trapped-air potential Σ|v_ij|(1 - v̂_ij·x̂_ij)W̃ (eq. 2): below it no "
                          "trapped air (ignored when trapped_air_max is 0)."),
    Parameter("trapped_air_max", 20.0, "m/s", 0.0, 1e6, label="Trapped Air Max",
              description="τ_max of the trapped-air potential: at and above it Φ_ta = 1; 0 = automatic (the "
                          "mean over the frames of its largest value, τ_min a tenth of it)."),
    Parameter("wave_crest_min", 2.0, "", 0.0, 1e6, label="Wave Crest Min",
              description="τ_min of the wave-crest potential Σ(1 - n̂_i·n̂_j)W̃ (eqs. 4-7) (ignored when "
                          "wave_crest_max is 0)."),
    Parameter("wave_crest_max", 8.0, "", 0.0, 1e6, label="Wave Crest Max",
              description="τ_max of the wave-crest potential; 0 = automatic."),
    Parameter("kinetic_energy_min", 5.0, "J/kg", 0.0, 1e8, label="Energy Min",
              description="τ_min of the kinetic energy per unit mass ½|v|² (the paper's ½ m|v|² divided by the "
                          "particle mass, so that it does not change with the resolution): slower liquid emits "
                          "nothing (5 J/kg: 3.2 m/s) (ignored when kinetic_energy_max is 0)."),
    Parameter("kinetic_energy_max", 50.0, "J/kg", 0.0, 1e8, label="Energy Max",
              description="τ_max of the kinetic energy per unit mass; 0 = automatic."),
    Parameter("lifetime_min", 2.0, "s", 0.0, 1e5, label="Lifetime Min",
              description="l_min: the shortest foam lifetime; a particle lives l_min + Φ_k U(0,1) (l_max - l_min) "
                          "seconds as foam (Ihmsen 2012, section 5)."),
    Parameter("lifetime_max", 5.0, "s", 0.0, 1e5, label="Lifetime Max",
              description="l_max: the longest foam lifetime."),
    Parameter("spray_drag", 0.0, "1/s", 0.0, 1e4, label="Spray Drag",
              description="Linear air drag of spray: dv/dt = g - k v (0: ballistic, v += Δt g)."),
    Parameter("bubble_buoyancy", 2.0, "", 0.0, 100.0, label="Bubble Buoyancy",
              description="k_b: a bubble's upward acceleration in units of gravity (dv/dt = -k_b g + ...)."),
    Parameter("bubble_drag", 50.0, "1/s", 0.0, 1e5, label="Bubble Drag",
              description="k_d: how fast a bubble takes the liquid's velocity, dv/dt = -k_b g + k_d (v_f - v); "
                          "it rises through still liquid at k_b g / k_d (0.39 m/s by default). The paper's k_d "
                          "(about 0.8) is a fraction per step, which ties the rise speed to the step."),
    Parameter("spray", True, label="Spray", description="Keep spray (fewer than 6 liquid neighbours)."),
    Parameter("foam", True, label="Foam", description="Keep foam (6 to 20 liquid neighbours)."),
    Parameter("bubbles", True, label="Bubbles", description="Keep bubbles (more than 20 liquid neighbours)."),
    Parameter("seed", 0, "", 0, 2**31 - 1, label="Seed",
              description="Random seed; a frame's emission depends on it and the frame number only."),
    Parameter("max_particles", 5_000_000, "", 0, 1e9, label="Max Particles",
              description="The most whitewater particles a frame holds (about 100 bytes each in memory, 37 "
                          "in the file): a frame's emission beyond it is dropped, the last emitters' first."),
    Parameter("substeps", 0, "", 0, 1000, label="Substeps",
              description="Whitewater steps per frame; 0 chooses them per frame so that no particle, liquid or "
                          "whitewater, moves more than two particle spacings in a step (at most 64)."),
)


@dataclass(frozen=True)
class WhitewaterSettings:
    """Resolved whitewater settings (SI units; a range with ``max`` 0 is automatic).

    Attributes
    ----------
    spacing : particle spacing of the bake, m.
    support : interaction radius h, m (the scene's support_factor × spacing).
    frame_time : physical seconds per frame (time_scale / fps).
    gravity : (3,) m/s².
    liquid : material ids that emit and carry whitewater.
    the others : the declared parameters (:data:`WHITEWATER_PARAMETERS`, where their defaults are: every
        field is given when the settings are resolved).
    """

    spacing: float
    support: float
    frame_time: float
    gravity: tuple[float, float, float]
    liquid: tuple[int, ...]
    trapped_air_rate: float
    wave_crest_rate: float
    trapped_air_min: float
    trapped_air_max: float
    wave_crest_min: float
    wave_crest_max: float
    kinetic_energy_min: float
    kinetic_energy_max: float
    lifetime_min: float
    lifetime_max: float
    spray_drag: float
    bubble_buoyancy: float
    bubble_drag: float
    spray: bool
    foam: bool
    bubbles: bool
    seed: int
    max_particles: int
    substeps: int
    enable: bool

    def digest(self) -> str:
        """A short hash of these settings and the algorithm version (what a whitewater file records)."""
        text = json.dumps({"v": ALGORITHM_VERSION, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def fixed_range(self, name: str) -> tuple[float, float] | None:
        """(τ_min, τ_max) of potential ``name`` set by the user, or None when automatic."""
        hi = getattr(self, f"{name}_max")
        return None if hi == 0 else (getattr(self, f"{name}_min"), hi)

    @property
    def automatic(self) -> bool:
        """Whether any range is automatic (the stage then reads every frame's potentials first)."""
        return any(self.fixed_range(n) is None for n in POTENTIALS)


def check_values(values: Mapping[str, Any], where: str = "whitewater") -> None:
    """Refuse inconsistent combinations (InputError naming the field)."""
    for name in POTENTIALS:
        lo, hi = values[f"{name}_min"], values[f"{name}_max"]
        if hi > 0 and lo >= hi:
            raise InputError(f"{where}.{name}_max", f"must be above {name}_min ({lo:g}), got {hi:g}; "
                                                    "0 makes the range automatic")
    if values["lifetime_max"] < values["lifetime_min"]:
        raise InputError(f"{where}.lifetime_max",
                         f"must not be below lifetime_min ({values['lifetime_min']:g} s), got "
                         f"{values['lifetime_max']:g} s")


def liquid_materials(materials: Any) -> tuple[int, ...]:
    """Ids of the scene's liquid materials: not an elastic solid (a model that keeps its shape), no
    yield stress, no cohesion, no springs (a lump or a goo does not foam)."""
    from ..models import SOLVERS

    out = []
    for k, item in enumerate(materials if isinstance(materials, list) else []):
        if not isinstance(item, Mapping):
            continue
        model, preset, params = item.get("model", "viscoelastic"), item.get("preset") or "", item.get("params")
        spec = SOLVERS.get(model) if isinstance(model, str) else None
        if spec is None or spec.keeps_shape:
            continue
        values = {p.name: p.default for p in spec.parameters}
        values.update(spec.presets.get(preset, {}) if isinstance(preset, str) else {})
        values.update(params if isinstance(params, Mapping) else {})
        if values.get("yield_stress", 0.0) or values.get("tensile_strength", 0.0) \
                or values.get("springs", "none") != "none":
            continue
        out.append(k)
    return tuple(out)


def resolve_values(block: Any, where: str = "whitewater") -> dict[str, Any]:
    """The declared values of a scene's ``whitewater`` object, checked (InputError naming the field)."""
    values = resolve(WHITEWATER_PARAMETERS, block, where)
    check_values(values, where)
    return values
