"""Registry of material models.

``SOLVERS`` maps a model name (the scene file's ``materials[i].model``) to its
spec: declared parameters (read without importing numba), presets, and the
stage class. Adding a model = a new module + one line here + tests; nothing
else changes (the ``sph`` model after Desbrun-Cani 1996 and the ``elastic``
model after Becker 2009 plug in here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..params import Parameter
from . import viscoelastic_clavet2005 as _visco
from .presets import VISCOELASTIC_PRESETS


@dataclass(frozen=True)
class ModelSpec:
    name: str
    parameters: tuple[Parameter, ...]
    model_class: type
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""


SOLVERS: dict[str, ModelSpec] = {
    _visco.NAME: ModelSpec(_visco.NAME, _visco.PARAMETERS, _visco.ViscoelasticModel, VISCOELASTIC_PRESETS,
                           "Clavet 2005 prediction-relaxation: liquids, honey, mud, slime, plasticine, jelly"),
}


def preset_names() -> list[str]:
    return sorted({p for spec in SOLVERS.values() for p in spec.presets})
