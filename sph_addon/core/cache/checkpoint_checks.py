"""Checks of a checkpoint's feature state before a resumed simulation sees it (DESIGN.md section 6).

``checks.check_checkpoint`` holds a checkpoint to the shapes and dtypes of the scene being resumed; the
features' values go through here: the partner ids the elastic rest state and the springs look up (a
compiled kernel indexes a (next_id,) table with them), the per-particle arrays of the models and the
world passes (finite, and within what a bake can write: temperatures above absolute zero, melt fractions
in 0..1, time levels up to the finest one, speeds under the scene's limit), and the dynamic bodies'
states. A failed check is an ``InputError`` naming the file and the field: exit 2, nothing written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..numerics.config import MAX_MAGNITUDE
from ..passes.heat_parameters import SOURCE_PARAMETERS
from ..world.integrators import Leapfrog

# Arrays of particle ids, -1 for a free slot: looked up in (next_id,) tables by compiled kernels.
PARTNER_ARRAYS = ("rest_partner", "spring_partner")
# Flags a model sets to 0 or 1.
FLAG_ARRAYS = ("bonded", "elastic_bonded")
# Velocity changes of the last substep, m/s: a change between two speeds the frame check holds under
# ``simulation.max_speed``, with room for what the substep's other stages add before that check.
VELOCITY_ARRAYS = ("elastic_dv", "liquid_push", "grid_push")
VELOCITY_SLACK = 4.0
# Accelerations kept from the last substep, m/s²; a row of NaN marks one not evaluated yet where the model
# declares that fill (``ArraySpec.fill``).
ACCELERATION_ARRAYS = ("acceleration", "wall_acceleration")
# A rotation matrix's entries are within ±1; the polar decomposition rounds a few ulps past it.
ROTATION_SLACK = 1e-6
# Every other float of the state is an SI quantity (positions, densities, pressures, momenta): the bound a
# scene file's numbers have, which no bake's state comes near. Beyond it a position divided by the
# support radius no longer fits the neighbour grid's integers (1e29 m raised a compiler error).
LARGEST = MAX_MAGNITUDE
# The fields of a body's state (``RigidBodyMotion.state_dict`` and ``Bodies.state_dict``) and their lengths.
BODY_VECTORS = {"com": 3, "q": 4, "v": 3, "omega": 3, "momentum": 3, "impulse": 3, "torque": 3}
QUATERNION_SLACK = 1e-6


@dataclass(frozen=True)
class Limits:
    """What a checkpoint of one scene may hold, from the simulation that restores it (:func:`limits_of`)."""

    max_speed: float           # m/s, the frame check's limit
    max_acceleration: float    # m/s², one that passes max_speed within the shortest step a bake takes
    coldest: float             # °C, absolute zero
    hottest: float             # °C, the highest temperature a scene may set (conduction makes none higher)
    frames: tuple[int, int]    # the scene's first and last frame
    bodies: dict[str, bool]    # collider index (as the checkpoint keys it) -> whether it is hinged
    colliders: int             # the scene's collider count
    sources: int = 0           # the scene's source count
    unset: frozenset[str] = frozenset()  # the models' arrays that NaN marks "not set" in (``ArraySpec.fill``)


def limits_of(sim) -> Limits:
    """The :class:`Limits` of a ``world.simulation.Simulation``."""
    s = sim.scene.simulation
    cap = s["substeps"] if s["substeps"] > 0 else s["max_substeps"]
    shortest = s["time_scale"] / (sim.scene.fps * cap * (1 << Leapfrog.max_level))
    temperature = next(p for p in SOURCE_PARAMETERS if p.name == "temperature")
    hinged = {str(b.k): b.motion.axis is not None for b in sim.bodies.bodies} if sim.bodies else {}
    unset = frozenset(name for m in sim.models for name, spec in m.active_arrays().items()
                      if isinstance(spec.fill, float) and math.isnan(spec.fill))
    return Limits(s["max_speed"], s["max_speed"] / shortest, temperature.minimum, temperature.maximum,
                  (sim.scene.frame_start, sim.scene.frame_end), hinged, len(sim.colliders),
                  len(sim.scene.sources), unset)


def check_feature_state(arrays: dict[str, np.ndarray], meta: dict, next_id: int, limits: Limits, path: Path) -> None:
    """The feature state of a checkpoint that ``checks.check_checkpoint`` accepted; InputError naming
    ``path`` and the field otherwise."""
    def bad(what: str) -> InputError:
        return InputError(str(path), f"damaged checkpoint: {what}; bake again with --force")

    for name in PARTNER_ARRAYS:
        if name in arrays:
            ids = arrays[name]
            if ids.size and not np.all((ids == -1) | ((ids >= 0) & (ids < next_id))):
                raise bad(f"array {name!r} holds ids outside -1 (a free slot) and 0..{next_id - 1}")
    source = arrays["source"]
    # The melt keys and the elastic bodies are looked up by source index.
    if source.size and (int(source.min()) < 0 or int(source.max()) >= limits.sources):
        raise bad(f"array 'source' holds indices outside the scene's {limits.sources} sources")
    _check_particle_values(arrays, limits, bad)
    for name, state in meta.get("models", {}).items():
        _check_model_state(state, f"models[{str(name)[:40]!r}]", bad)
    if limits.bodies:
        _check_bodies(meta.get("bodies"), limits, bad)


def _check_particle_values(arrays: dict[str, np.ndarray], limits: Limits, bad) -> None:
    """Finite floats within what a bake writes, flags of 0 or 1, time levels up to the finest."""
    def within(name: str, lo: float, hi: float, what: str) -> None:
        a = arrays.get(name)
        if a is not None and a.size and not (np.isfinite(a).all() and a.min() >= lo and a.max() <= hi):
            raise bad(f"array {name!r} holds {what}")

    speed = limits.max_speed
    if len(arrays["v"]) and float(np.sqrt(np.max(np.einsum("ij,ij->i", arrays["v"], arrays["v"])))) > speed:
        raise bad(f"array 'v' holds speeds above simulation.max_speed ({speed:g} m/s)")
    within("temperature", limits.coldest, limits.hottest,
           f"values that are not temperatures from {limits.coldest:g} °C (absolute zero) to {limits.hottest:g} °C")
    within("melt", 0.0, 1.0, "values that are not melt fractions from 0 to 1")
    within("rotation", -1.0 - ROTATION_SLACK, 1.0 + ROTATION_SLACK, "values that are not rotation entries (within ±1)")
    for name in VELOCITY_ARRAYS:
        within(name, -VELOCITY_SLACK * speed, VELOCITY_SLACK * speed,
               f"NaN, infinite or velocity changes beyond {VELOCITY_SLACK:g} x simulation.max_speed")
    top = Leapfrog.max_level
    if "time_level" in arrays and arrays["time_level"].size and int(arrays["time_level"].max()) > top:
        raise bad(f"array 'time_level' holds levels above the finest, {top}")
    for name in FLAG_ARRAYS:
        if name in arrays and arrays[name].size and int(arrays[name].max()) > 1:
            raise bad(f"array {name!r} holds values other than 0 and 1")
    for name in ACCELERATION_ARRAYS:
        a = arrays.get(name)
        if a is None or not a.size:
            continue
        set_rows = a[~np.isnan(a).all(axis=1)] if name in limits.unset else a
        if not (np.isfinite(set_rows).all() and np.abs(set_rows).max(initial=0.0) <= limits.max_acceleration):
            raise bad(f"array {name!r} holds NaN in part of a row, infinite values or accelerations beyond "
                      f"{limits.max_acceleration:.3g} m/s² (past simulation.max_speed in the shortest step)")
    checked = {"v", "temperature", "melt", "rotation", *VELOCITY_ARRAYS, *ACCELERATION_ARRAYS}
    for name, a in arrays.items():
        if name in checked or a.dtype.kind != "f" or not a.size:
            continue
        values = a[~np.isnan(a)] if name in limits.unset else a
        if not np.isfinite(values).all() or np.abs(values).max(initial=0.0) > LARGEST:
            raise bad(f"array {name!r} holds NaN, infinite values or values beyond {LARGEST:g}")


def _check_model_state(state: Any, where: str, bad) -> None:
    """A model's record (``MaterialModel.state_dict``): objects, each term's under its name, of what the
    terms measured last (iteration counts, steps in s): non-negative numbers within :data:`LARGEST`."""
    if not isinstance(state, dict):
        raise bad(f"{where} must be an object")
    for key, value in state.items():
        here = f"{where}.{str(key)[:40]}"
        if isinstance(value, dict):
            _check_model_state(value, here, bad)
        elif not (_number(value) and 0 <= value <= LARGEST):
            raise bad(f"{here} must be a non-negative number")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_bodies(states: Any, limits: Limits, bad) -> None:
    """``meta["bodies"]``: one state per dynamic collider of the scene, keyed by its index, every field a
    finite number or list of them, the quaternion of unit length, a hinge's pivot where there is one."""
    want = sorted(limits.bodies, key=int)
    if not isinstance(states, dict) or not states:
        raise bad(f"bodies must map the dynamic colliders {want} to their states")
    for key in states:
        if key not in limits.bodies:
            what = ("is not a dynamic collider" if str(key).isdigit() and int(key) < limits.colliders
                    else "is not a collider of the scene")
            raise bad(f"bodies[{str(key)[:20]!r}] {what}")
    for key in want:
        s = states.get(key)
        if not isinstance(s, dict):
            raise bad(f"bodies[{key!r}] must be the state of collider {key}")
        first, last = limits.frames
        if not (_number(s.get("frame")) and first <= s["frame"] <= last):
            raise bad(f"bodies[{key!r}].frame must be a frame number from {first} to {last}")
        fields = dict(BODY_VECTORS, **({"pivot": 3} if limits.bodies[key] else {}))
        for name, size in fields.items():
            v = s.get(name)
            if not (isinstance(v, list) and len(v) == size and all(map(_number, v))
                    and max(map(abs, v)) <= LARGEST):
                raise bad(f"bodies[{key!r}].{name} must be {size} finite numbers within ±{LARGEST:g}")
        norm = math.sqrt(sum(c * c for c in s["q"]))
        if abs(norm - 1.0) > QUATERNION_SLACK:
            raise bad(f"bodies[{key!r}].q must be a unit quaternion (its length is {norm:.6g})")
