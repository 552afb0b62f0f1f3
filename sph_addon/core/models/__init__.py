"""Registry of material models: the one place a model is added.

``SOLVERS`` maps a model name (the scene file's ``materials[i].model``) to its
class (a :class:`base.MaterialModel`): declared parameters and presets (read
without importing numba: model modules import their kernels when built), the
arrays and cache fields it adds, its time-stepping scheme and its hooks.

The order of this dict is the order of the stages: in every substep the
models' velocity stages, then their position stages, run in registry order,
whatever order the scene lists its materials in. Adding a model = a new module
+ one line here + its tests (docs/adding_a_model.md).
"""

from __future__ import annotations

from .base import MaterialModel, ModelSetup
from .elastic_becker2009 import ElasticModel
from .sph_desbrun1996 import SphModel
from .viscoelastic_clavet2005 import ViscoelasticModel

SOLVERS: dict[str, type[MaterialModel]] = {
    ViscoelasticModel.name: ViscoelasticModel,
    ElasticModel.name: ElasticModel,
    SphModel.name: SphModel,
}


def register(model: type[MaterialModel]) -> type[MaterialModel]:
    """Add ``model`` to the registry (after the built-in ones); usable as a class decorator.

    For plug-ins and tests: a model registered at run time is validated, baked
    and checkpointed like a built-in one (the Blender UI is generated when the
    extension registers, so it sees models registered before that). Names Blender would refuse
    there raise ValueError here (``core.blender_names``).
    """
    if not model.name or model.name in SOLVERS:
        raise ValueError(f"model name {model.name!r} is empty or already registered")
    from ..scene.blender_names import check_model  # names Blender would refuse when the extension registers

    check_model(model, SOLVERS)
    SOLVERS[model.name] = model
    return model


def unregister(name: str) -> None:
    """Remove a model added with :func:`register`."""
    SOLVERS.pop(name, None)


def model_setups(materials, spacing: float, h: float, gravity: float) -> list[tuple[type[MaterialModel], ModelSetup]]:
    """(model class, its :class:`ModelSetup`) for each registered model that owns one of ``materials`` (the
    scene's, in order), in registry order: what a bake builds its models from."""
    kinds = [SOLVERS[m.model] for m in materials]
    densities = tuple(c.density_of(m.params) for c, m in zip(kinds, materials))
    solids = tuple(c.keeps_shape for c in kinds)
    out = []
    for name, cls in SOLVERS.items():
        owned = {k: m.params for k, m in enumerate(materials) if m.model == name}
        if owned:
            out.append((cls, ModelSetup(spacing, h, len(materials), owned, gravity, densities, solids)))
    return out
