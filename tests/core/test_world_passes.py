"""The world passes (heat, phase, rigid bodies, outflows): one registration list, one lifecycle, an explicit
none, and the arrays they share with the terms declared with their writer and readers (``passes/base.py``)."""

from __future__ import annotations

import re

import numpy as np
from conftest import REPO, scene_dict

from sph_addon.core.models import SOLVERS
from sph_addon.core.passes.base import WORLD_ARRAYS, WorldPass
from sph_addon.core.passes.heat_parameters import MATERIAL_PARAMETERS
from sph_addon.core.passes.registry import WORLD_PASSES
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

CORE = REPO / "sph_addon" / "core"


def test_the_passes_are_registered_once_in_the_order_they_run():
    assert list(WORLD_PASSES) == ["heat", "phase", "bodies", "outflows"]
    for name, cls in WORLD_PASSES.items():
        assert issubclass(cls, WorldPass) and cls.name == name


def test_a_scene_that_gives_a_pass_nothing_to_do_has_it_as_none():
    """Plain water in a tank: every pass is built and none runs; no array, cache field, statistic or
    checkpoint entry of theirs appears."""
    sim = Simulation(parse_scene(scene_dict()))
    assert sim.passes == []
    assert not any(p.active for p in sim.world_passes.values())
    assert not {"temperature", "melt"} & set(sim.state.arrays)
    sim.advance_frame()
    assert not {"temperature", "melt"} & set(sim.cache_fields())
    _, meta = sim.checkpoint()
    assert not set(WORLD_PASSES) & set(meta)


def test_each_pass_runs_where_the_scene_needs_it():
    """A conducting jelly that melts into water beside a dynamic box and over an outflow: all four run, in
    the registered order, and the bodies alone keep a checkpoint entry."""
    data = scene_dict(
        frame_end=2,
        materials=[{"name": "water", "preset": "water", "params": {"thermal_conductivity": 0.6}},
                   {"name": "jelly", "model": "elastic", "preset": "jelly",
                    "params": {"density": 1000.0, "thermal_conductivity": 0.5, "melts_into": "water",
                               "liquidus": 30.0}}],
        sources=[{"type": "box", "material": "jelly", "min": [0.0, 0.0, 0.0], "max": [0.2, 0.2, 0.1],
                  "temperature": 40.0}],
        colliders=[{"type": "plane", "name": "floor"},
                   {"type": "box", "name": "crate", "size": [0.1, 0.1, 0.1], "position": [0.1, 0.1, 0.3],
                    "dynamic": True, "density": 500.0}],
        outflows=[{"type": "box", "name": "drain", "size": [0.1, 0.1, 0.1], "position": [2.0, 2.0, 2.0]}])
    sim = Simulation(parse_scene(data))
    assert [p.name for p in sim.passes] == ["heat", "phase", "bodies", "outflows"]
    sim.advance_frame()
    assert {"temperature", "melt"} <= set(sim.cache_fields())
    _, meta = sim.checkpoint()
    assert "bodies" in meta and not {"heat", "phase", "outflows"} & set(meta)
    assert np.all(sim.state.material == 0), "above its liquidus the jelly became water"


def test_every_model_carries_the_world_passes_parameters_declared_once():
    """The thermal and phase parameters come from the model base, after each model's own, read without
    silent defaults by the passes."""
    names = [p.name for p in MATERIAL_PARAMETERS]
    for model in SOLVERS.values():
        declared = [p.name for p in model.parameters]
        assert declared[-len(names):] == names, model.name
    for path in sorted((CORE / "models").glob("*.py")):
        assert "heat_parameters" not in path.read_text(encoding="utf-8") or path.name == "base.py", path.name
    for path in (CORE / "passes" / "heat.py", CORE / "passes" / "phase.py"):
        assert not re.search(r"getattr\(m\.params, \"\w+\", ", path.read_text(encoding="utf-8")), path.name


def _modules_touching(array: str) -> set[str]:
    """The term, pass and model modules (by file stem, ``_kernels`` folded into its term) that index the
    state's arrays with ``array``, by its literal name or a constant holding it."""
    constants = {"liquid_push": "LIQUID_PUSH", "grid_push": "GRID_PUSH"}
    pattern = re.compile(rf'\[\s*"{array}"\s*\]|\.get\(\s*"{array}"|"{array}" in \w+|'
                         rf'add_array\(\s*"{array}"' + (rf"|\b{constants[array]}\b" if array in constants else ""))
    found = set()
    for folder in ("terms", "passes", "models", "world", "boundary"):
        for path in sorted((CORE / folder).glob("*.py")):
            if pattern.search(path.read_text(encoding="utf-8")):
                found.add(path.stem.removesuffix("_kernels"))
    return found


def test_the_shared_arrays_have_their_declared_writer_and_readers_only():
    for spec in WORLD_ARRAYS:
        touching = _modules_touching(spec.name)
        assert spec.writer in touching, f"{spec.name}: its writer {spec.writer} never touches it"
        assert set(spec.readers) <= touching, f"{spec.name}: a declared reader never reads it"
        declared = {spec.writer, *spec.readers, *spec.adders}
        assert set(spec.adders) <= touching, f"{spec.name}: a declared adder never touches it"
        assert touching <= declared, f"{spec.name} is read or written by {sorted(touching - declared)}, undeclared"
