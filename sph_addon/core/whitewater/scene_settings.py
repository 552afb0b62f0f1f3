"""The whitewater settings of a whole scene: the declared ``whitewater`` values with what the stage takes
from the rest of the scene (spacing, interaction radius, frame duration, gravity, liquid materials)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..scene.params import resolve
from ..scene.scene_file import SIMULATION_PARAMETERS, TOP_PARAMETERS
from .settings import WhitewaterSettings, liquid_materials, resolve_values


def whitewater_settings(scene: Mapping[str, Any]) -> WhitewaterSettings:
    """Resolve the whitewater settings of a scene's JSON object (InputError naming the first bad field)."""
    top = resolve(TOP_PARAMETERS, {p.name: scene[p.name] for p in TOP_PARAMETERS if p.name in scene}, "$")
    if "particle_spacing" not in scene:
        raise InputError("particle_spacing", "required (metres between particles)")
    sim = resolve(SIMULATION_PARAMETERS, scene.get("simulation"), "simulation")
    values = resolve_values(scene.get("whitewater"))
    spacing = float(top["particle_spacing"])
    return WhitewaterSettings(spacing=spacing, support=float(sim["support_factor"]) * spacing,
                              frame_time=float(sim["time_scale"]) / float(top["fps"]),
                              gravity=tuple(float(g) for g in sim["gravity"]),
                              liquid=liquid_materials(scene.get("materials")), **values)
