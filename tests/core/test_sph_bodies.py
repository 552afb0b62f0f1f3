"""The ``sph`` liquid and the colliders: what its walls (``density_pressure_desbrun1996``'s mirrored fluid
and Morris' no-slip term) give the particles, the colliders receive equal and opposite."""

from __future__ import annotations

import numpy as np
from conftest import scene_dict

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation


def test_in_a_closed_tank_the_sph_walls_push_a_body_and_momentum_is_kept():
    """No gravity: a 8 cm crate of 500 kg/m³ thrown at (-1, 0, -1) m/s into a block of classic water filling a
    closed tank's lower two thirds. The liquid pushes the crate and the tank through their walls (the
    mirrored fluid's push, ``wall_acceleration``) and through the collisions. The static tank takes
    momentum too, so it is counted, as in the viscoelastic model's test (``test_rigid_body``): the
    particles' Σ m v, the crate's M V and what it has received but not yet taken, plus what the tank received
    from the particles (its contact report times the particles' mass), less what it gave the crate
    (``Bodies.contact_impulse``), add up to the initial momentum to 1e-6 of it every frame (the required
    tolerance; measured under 4e-15, round-off; with the walls' push left out of the reports the balance is
    off by 2.4 times the initial momentum). One level of time step for all (``global``): with individual
    steps pairs exchange momentum only approximately (``test_sph_model.test_momentum``). The tank takes over
    a tenth of the initial momentum (measured 3: the crate's blow reflects off the floor), and the crate is
    slowed to under half its speed (measured |V| 1.41 to 0.43 m/s in 3 frames)."""
    sim = Simulation(parse_scene(scene_dict(
        particle_spacing=0.025, fps=24, frame_end=20, simulation={"gravity": [0.0, 0.0, 0.0], "time_steps": "global"},
        materials=[{"name": "w", "model": "sph", "preset": "classic_water"}],
        sources=[{"type": "box", "material": "w", "min": [0.0, 0.0, 0.0], "max": [0.3, 0.2, 0.2]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.3, 0.2, 0.3], "position": [0.15, 0.1, 0.15]},
                   {"type": "box", "name": "crate", "size": [0.08, 0.08, 0.08], "position": [0.2, 0.1, 0.25],
                    "dynamic": True, "density": 500.0, "linear_velocity": [-1.0, 0.0, -1.0]}])))
    mass = sim._particle_mass[sim.state.material]
    assert np.all(mass == mass[0])  # one material: the contact report times one particle's mass
    body = sim.bodies.bodies[0]

    def momentum():
        return (mass[:, None] * sim.state.v).sum(axis=0) + body.motion.mass * body.motion.v + body.impulse

    start = momentum()
    scale = float(np.linalg.norm(start))
    tank_took, tank_gave = np.zeros(3), np.zeros(3)  # from the particles, to the crate; kg m/s
    for _ in range(3):
        sim.advance_frame()
        tank_took += mass[0] * sim.contacts[0].impulse
        tank_gave += sim.bodies.contact_impulse[0]
        assert np.abs(momentum() + tank_took - tank_gave - start).max() < 1e-6 * scale
    assert np.linalg.norm(tank_took) > 0.1 * scale
    assert np.linalg.norm(body.motion.v) < 0.5 * np.sqrt(2.0)
