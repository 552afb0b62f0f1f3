"""Blow-ups caught by more than NaN and the speed limit (core/world/blowup.py).

Real blow-ups are hard to provoke since springs and viscosity became implicit, so the
detectors are driven by what a blow-up leaves behind (particles given 30 m/s, particles
scattered), and the scenes that legitimately gain energy (an inflow, a paddle) must pass.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from sph_addon.core.errors import SimulationError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.conftest import scene_dict


def _sim(**overrides) -> Simulation:
    sim = Simulation(parse_scene(scene_dict(**overrides)))
    sim.check_and_stats()  # the first frame's row: the energy budget starts here
    return sim


def test_energy_from_nowhere_is_a_blow_up_at_that_frame():
    sim = _sim(frame_end=10)
    sim.advance_frame()
    # What exploding springs left behind: every particle at 30 m/s, from no source.
    rng = np.random.default_rng(0)
    v = rng.normal(size=sim.state.v.shape)
    sim.state.v[:] = 30.0 * v / np.linalg.norm(v, axis=1, keepdims=True)
    frame = sim.frame + 1
    with pytest.raises(SimulationError, match="energy grew") as err:
        sim.advance_frame()
    assert err.value.frame == frame


def test_particles_scattered_apart_are_a_blow_up():
    sim = _sim(frame_end=10, colliders=[])
    sim.advance_frame()
    n = sim.state.n
    assert n >= 100
    # Flown apart at the same height and at rest: no energy gained, but no particle has a neighbour.
    side = int(np.ceil(np.sqrt(n)))
    k = np.arange(n)
    sim.state.x[:, 0] = (k % side) * 0.5
    sim.state.x[:, 1] = (k // side) * 0.5
    sim.state.x[:, 2] = 1.0
    sim.state.arrays["x_prev"][:] = sim.state.x
    sim.state.v[:] = 0.0
    with pytest.raises(SimulationError, match="flew apart"):
        sim.advance_frame()


def test_a_particle_crossing_several_radii_per_substep_stops_the_bake():
    sim = _sim(frame_end=10, simulation={"max_speed": 1e5})
    sim.state.v[:, 0] = 1e4
    with pytest.raises(SimulationError, match="max_substeps to at least"):
        sim.advance_frame()


_SMALL_DOMAIN = {"min": [-0.1, -0.1, -0.1], "max": [0.5, 0.5, 0.5]}  # 0.6 m high: a small energy scale


def _largest_gain(sim: Simulation, frames: int) -> float:
    """Largest energy gained since the first frame over ``frames`` frames, in the watch's scale."""
    start = sim.watch.budget
    gained = 0.0
    for _ in range(frames):
        sim.advance_frame()
        e, m = sim.watch.energies(sim.state.x, sim.state.v, sim.state.material)
        gained = max(gained, (float(e.sum()) - start) / (sim.watch.scale_per_kg * float(m.sum())))
    return gained


def test_a_paddle_brings_its_energy_without_a_false_alarm():
    """The paddle gives the pool more energy than the scale the watch allows, so without its
    work in the budget (from its contact reports) the watch would fire. The pool holds ~40
    particles, so the energy it keeps swings with a few of them: sweeping in 4 frames, the paddle
    gives 1.6 times the scale (2.8 with the relaxation's passes unaccelerated); in 6 frames,
    as this test first did, 0.9 (1.5)."""
    paddle = {"type": "box", "name": "paddle", "size": [0.05, 0.4, 0.3], "position": [0.0, 0.2, 0.15],
              "keyframes": [{"frame": 1, "position": [0.02, 0.2, 0.15], "rotation": [0, 0, 0]},
                            {"frame": 5, "position": [0.3, 0.2, 0.15], "rotation": [0, 0, 0]}]}
    sim = _sim(frame_end=12, colliders=scene_dict()["colliders"] + [paddle], domain=_SMALL_DOMAIN)
    assert _largest_gain(sim, 12) > 1.0


def test_an_inflow_brings_its_energy_without_a_false_alarm():
    inflow = {"type": "inflow", "material": "water", "shape": "disc", "center": [0.2, 0.2, 0.45], "radius": 0.05,
              "velocity": [0, 0, -6.0]}
    sim = _sim(frame_end=8, sources=[inflow], domain=_SMALL_DOMAIN)
    assert _largest_gain(sim, 8) > 1.0
    assert sim.watch.seen_id == sim.state.next_id


def test_the_surface_energy_a_liquid_releases_is_no_blow_up():
    """A box of liquid at γ = 100 N/m and ρ = 1 kg/m³ rounds off: the surface energy it loses moves it,
    more than the mechanical energy scale allows: with a budget of kinetic and gravitational energy
    only, the watch stopped it at its third frame. At 10 cm its surface tension is stable at the 53
    substeps a frame it gets (at 5 cm it needs 150 and preflight refuses fewer): motion, not a blow-up."""
    sim = _sim(frame_end=4, particle_spacing=0.1,
               materials=[{"name": "water", "preset": "water", "params": {"surface_tension": 100.0, "density": 1.0}}])
    e, m = sim.watch.energies(sim.state.x, sim.state.v, sim.state.material)
    start, scale = float(e.sum()), sim.watch.scale_per_kg * float(m.sum())
    gained = 0.0
    for _ in range(3):
        sim.advance_frame()
        e, _ = sim.watch.energies(sim.state.x, sim.state.v, sim.state.material)
        gained = max(gained, (float(e.sum()) - start) / scale)
    assert gained > 1.0


def test_the_density_error_bound_is_the_models():
    sim = _sim()
    model = sim.models[0]
    target = float(model.term("relaxation_clavet2005").target[0])
    assert target == 0.01
    assert model.failure({"density_error_mean": 5 * target}) is None
    assert "density error" in model.failure({"density_error_mean": 11 * target})


def test_validate_refuses_a_source_too_fast_for_the_substeps(write_scene):
    data = scene_dict(simulation={"max_speed": 1e5})
    data["sources"][0]["velocity"] = [1e4, 0, 0]
    path = write_scene(data)
    proc = subprocess.run([sys.executable, "-m", "sph_addon", "validate", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "sources[0].velocity" in proc.stderr and "max_substeps to at least" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_budget_survives_a_checkpoint():
    sim = _sim(frame_end=5)
    sim.advance_frame()
    arrays, meta = sim.checkpoint()
    meta = json.loads(json.dumps(meta))
    again = Simulation(parse_scene(scene_dict(frame_end=5)))
    again.restore(arrays, meta)
    assert again.watch.state_dict() == sim.watch.state_dict()


def test_a_stiff_target_at_one_substep_is_capped_and_reported_not_a_hang():
    """The old hang (stiffness 1e6 at one substep: ~9 million passes a substep): today the passes
    stop at the material's max_iterations, every capped substep is counted in the frame's stats,
    and the bake goes on. (16 passes at 0.02 %: the near density's passes hold 0.1 % within the
    old test's 20.) The relaxation alone: the grid projection takes most of this block's impact."""
    water = {"name": "water", "preset": "water",
             "params": {"max_iterations": 16, "density_error": 0.0002, "pressure_projection": "none"}}
    data = scene_dict(frame_end=6, simulation={"substeps": 1}, materials=[water])
    data["sources"][0]["velocity"] = [0, 0, -3]
    sim = _sim(**{k: v for k, v in data.items() if k in ("frame_end", "simulation", "materials", "sources")})
    stats = [sim.advance_frame() for _ in range(5)]
    assert all(s.extra["density_iterations_max"] <= 16 for s in stats)
    assert sum(s.extra["density_capped"] for s in stats) >= 3
