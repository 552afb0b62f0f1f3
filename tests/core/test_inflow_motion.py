"""Inflows that follow their object's animation (``keyframes``) and inherit its velocity.

The Blender export samples an Inflow object's world transform every frame into
``keyframes: [{frame, center, velocity}]``; the core moves the emitter before
every substep, so a moving nozzle paints a trail, and ``inherit_velocity`` adds
the nozzle's own velocity (times the factor) to what it emits.
"""

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

FRAMES = 6
SPEED = 0.6  # m/s: the nozzle's own speed along +x, 12 cm over the 6 frames at 30 fps (< 1 m/s emitted)


def _inflow(**over) -> dict:
    base = {"type": "inflow", "material": "water", "shape": "disc", "center": [0.0, 0.0, 0.5],
            "radius": 0.02, "velocity": [0.0, 0.0, -1.0]}
    base.update(over)
    return base


def _moving_keys(z: float = 0.5) -> list[dict]:
    """The nozzle's path: +x at SPEED, one key per frame (as the export samples it)."""
    return [{"frame": f, "center": [SPEED * (f - 1) / 30.0, 0.0, z], "velocity": [0.0, 0.0, -1.0]}
            for f in range(1, FRAMES + 2)]


def _sim(inflow: dict, frames: int = FRAMES) -> Simulation:
    return Simulation(parse_scene(scene_dict(
        particle_spacing=0.01, frame_end=frames + 1, colliders=[], sources=[inflow],
        simulation={"gravity": [0.0, 0.0, 0.0]}, domain={"min": [-1, -1, -1], "max": [1, 1, 1]})))


def _run(inflow: dict, frames: int = FRAMES) -> Simulation:
    sim = _sim(inflow, frames)
    for _ in range(frames):
        sim.advance_frame()
    return sim


def test_a_moving_inflow_paints_a_trail_where_a_static_one_leaves_a_column():
    """Same emitter, same 6 frames, no gravity: static, every particle stays within the nozzle's radius
    (2 cm) of its axis in x; moving 12 cm along +x, the particles spread over about that distance
    (measured: static x-extent 0.04 m, moving 0.14 m), newest at the nozzle's last place."""
    static = _run(_inflow())
    moving = _run(_inflow(keyframes=_moving_keys()))
    xs, xm = static.state.x[:, 0], moving.state.x[:, 0]
    assert np.ptp(xs) <= 0.04 + 1e-9
    assert np.ptp(xm) > 0.10
    assert xm.max() == pytest.approx(SPEED * FRAMES / 30.0, abs=0.03), "the trail ends where the nozzle is"
    assert abs(len(xm) - len(xs)) <= 0.05 * len(xs), "moving does not change how much it emits"
    # Without inherit_velocity the stream gets the emitter's own velocity only: no drift along x
    # beyond the particles pushing each other apart (measured mean 0.0 m/s, |max| 0.04 m/s).
    assert abs(moving.state.v[:, 0].mean()) < 0.01


@pytest.mark.parametrize("factor", [0.0, 0.5, 1.0])
def test_emitted_particles_inherit_the_nozzle_velocity_times_the_factor(factor):
    """inherit_velocity on a nozzle moving at 0.6 m/s along +x: the emitter emits at its (0, 0, -1) m/s
    plus factor x (0.6, 0, 0) m/s, exactly; after the first frame the particles (no gravity) still move
    at that on average (they push each other apart by up to 0.012 m/s, measured)."""
    sim = _sim(_inflow(keyframes=_moving_keys(), inherit_velocity=factor))
    sim.advance_frame()
    (inflow,) = sim.inflows
    np.testing.assert_allclose(inflow.velocity, [factor * SPEED, 0.0, -1.0], atol=1e-12)
    v = sim.state.v
    assert len(v) > 20
    assert v[:, 0].mean() == pytest.approx(factor * SPEED, abs=0.005)
    assert v[:, 2].mean() == pytest.approx(-1.0, abs=0.005)


def test_a_turning_inflow_emits_along_its_interpolated_direction():
    """Keys from straight down at frame 1 to along +x at frame 3: at frame 2 (half way) the emitter
    faces 45 degrees, along the shorter arc, at the keys' speed."""
    keys = [{"frame": 1, "center": [0, 0, 0.5], "velocity": [0, 0, -1]},
            {"frame": 3, "center": [0, 0, 0.5], "velocity": [1, 0, 0]}]
    sim = _sim(_inflow(keyframes=keys))
    (inflow,) = sim.inflows
    inflow.place(2.0)
    np.testing.assert_allclose(inflow.direction, [2**-0.5, 0, -(2**-0.5)], atol=1e-12)
    assert inflow.speed == pytest.approx(1.0)
    inflow.place(10.0)
    np.testing.assert_allclose(inflow.velocity, [1, 0, 0], atol=1e-12)


def test_a_static_inflow_without_keys_is_what_it_was():
    """No keyframes, no inheritance: positions as before this feature (the emitter is placed once and its
    layer and velocity are computed with the same operations)."""
    sim = _run(_inflow(), 2)
    (inflow,) = sim.inflows
    assert inflow.keys == [] and not inflow.drift.any()
    assert np.array_equal(inflow.velocity, inflow.direction * inflow.speed)


@pytest.mark.parametrize("keys, where, words", [
    ([{"frame": 2}, {"frame": 1}], "sources[0].keyframes[1].frame", "increasing"),
    ([{"frame": 1, "velocity": [0, 0, 0]}], "sources[0].keyframes[0].velocity", "non-zero"),
    ([{"frame": 1, "position": [0, 0, 0]}], "sources[0].keyframes[0].position", "unknown field"),
    ({"frame": 1}, "sources[0].keyframes", "expected a list"),
])
def test_bad_inflow_keyframes_name_the_field(keys, where, words):
    with pytest.raises(InputError) as err:
        parse_scene(scene_dict(sources=[_inflow(keyframes=keys)]))
    assert err.value.where == where and words in err.value.message


def test_keyframes_are_refused_on_a_volume_source():
    with pytest.raises(InputError) as err:
        parse_scene(scene_dict(sources=[{"type": "box", "material": "water", "keyframes": []}]))
    assert err.value.where == "sources[0].keyframes"
