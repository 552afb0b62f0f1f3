"""Rotation counts in the substep rule: a spinning collider's surface keeps the CFL rule."""

import math

import numpy as np
from conftest import scene_dict

from sph_addon.core.colliders import COLLIDERS, BuildContext
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation


def _shape(kind: str, **p):
    return COLLIDERS[kind].build(p, BuildContext())

SPIN_HALF = np.array([0.3, 0.03, 0.1])


def test_a_spinning_paddles_tip_keeps_the_cfl_rule_and_no_particle_is_left_inside():
    """A 60 cm paddle spinning at 5 rev/s in a tank of water (tip at 9.4 m/s, 1,908 particles).

    The substep rule took only the translation speed: 2 substeps in the first frame, the tip
    moving 5.2 spacings per substep. Now every corner moves at most cfl spacings per substep.
    """
    keys = [{"frame": f, "position": [0, 0, 0.1], "rotation": [0, 0, (f - 1) * math.pi / 3]}
            for f in range(1, 5)]
    sim = Simulation(parse_scene(scene_dict(
        particle_spacing=0.03, frame_end=3,
        sources=[{"type": "box", "material": "water", "min": [-0.4, -0.4, 0], "max": [0.4, 0.4, 0.1]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.8, 0.8, 0.4], "position": [0, 0, 0.2]},
                   {"type": "box", "name": "paddle", "size": (2 * SPIN_HALF).tolist(), "keyframes": keys}])))
    paddle = sim.colliders[1]
    corners = np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)]) * SPIN_HALF
    limit = sim.policy.cfl * sim.spacing
    for _ in range(2):
        frame = sim.frame
        n = sim.advance_frame().substeps
        for k in range(n):
            r0, _ = paddle.transform(frame + k / n)
            r1, _ = paddle.transform(frame + (k + 1) / n)
            tip = np.linalg.norm(corners @ r1.T - corners @ r0.T, axis=1).max()
            assert tip <= limit * (1 + 1e-9), f"frame {frame}: tip moved {tip / sim.spacing:.2f} spacings"
        r, c = paddle.transform(float(sim.frame))
        inside = np.all(np.abs((sim.state.x - c) @ r) < SPIN_HALF, axis=1)
        assert not inside.any()


def test_surface_speed_adds_rotation_times_the_reach():
    from sph_addon.core.colliders import Collider
    from sph_addon.core.colliders.motion import KeyframedMotion

    spin = KeyframedMotion([1.0, 2.0], [[0, 0, 0], [0.3, 0, 0]], [[0, 0, 0], [0, 0, 0.5]])
    box = Collider("box", _shape("box", size=(0.6, 0.8, 0.0)), spin, 0.0, 0.0, 0.0)
    far = np.array([[10.0, 0.0, 0.0]])
    # 0.3 m and 0.5 rad per frame at 30 fps; the box's corners are 0.5 m from its origin.
    assert math.isclose(box.surface_speed(1.0, 30.0, far, 0.1), 30 * (0.3 + 0.5 * 0.5))
    plane = Collider("floor", _shape("plane"), spin, 0.0, 0.0, 0.0)
    # An unbounded plane: as far as the farthest particle (+ the origin's shift and the margin).
    assert math.isclose(plane.surface_speed(1.0, 30.0, far, 0.1), 30 * (0.3 + 0.5 * (10.0 + 0.3 + 0.1)))
    still = Collider("box", box.shape, KeyframedMotion([1.0, 2.0], [[0, 0, 0], [0.3, 0, 0]], [[0, 0, 0]] * 2),
                     0.0, 0.0, 0.0)
    assert still.surface_speed(1.0, 30.0, far, 0.1) == 0.3 * 30.0
