"""``validate``'s estimate counts heat's conduction cycles (``passes.heat.substep_cycles``): a scene whose
diffusivity makes every substep take many explicit cycles is estimated that many times the work.

The cycles of a substep of dt are ceil(2 dt max diag_i / (ρ c)_i) (``heat.conduction_cycles``, shared
by the pass and the estimate); the estimate takes diag_i of a particle inside the lattice, k_i times
Σ_j V 2 |W'(r_j)| / r_j (``heat.interior_conductance``).
"""

from __future__ import annotations

import json
import math

import pytest
from conftest import scene_dict

from sph_addon.core.passes.heat import interior_conductance
from sph_addon.core.scene.preflight import check_bake

S = 0.05


def _scene(conductivity: float, density: float = 1.0) -> dict:
    """The water box in a tank held at 80 °C, of diffusivity k / (ρ c) with c = 1 J/(kg K)."""
    return scene_dict(frame_end=2, materials=[{"name": "water", "preset": "water", "params": {
        "thermal_conductivity": conductivity, "specific_heat": 1.0, "density": density}}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.4, 0.4, 1.0], "position": [0.2, 0.2, 0.5],
                    "heat_contact": True, "temperature": 80.0}])


def _estimate(tmp_path, data):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data))
    return check_bake(path)[1]


@pytest.mark.parametrize("diffusivity", [1e2, 1e4])
def test_the_estimate_grows_by_the_cycles_a_substep_takes(tmp_path, diffusivity):
    """A diffusivity of 10⁴ m²/s: 18,028 cycles per substep of 1/(30 x 64) s, each counted as a substep's
    work (the estimate said "up to 00:00" while one frame took over 16 minutes on the 2-core machine).
    Exact: the ratio is the cycle count, an integer from the formula; 0.6 W/(m K) at 1000 kg/m³ takes one."""
    low, high = _estimate(tmp_path, _scene(0.6, 1000.0)), _estimate(tmp_path, _scene(diffusivity))
    assert low.heat_cycles == 1
    dt = 1.0 / (30 * high.substeps)
    assert high.heat_cycles == math.ceil(2.0 * dt * diffusivity * interior_conductance(S, 2 * S))
    assert high.work == pytest.approx(low.work * high.heat_cycles, rel=1e-12)
    assert high.seconds == pytest.approx(low.seconds * high.heat_cycles, rel=1e-12)  # what validate prints


def test_the_estimated_cycles_are_what_a_bake_takes(tmp_path):
    """One frame baked at a diffusivity of 1 m²/s: the bake counts 145 cycles (4 substeps of 36 or 37),
    the estimate 64 x 2 = 128. The estimate takes a particle inside the water; the ones at the held walls
    conduct more (their diagonal holds the walls' gain), so the bake may take more: within 1.5 times."""
    from sph_addon.core.bake import bake

    est = _estimate(tmp_path, _scene(1.0))
    manifest = bake(tmp_path / "scene.json", tmp_path / "cache")
    baked = manifest["stats"]["2"]["heat_cycles"]
    assert est.substeps * est.heat_cycles <= baked <= 1.5 * est.substeps * est.heat_cycles, (baked, est)
