"""The material models' former import path, ``core.solvers``: kept so that plug-ins written against it
still import (``core.solvers.SOLVERS``, ``core.solvers.base.MaterialModel``); the models live in
``core.models``."""

import importlib
import sys

from ..models import SOLVERS, model_setups, register, unregister  # noqa: F401

# ``core.solvers.base`` is the same module object as ``core.models.base``: one class for a plug-in and the engine.
for _name in ("base", "presets", "elastic_becker2009", "elastic_becker2009_parameters", "sph_desbrun1996",
              "sph_desbrun1996_parameters", "viscoelastic_clavet2005", "viscoelastic_clavet2005_parameters"):
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"..models.{_name}", __name__)
