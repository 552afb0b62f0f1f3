"""Collider motion (static, keyframed with Euler angles interpolated as Blender does) and contact reports."""

import math

import numpy as np
import pytest

from sph_addon.core.colliders import Collider, Shape, euler_xyz_matrix
from sph_addon.core.colliders.motion import KeyframedMotion, StaticMotion, motion_from_scene


def _axis_angle_matrix(axis, angle: float) -> np.ndarray:
    """Rodrigues' formula: rotation by ``angle`` (rad) about the unit vector ``axis``."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def _angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) of the rotation a^T b."""
    return math.acos(max(-1.0, min(1.0, (np.trace(a.T @ b) - 1.0) / 2.0)))


def _linear_euler_transform(frames, positions, rotations, frame):
    """The transform before the Motion split: every component interpolated linearly."""
    f = np.asarray(frames, float)
    pos, rot = np.asarray(positions, float), np.asarray(rotations, float)
    p = np.array([np.interp(frame, f, pos[:, k]) for k in range(3)])
    return euler_xyz_matrix(*[float(np.interp(frame, f, rot[:, k])) for k in range(3)]), p


ROT = (0.3, -0.7, 2.1)
FRACTIONS = (0.0, 0.1, 0.25, 1 / 3, 0.5, 0.9, 0.999)


def test_static_motion_is_exactly_the_euler_matrix():
    m = StaticMotion((1.0, -2.0, 0.5), ROT)
    for frame in (-10.0, 1.0, 3.7, 1e4):
        r, t = m.transform(frame)
        assert r.tobytes() == euler_xyz_matrix(*ROT).tobytes()
        assert t.tobytes() == np.array([1.0, -2.0, 0.5]).tobytes()
    assert not m.moving


def test_keyframed_translation_is_linear_and_held_outside_the_keys():
    frames = [2.0, 6.0, 10.0]
    positions = [[0, 0, 0], [4, -2, 1], [4, -2, 5]]
    m = KeyframedMotion(frames, positions, [ROT] * 3)
    assert np.allclose(m.transform(4.0)[1], [2, -1, 0.5], atol=1e-15)
    assert np.allclose(m.transform(9.0)[1], [4, -2, 4], atol=1e-15)
    assert np.array_equal(m.transform(-5.0)[1], [0, 0, 0])
    assert np.array_equal(m.transform(50.0)[1], [4, -2, 5])
    assert m.moving


def test_equal_rotation_intervals_are_byte_identical_to_linear_euler():
    """Static rotation, or an interval whose two keys share angles: the old Euler path, bit for bit."""
    frames = [1.0, 5.0, 9.0, 12.0]
    positions = [[0, 0, 0], [1, 2, 3], [-1, 0.5, 2], [3, 3, 3]]
    rotations = [ROT, ROT, (0.9, 0.1, -0.4), (0.9, 0.1, -0.4)]
    m = KeyframedMotion(frames, positions, rotations)
    samples = [0.0, 1.0, 12.0, 20.0, *(1 + 4 * s for s in FRACTIONS), *(9 + 3 * s for s in FRACTIONS)]
    for frame in samples:
        r, t = m.transform(frame)
        r_old, t_old = _linear_euler_transform(frames, positions, rotations, frame)
        assert r.tobytes() == r_old.tobytes(), frame
        assert t.tobytes() == t_old.tobytes(), frame
    # Positions stay per-axis np.interp in every interval, rotations included.
    for frame in (5.5, 7.25, 8.9):
        assert m.transform(frame)[1].tobytes() == _linear_euler_transform(frames, positions, rotations,
                                                                           frame)[1].tobytes()


@pytest.mark.parametrize("turns", [(1, 0, 0), (0, -1, 0), (1, 0, -1), (0, 0, 2)])
def test_euler_keys_a_full_turn_apart_turn_as_in_blender(turns):
    """Euler keys differing by multiples of 2π turn the collider through those turns, as Blender's
    rotation curves do (the exporter writes each frame's angles nearest the last frame's)."""
    e0 = np.array([0.3, 0.2, -0.1])
    e1 = e0 + 2 * math.pi * np.array(turns)
    m = KeyframedMotion([1.0, 2.0], [[0, 0, 0]] * 2, [e0, e1])
    for s in FRACTIONS:
        r, _ = m.transform(1.0 + s)
        assert np.allclose(r, euler_xyz_matrix(*(e0 + s * (e1 - e0))), atol=1e-12), s
    assert math.isclose(m.turn(1.0, 2.0), 2 * math.pi * np.abs(turns).sum())


def test_a_key_of_480_degrees_turns_480_degrees():
    """0° -> 480° about Z in two keys: Blender shows 480°; slerp on the shortest arc turned 120°."""
    m = KeyframedMotion([1.0, 5.0], [[0, 0, 0]] * 2, [[0, 0, 0], [0, 0, math.radians(480.0)]])
    for frame, degrees in ((2.0, 120.0), (3.0, 240.0), (4.0, 360.0), (4.5, 420.0)):
        assert np.allclose(m.transform(frame)[0], _axis_angle_matrix([0, 0, 1], math.radians(degrees)),
                           atol=1e-12), frame
    assert math.isclose(m.turn(1.0, 2.0), math.radians(120.0))
    assert math.isclose(m.turn(0.0, 9.0), math.radians(480.0))  # held outside the keys


def test_euler_angles_interpolate_componentwise_between_samples():
    """Between two keys every angle moves linearly, as Blender interpolates its rotation curves."""
    e0, e1 = [0.2, -0.3, 0.4], [1.1, 0.5, -2.0]
    m = KeyframedMotion([0.0, 10.0], [[0, 0, 0]] * 2, [e0, e1])
    for s in FRACTIONS:
        r_old, _ = _linear_euler_transform([0.0, 10.0], [[0, 0, 0]] * 2, [e0, e1], 10.0 * s)
        assert r_old.tobytes() == m.transform(10.0 * s)[0].tobytes(), s
    # The bound of the turn: every point moves by at most the angles' total change times its radius.
    r0 = m.transform(3.0)[0]
    for k in range(1, 11):
        assert _angle_between(r0, m.transform(3.0 + 0.1 * k)[0]) <= m.turn(3.0, 3.0 + 0.1 * k) + 1e-12


def test_motion_from_scene_and_collider_delegation():
    static = motion_from_scene({"position": [1, 2, 3], "rotation": list(ROT), "keyframes": []}, 1.0)
    assert isinstance(static, StaticMotion)
    keyed = motion_from_scene({"position": [0, 0, 0], "rotation": [0, 0, 0], "keyframes": [
        {"frame": 1.0, "position": [0, 0, 0], "rotation": [0, 0, 0]},
        {"frame": 3.0, "position": [2, 0, 0], "rotation": [0, 0, 0]}]}, 1.0)
    assert isinstance(keyed, KeyframedMotion) and keyed.moving
    from sph_addon.core.colliders.shapes.sdf_analytic import sdf_plane

    c = Collider("c", Shape(sdf=sdf_plane, params=np.zeros(0)), keyed, 0.0, 0.0, 0.025)
    assert c.moving and np.allclose(c.transform(2.0)[1], [1, 0, 0])
    c.motion = static
    assert not c.moving and c.transform(7.0)[0].tobytes() == euler_xyz_matrix(*ROT).tobytes()


# -- what the collider received -----------------------------------------------------------

RADIUS = 0.025
DT = 0.01


def _falling_layer(u: float):
    """A 4 x 4 layer sinking into the plane z = 0 at speed u, and a second layer well above it.

    The lower layer starts half a step above contact and ends half a step in,
    so the whole normal velocity -u is removed and no push-out follows.
    """
    g = (np.arange(4) - 1.5) * 0.05  # symmetric about 0 in x and y
    xx, yy = np.meshgrid(g, g, indexing="ij")
    low = np.column_stack([xx.ravel(), yy.ravel(), np.full(16, RADIUS + 0.5 * u * DT)])
    high = low + [0, 0, 0.5]
    x_prev = np.vstack([low, high])
    x = x_prev.copy()
    x[:, 2] -= u * DT
    return x, x_prev


def _collide_plane(x, x_prev, friction=0.0, r=None, t=None):
    """One collide() call against the plane z = 0 of the frame (r, t) (identity by default); returns dv."""
    from sph_addon.core.colliders.contact.response import collide
    from sph_addon.core.colliders.shapes.sdf_dispatch import PLANE

    r = np.eye(3) if r is None else r
    t = np.zeros(3) if t is None else t

    dv = np.full(x.shape, np.nan)  # every row must be overwritten
    collide(PLANE, np.zeros(0), np.zeros((1, 1, 1), np.float32), r, t, r, t, x, x, x_prev,
            DT, RADIUS, friction, np.zeros(0, np.uint8), 0.0, 0.0, True, dv)
    return dv


def test_particles_falling_on_a_plane_push_it_down():
    """Collider impulse -m Σ dv = (0, 0, -16 m u); torque about a point 0.5 m to -x is (0, 16 m u 0.5, 0)."""
    from sph_addon.core.colliders.contact.response import ContactReport, impulse_and_torque

    u, m = 2.0, 0.3
    x, x_prev = _falling_layer(u)
    dv = _collide_plane(x, x_prev)
    assert np.allclose(dv[:16], [0, 0, u], atol=1e-9)
    assert np.array_equal(dv[16:], np.zeros((16, 3)))
    assert np.allclose(x[:16, 2], x_prev[:16, 2], atol=1e-15)  # sinking stopped, no bounce

    impulse, torque = impulse_and_torque(x, dv, [0.0, 0.0, 0.0], particle_mass=m)
    assert np.allclose(impulse, [0, 0, -16 * m * u], atol=1e-9)
    assert np.allclose(torque, 0.0, atol=1e-9)  # the layer is centred on the point
    # r x F summed: F = -m u z at arms x_i - c; Σ(x_i - c) = 16 (0.5, 0, z).
    _, torque = impulse_and_torque(x, dv, [-0.5, 0.0, 0.0], particle_mass=m)
    assert np.allclose(torque, [0, 16 * m * u * 0.5, 0], atol=1e-9)
    _, unit = impulse_and_torque(x, dv, [-0.5, 0.0, 0.0])
    assert np.allclose(unit, torque / m, atol=1e-9)  # default: per unit particle mass
    report = ContactReport("floor", impulse, torque, np.array([-0.5, 0.0, 0.0]))
    assert report.impulse[2] < 0


def test_momentum_balance_with_friction_on_a_tilted_plane():
    """Particle momentum change + collider impulse = 0, friction and push-out included."""
    from sph_addon.core.colliders.contact.response import impulse_and_torque

    rng = np.random.default_rng(7)
    r = euler_xyz_matrix(0.3, -0.2, 0.5)
    t = np.array([0.1, -0.2, 0.05])
    x_prev = rng.uniform(-0.3, 0.3, (400, 3))
    x = x_prev + rng.normal(0, 0.02, (400, 3))
    before = x.copy()
    dv = _collide_plane(x, x_prev, friction=0.6, r=r, t=t)
    moved = np.any(x != before, axis=1)
    assert moved.sum() > 50 and (~moved).sum() > 50
    assert np.array_equal(dv[~moved], np.zeros(((~moved).sum(), 3)))
    # The particles' velocity change, measured as the integrator does: v = (x - x_prev) / dt.
    dp = ((x - x_prev) / DT - (before - x_prev) / DT).sum(axis=0)
    c = np.array([0.2, 0.1, -0.3])
    impulse, torque = impulse_and_torque(x, dv, c)
    assert np.allclose(dp + impulse, 0.0, atol=1e-9)
    dl = np.cross(x - c, (x - before) / DT).sum(axis=0)
    assert np.allclose(dl + torque, 0.0, atol=1e-9)


def test_impulse_and_torque_rejects_mismatched_shapes():
    from sph_addon.core.colliders.contact.response import impulse_and_torque

    with pytest.raises(ValueError):
        impulse_and_torque(np.zeros((3, 3)), np.zeros((2, 3)), np.zeros(3))
