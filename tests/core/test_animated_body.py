"""A dynamic collider animated until a frame, then moved by the fluid (``animated_until``): it follows its
keyframes exactly, leaves them with the velocity they gave it, and before its release pushes the fluid
and other bodies without being pushed. Small scenes: a few hundred particles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sph_addon.core.colliders.rigid_body import rotation_vector
from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.conftest import scene_dict

FPS = 25.0


def _scene(crate: dict, gravity=(0.0, 0.0, 0.0)) -> dict:
    """A 10 cm box of 500 kg/m³ and, far from it, a small block of water (a scene needs particles)."""
    return scene_dict(
        particle_spacing=0.05, fps=FPS, frame_end=30, simulation={"gravity": list(gravity)},
        materials=[{"name": "water", "preset": "water", "params": {"pressure_projection": "none"}}],
        sources=[{"type": "box", "material": "water", "min": [2.0, 2.0, 0.0], "max": [2.2, 2.2, 0.2]}],
        colliders=[{"type": "box", "name": "crate", "size": [0.1, 0.1, 0.1], "dynamic": True, "density": 500.0,
                    **crate}])


def _run_to(sim: Simulation, frame: int) -> None:
    while sim.frame < frame:
        sim.advance_frame()


def test_a_keyed_body_follows_its_keys_until_its_release_then_keeps_their_velocity():
    """Keys move the box 0.2 m along x and turn it 1 rad about z over frames 1-11 (0.5 m/s, 2.5 rad/s);
    released at frame 6 without gravity or contact it is where the keys put it at 6 (to round-off) and
    then goes on at their velocities: at frame 16 it is 0.3 m along and turned 1.5 rad, where the keys
    would have held it at 0.2 m and 1 rad. Tolerance 1e-9 m: the motion is exact arithmetic on
    interpolated keys and fixed velocities."""
    keys = [{"frame": 1, "position": [0.0, 0.0, 0.5], "rotation": [0.0, 0.0, 0.0]},
            {"frame": 11, "position": [0.2, 0.0, 0.5], "rotation": [0.0, 0.0, 1.0]}]
    sim = Simulation(parse_scene(_scene({"keyframes": keys, "animated_until": 6})))
    body = sim.bodies.bodies[0].motion
    assert body.scripted
    _run_to(sim, 6)
    assert not body.scripted
    np.testing.assert_allclose(body.com, [0.1, 0.0, 0.5], atol=1e-9)
    np.testing.assert_allclose(rotation_vector(body.pose(6.0)[0]), [0.0, 0.0, 0.5], atol=1e-9)
    np.testing.assert_allclose(body.v, [0.5, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(body.omega, [0.0, 0.0, 2.5], atol=1e-9)
    _run_to(sim, 16)
    np.testing.assert_allclose(body.com, [0.3, 0.0, 0.5], atol=1e-9)
    angle = rotation_vector(body.pose(16.0)[0])[2]
    assert math.isclose(angle, 1.5, abs_tol=1e-9)


def test_a_body_held_until_its_release_then_falls_freely():
    """No keys: the box is held where it is placed until frame 11, then falls from rest: 0.2 s later (frame
    16) it has fallen g t² / 2 = 0.196 m, to the substeps' symplectic Euler's first order (within 5 %)."""
    sim = Simulation(parse_scene(_scene({"position": [0.0, 0.0, 1.0], "animated_until": 11},
                                        gravity=(0.0, 0.0, -9.81))))
    body = sim.bodies.bodies[0].motion
    _run_to(sim, 11)
    np.testing.assert_allclose(body.com, [0.0, 0.0, 1.0], atol=1e-12)
    assert np.abs(body.v).max() == 0.0
    _run_to(sim, 16)
    assert 1.0 - body.com[2] == pytest.approx(0.5 * 9.81 * 0.2**2, rel=0.05)


def test_before_its_release_a_body_pushes_the_fluid_without_being_pushed():
    """A 500 kg/m³ box held under water until frame 20 stays where it is held while the water around it
    settles (a free one would rise at once), then rises from rest."""
    data = scene_dict(
        particle_spacing=0.025, fps=FPS, frame_end=40,
        materials=[{"name": "water", "preset": "water", "params": {"pressure_projection": "none"}}],
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, 0.25]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.3, 0.3, 0.6], "position": [0.15, 0.15, 0.3]},
                   {"type": "box", "name": "crate", "size": [0.1, 0.1, 0.1], "position": [0.15, 0.15, 0.1],
                    "dynamic": True, "density": 500.0, "animated_until": 10}])
    sim = Simulation(parse_scene(data))
    body = sim.bodies.bodies[0].motion
    _run_to(sim, 10)
    np.testing.assert_allclose(body.com, [0.15, 0.15, 0.1], atol=1e-12)
    _run_to(sim, 16)
    assert body.com[2] > 0.12, "released, the light box rises"


def test_keyframes_without_a_release_are_refused():
    keys = [{"frame": 1, "position": [0.0, 0.0, 0.5]}, {"frame": 5, "position": [0.1, 0.0, 0.5]}]
    with pytest.raises(InputError) as err:
        parse_scene(_scene({"keyframes": keys}))
    assert "colliders[0].dynamic" in str(err.value) and "animated_until" in str(err.value)
