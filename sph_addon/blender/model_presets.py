"""The registered models as the panel names them and their presets' values: what the properties and
the upgrade of older files (``migrate``) both read, kept apart so neither imports the other."""

from __future__ import annotations

from ..core.models import SOLVERS


def model_label(name: str) -> str:
    """The artist-facing name of a registered material model."""
    # MaterialModel declares label = "" by default: an empty label falls back to the name too.
    return getattr(SOLVERS[name], "label", "") or name.title()


def preset_values(model: str, preset: str) -> dict:
    """A model's parameter values under ``preset`` (its defaults for ``""`` or an unknown preset)."""
    spec = SOLVERS[model]
    values = {p.name: p.default for p in spec.parameters}
    values.update(spec.presets.get(preset, {}))
    return values


def preset_of(group) -> str:
    """The preset chosen in a model's settings group, ``""`` for a model without presets."""
    return group.preset if "preset" in group.bl_rna.properties else ""
