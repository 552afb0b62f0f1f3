"""A volume source's ``angular_velocity``: each particle starts at velocity + ω × (x - c), c the box's centre,
the ball's centre or the centroid of a mesh source's particles; checked as a bad field by name.

The bake: a 5x5x5 jelly cube (1 cm spacing, E = 10 kPa) spun at 10 rad/s about a skew axis, no gravity,
no collider, for 5 frames at 30 fps (a turn of |ω| t = 95°). Tolerances. Its angular momentum about
its centre of mass, L = Σ m (x - x̄) × (v - v̄), keeps within 1e-6 (relative): the elastic forces are
internal and torque-free and the solve gives back what its linearisation takes (``keep_momenta``):
measured 3e-16. Its shape: the largest distance of a particle from the centre of mass changes by under
5 % (the centrifugal stretch ρ ω² a² / E is 0.8 % at the corners, a = 2.8 cm, and the cube, spun from
unstretched, rings up to twice that: measured 1.3 %); and the particles stay within 0.1 spacings of the
rest shape turned and moved by its best rigid fit (measured 0.04).
"""

from __future__ import annotations

import numpy as np
import pytest

from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.conftest import REPO, scene_dict
from tests.elastic_scenes import rigid_fit

SPACING = 0.01
OMEGA = 10.0 * np.array([0.2, -0.5, 1.0]) / np.linalg.norm([0.2, -0.5, 1.0])  # 10 rad/s, skew axis
VELOCITY = np.array([0.1, 0.0, -0.05])


def _scene(source: dict, materials=None, spacing: float = SPACING, **extra) -> dict:
    return scene_dict(particle_spacing=spacing, fps=30, frame_end=10, colliders=[], sources=[source],
                      materials=materials or [{"name": "jelly", "model": "elastic", "preset": "jelly"}],
                      simulation={"gravity": [0.0, 0.0, 0.0]}, domain={"min": [-1.0] * 3, "max": [1.0] * 3},
                      **extra)


def _box(**fields) -> dict:
    return {"type": "box", "material": "jelly", "min": [0.0, 0.0, 0.0], "max": [0.05, 0.05, 0.05], **fields}


@pytest.fixture(scope="module")
def spun():
    """The spun cube's simulation, its initial positions, velocities, angular momentum, and its bake's worst
    changes (largest-distance ratio, deviation from a rigid motion in spacings)."""
    sim = Simulation(parse_scene(_scene(_box(velocity=VELOCITY.tolist(), angular_velocity=OMEGA.tolist()))))
    st = sim.state
    x0, v0 = st.x.copy(), st.v.copy()
    momentum0 = _angular_momentum(st.x, st.v)
    reach0 = _reach(st.x)
    worst_reach, worst_fit = 0.0, 0.0
    for _ in range(5):  # 5 frames at 30 fps
        sim.advance_frame()
        worst_reach = max(worst_reach, abs(_reach(st.x) / reach0 - 1.0))
        rest = st.arrays["rest_position"]
        fit = (rest - rest.mean(axis=0)) @ rigid_fit(rest, st.x).T + st.x.mean(axis=0)
        worst_fit = max(worst_fit, float(np.abs(fit - st.x).max()) / SPACING)
    return sim, x0, v0, momentum0, worst_reach, worst_fit


def _angular_momentum(x, v):
    """Σ (x - x̄) × (v - v̄) per unit particle mass (every particle of one material has one mass)."""
    return np.cross(x - x.mean(axis=0), v - v.mean(axis=0)).sum(axis=0)


def _reach(x) -> float:
    return float(np.linalg.norm(x - x.mean(axis=0), axis=1).max())


def test_box_particles_start_at_velocity_plus_spin_about_the_box_s_centre(spun):
    _, x0, v0, _, _, _ = spun
    assert len(x0) == 125
    centre = np.full(3, 0.025)
    np.testing.assert_allclose(v0, VELOCITY + np.cross(OMEGA, x0 - centre), rtol=0, atol=1e-15)


def test_spun_cube_keeps_its_angular_momentum_and_shape(spun):
    sim, _, _, momentum0, worst_reach, worst_fit = spun
    st = sim.state
    assert st.time == pytest.approx(5 / 30)
    momentum = _angular_momentum(st.x, st.v)
    assert np.linalg.norm(momentum - momentum0) <= 1e-6 * np.linalg.norm(momentum0)
    assert worst_reach < 0.05, worst_reach
    assert worst_fit < 0.1, worst_fit
    # It did turn, as a rigid body would: about |ω| t = 95° about an axis near ω (the cube's inertia is
    # isotropic, so ω stays put).
    turned = np.degrees(np.arccos((np.trace(rigid_fit(st.arrays["rest_position"], st.x)) - 1.0) / 2.0))
    assert turned == pytest.approx(np.degrees(np.linalg.norm(OMEGA) * st.time), rel=0.05)


def test_sphere_spins_about_its_centre_and_a_mesh_about_its_particles_centroid():
    water = [{"name": "water", "preset": "water"}]
    centre = [0.3, -0.2, 0.1]
    sphere = {"type": "sphere", "material": "water", "center": centre, "radius": 0.2,
              "angular_velocity": OMEGA.tolist()}
    st = Simulation(parse_scene(_scene(sphere, water, spacing=0.05))).state
    np.testing.assert_allclose(st.v, np.cross(OMEGA, st.x - centre), rtol=0, atol=1e-15)
    mesh = {"type": "mesh", "material": "water", "path": "box_internal_face.ply", "angular_velocity": OMEGA.tolist()}
    st = Simulation(parse_scene(_scene(mesh, water, spacing=0.25), REPO / "tests" / "data" / "meshes")).state
    assert len(st.x) == 64
    np.testing.assert_allclose(st.v, np.cross(OMEGA, st.x - st.x.mean(axis=0)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(st.v.sum(axis=0), 0.0, atol=1e-14)  # the spin adds no momentum


def test_no_spin_leaves_the_velocities_as_the_velocity_alone():
    plain = Simulation(parse_scene(_scene(_box(velocity=VELOCITY.tolist())))).state
    zero = Simulation(parse_scene(_scene(_box(velocity=VELOCITY.tolist(), angular_velocity=[0, 0, 0])))).state
    assert (plain.v == VELOCITY).all() and plain.v.tobytes() == zero.v.tobytes()


@pytest.mark.parametrize("value, where", [
    ([0.0, float("nan"), 0.0], "sources[0].angular_velocity[1]"),
    ([0.0, 1.0], "sources[0].angular_velocity"),
    ("fast", "sources[0].angular_velocity"),
    ([0.0, 0.0, float("inf")], "sources[0].angular_velocity[2]"),
])
def test_a_bad_angular_velocity_is_refused_by_name(value, where):
    with pytest.raises(InputError) as err:
        parse_scene(_scene(_box(angular_velocity=value)))
    assert err.value.where == where
