"""The water preset as shipped (grid pressure projection on) floats what it should, rigid and elastic alike.

The grid sees a free body (its lattice of points) and an elastic solid (its particles) as fluid of their own
density on its cells (``terms/pressure_projection_zhu2005_solids.py``): a 10 cm box and a 10 cm jelly cube of
500 kg/m³ side by side in a 16 cm pool settle half under the free surface, read a body width away; and in a
closed tank without gravity the momentum of water, crate, jelly and tank is kept.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.conftest import scene_dict

SPACING = 0.02
SIDE = 0.1


def _pool(rho: float) -> dict:
    """A 16 cm pool of the water preset as shipped in a 0.8 x 0.3 m tank, a box (dynamic collider) and a jelly
    cube (elastic, E = 0.1 MPa) of density ``rho``, 10 cm each, dropped 1 cm onto it 40 cm apart."""
    return scene_dict(
        particle_spacing=SPACING, fps=24, frame_end=200,
        materials=[{"name": "water", "preset": "water"},
                   {"name": "jelly", "model": "elastic", "preset": "rubber",
                    "params": {"density": rho, "youngs_modulus": 1e5, "damping_time": 0.02}}],
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.8, 0.3, 0.16]},
                 {"type": "box", "material": "jelly", "min": [0.55, 0.1, 0.17], "max": [0.65, 0.2, 0.27]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.8, 0.3, 0.6], "position": [0.4, 0.15, 0.3]},
                   {"type": "box", "name": "crate", "size": [SIDE] * 3, "position": [0.15, 0.15, 0.22],
                    "dynamic": True, "density": rho}])


def test_a_body_or_a_solid_in_gridded_water_is_not_warned_about(caplog):
    """Nothing is left unseen by the grid, so the scene says nothing about floating."""
    with caplog.at_level(logging.WARNING):
        parse_scene(_pool(500.0))
    assert "float" not in caplog.text


@pytest.fixture(scope="module")
def drafts() -> tuple[float, float]:
    """Bake the pool 3 s: the box's and the jelly's submerged share of their height over the last half
    second, below the free surface read between them (the water's 95th height percentile there, plus
    half a spacing: the surface layer's top)."""
    sim = Simulation(parse_scene(_pool(500.0)))
    rigid, elastic = [], []
    for frame in range(72):
        sim.advance_frame()
        if frame < 60:
            continue
        x, m = sim.state.x, sim.state.material
        water = x[m == 0]
        between = water[(water[:, 0] > 0.3) & (water[:, 0] < 0.45)]
        surface = np.percentile(between[:, 2], 95) + 0.5 * SPACING
        rigid.append((surface - (sim.bodies.bodies[0].motion.com[2] - 0.5 * SIDE)) / SIDE)
        elastic.append((surface - (x[m == 1, 2].mean() - 0.5 * SIDE)) / SIDE)
    assert np.all(np.isfinite(sim.state.x))
    return float(np.mean(rigid)), float(np.mean(elastic))


def test_a_box_and_a_jelly_of_half_the_waters_density_float_half_under(drafts):
    """Archimedes: 0.5 of the height under the surface, within 0.05 (measured 0.54 and 0.53 at this
    spacing, 5 particles across: ``scripts/benchmarks/floating_drafts.py``), and the two within 0.03 of
    each other (measured 0.005): the grid treats the box's points and the jelly's particles alike."""
    rigid, elastic = drafts
    assert rigid == pytest.approx(0.5, abs=0.05)
    assert elastic == pytest.approx(0.5, abs=0.05)
    assert abs(rigid - elastic) < 0.03


def test_a_box_and_a_jelly_twice_as_dense_as_the_water_rest_still_on_the_floor():
    """2,000 kg/m³ in the same pool, on a tank floor with friction 0.5 (the box's own ``body_friction`` is
    0.5 too): both sink to the floor (the box's bottom within 1 mm of it, the jelly's bottom particles
    within 1 mm of half a spacing above it) and stay there while the water their fall set sloshing still
    moves at 3 cm/s on average. Between 2 s and 3 s their centres move less than 1 mm/s averaged over the
    second (measured: box 0, jelly 0.03 mm/s); the jelly's particles, jiggled by the slosh, stay under
    5 mm/s rms (measured 0.8-1.4 mm/s). On a frictionless floor the jelly slides with the slosh at
    4 mm/s, as it should."""
    data = _pool(2000.0)
    data["colliders"][0]["friction"] = 0.5
    sim = Simulation(parse_scene(data))
    centres = {}
    for frame in range(1, 73):
        sim.advance_frame()
        x, v, m = sim.state.x, sim.state.v, sim.state.material
        if frame in (48, 72):
            centres[frame] = (sim.bodies.bodies[0].motion.com.copy(), x[m == 1].mean(axis=0))
            assert sim.bodies.bodies[0].motion.com[2] - 0.5 * SIDE == pytest.approx(0.0, abs=1e-3)
            assert x[m == 1, 2].min() == pytest.approx(0.5 * SPACING, abs=1e-3)
            assert np.sqrt((v[m == 1] ** 2).sum(axis=1).mean()) < 5e-3
    assert np.linalg.norm(v[m == 0], axis=1).mean() > 0.01, "the water still sloshes"
    for before, after in zip(centres[48], centres[72]):
        assert np.linalg.norm(after - before) < 1e-3 * 1.0


@pytest.mark.parametrize("projection", ["grid", "none"])
def test_in_a_closed_tank_without_gravity_water_crate_jelly_and_tank_keep_the_momentum(projection):
    """No gravity, water (the preset, grid on and off) on the floor of a closed tank, a crate thrown into it
    at 1 m/s and a jelly cube (rubber, 500 kg/m³: half the water's particle mass) thrown into it at 0.5 m/s:
    the particles' Σ m v (the jelly's with the pushes its solve takes at the next substep), the crate's M V
    and the impulse it has not yet taken, plus what the tank received from the particles less what it gave
    the crate, stay the initial momentum to 1e-6 of it every frame. Measured: 4e-9 on either projection;
    1.2e-2 (none) while XSPH and the implicit viscosity changed the velocities of a water-jelly pair
    equally and oppositely. The jelly stays off the walls (the tank's report is in the water's particle
    mass) and enters the water."""
    data = scene_dict(
        particle_spacing=0.025, fps=24, frame_end=20, simulation={"gravity": [0.0, 0.0, 0.0]},
        materials=[{"name": "water", "preset": "water", "params": {"pressure_projection": projection}},
                   {"name": "jelly", "model": "elastic", "preset": "rubber",
                    "params": {"density": 500.0, "youngs_modulus": 1e5, "damping_time": 0.02}}],
        sources=[{"type": "box", "material": "water", "min": [0.1, 0.05, 0.0], "max": [0.3, 0.25, 0.2]},
                 {"type": "box", "material": "jelly", "min": [0.32, 0.1, 0.1], "max": [0.42, 0.2, 0.2],
                  "velocity": [-0.5, 0.0, 0.0]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.5, 0.5, 0.3], "position": [0.25, 0.25, 0.15]},
                   {"type": "box", "name": "crate", "size": [0.06, 0.06, 0.06], "position": [0.2, 0.4, 0.15],
                    "dynamic": True, "density": 500.0, "linear_velocity": [0.0, -1.0, 0.0]}])
    sim = Simulation(parse_scene(data))

    def momentum():
        jelly = sim.state.material == 1
        mass = sim._particle_mass[sim.state.material]
        pending = sum(sim.state.arrays[name] for name in ("liquid_push", "grid_push"))
        body = sum(b.motion.mass * b.motion.v + b.impulse for b in sim.bodies.bodies)
        return (mass[:, None] * (sim.state.v + np.where(jelly[:, None], pending, 0.0))).sum(axis=0) + body

    start = momentum()
    scale = float(np.linalg.norm(start))
    tank_took, tank_gave = np.zeros(3), np.zeros(3)
    solves, closest = 0, np.inf
    for _ in range(8):
        solves += sim.advance_frame().extra.get("projection_iterations", 0)
        closest = min(closest, sim.bodies.bodies[0].motion.com[1] - 0.03)
        tank_took += sim._particle_mass[0] * sim.contacts[0].impulse
        tank_gave += sim.bodies.contact_impulse[0]
        assert np.abs(momentum() + tank_took - tank_gave - start).max() < 1e-6 * scale
    jelly = sim.state.x[sim.state.material == 1]
    assert jelly.min() > 0.05 and (np.array([0.5, 0.5, 0.3]) - jelly).min() > 0.05, "the jelly stayed off the walls"
    assert jelly[:, 0].min() < 0.28, "the jelly entered the water (its edge past the water's at 0.3 m)"
    assert closest < 0.25, "the crate reached the water (its near face past the water's edge at 0.25 m)"
    assert (solves > 0) == (projection == "grid"), "the water rests on the floor: the grid projects it"


def test_a_keyframed_paddle_pushes_the_gridded_water_and_takes_its_reaction():
    """No gravity, water (the preset, grid on) on the floor of a closed tank and a keyframed plate driven
    through it at 0.5 m/s: the grid projects every frame with the plate's cells as solid cells moving with
    it, the water ahead of it moves, and the water's momentum is what the tank and the plate received,
    reversed, to 1e-6 (their contact reports per unit particle mass): the moving faces' reaction is
    accounted for."""
    data = scene_dict(
        particle_spacing=0.025, fps=24, frame_end=20, simulation={"gravity": [0.0, 0.0, 0.0]},
        materials=[{"name": "water", "preset": "water"}],
        sources=[{"type": "box", "material": "water", "min": [0.0, 0.0, 0.0], "max": [0.5, 0.3, 0.15]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.5, 0.3, 0.4], "position": [0.25, 0.15, 0.2]},
                   {"type": "box", "name": "plate", "size": [0.02, 0.2, 0.2], "position": [0.1, 0.15, 0.1],
                    "keyframes": [{"frame": 1, "position": [0.1, 0.15, 0.1], "rotation": [0, 0, 0]},
                                  {"frame": 13, "position": [0.35, 0.15, 0.1], "rotation": [0, 0, 0]}]}])
    sim = Simulation(parse_scene(data))
    mass = sim._particle_mass[sim.state.material]
    received = np.zeros(3)
    solves = 0
    for _ in range(8):
        solves += sim.advance_frame().extra.get("projection_iterations", 0) > 0
        received += sum(mass[0] * c.impulse for c in sim.contacts)
        water = (mass[:, None] * sim.state.v).sum(axis=0)
        assert np.abs(water + received).max() < 1e-6 * max(np.abs(received).max(), 1e-12)
    assert solves == 8
    assert water[0] > 0.05 * mass.sum() * 0.5, "the water ahead of the plate moves with it"


def test_a_crate_in_a_dam_break_on_the_water_preset_rides_the_surge():
    """A 40 cm column of the water preset as shipped (grid on) breaks into a 6 cm pool where a 10 cm crate
    of 500 kg/m³ floats: the surge lifts the crate off its draft (its centre from 5.6 to 15 cm) and carries
    it, its leading face within one body length (10 cm) of the wave's front (the farthest 1 % of the water
    above the pool) until the front has run 60 cm past it (measured: at most 0.072 m behind at 2.5 cm spacing,
    moving at 1.64 m/s where the front runs at 2.1 m/s, as debris rides behind a bore's face). With
    ``pressure_projection: none`` the surge runs over it (its centre rises 8 mm) and leaves it 0.19 m behind
    the front by then, 0.45 m by the far wall."""
    data = scene_dict(
        particle_spacing=0.025, fps=24, frame_end=20,
        materials=[{"name": "water", "preset": "water"}],
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, 0.4]},
                 {"type": "box", "material": "water", "min": [0.3, 0, 0], "max": [1.6, 0.3, 0.06]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [1.6, 0.3, 0.6], "position": [0.8, 0.15, 0.3]},
                   {"type": "box", "name": "crate", "size": [0.1, 0.1, 0.08], "position": [0.55, 0.15, 0.07],
                    "dynamic": True, "density": 500.0}])
    sim = Simulation(parse_scene(data))
    crate = sim.bodies.bodies[0].motion
    start, front, highest = crate.com.copy(), 0.0, 0.0
    while front < start[0] + 0.6:
        sim.advance_frame()
        x = sim.state.x
        front = float(np.percentile(x[x[:, 2] > 0.07, 0], 99))
        highest = max(highest, float(crate.com[2]))
        if front > start[0] + 0.05:
            assert front - (crate.com[0] + 0.05) < 0.1, (front, crate.com)
        assert sim.frame < 20, "the front runs 60 cm past the crate within 20 frames"
    assert highest > start[2] + 0.05, "the surge lifts the crate"
    assert crate.com[0] > start[0] + 0.4
