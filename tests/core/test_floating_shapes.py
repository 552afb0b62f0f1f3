"""Floating shapes: a cube of half the water's density settles corner up, the orientation of least
hydrostatic energy, and a ball bobs with a damped oscillation and comes to rest.

For a floating body the potential energy of body and water at the draft its weight fixes is
M g (z_G - z_B), with z_G its centre of mass and z_B the centroid of its submerged volume, both from the
water line: the stable orientations are the minima of z_G - z_B over orientations. For a cube of density
ratio 1/2 the water line passes through its centre whatever its orientation, and
:func:`hydrostatic_energy` (a midpoint sum over the cube) gives, per unit of M g and edge length: face up
0.2500, edge up (a face diagonal vertical) 0.2359, corner up (a body diagonal vertical) 0.2345. Edge up is
a saddle (turning it about its own horizontal diagonal lowers the energy), so the cube settles corner up,
its three axes at arccos(1/√3) = 54.7° from the vertical; face up is stable only below 0.21 and above 0.79.
"""

from __future__ import annotations

import math

import numpy as np

from sph_addon.core.colliders.rigid_body import quaternion_matrix
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation
from tests.conftest import scene_dict

SPACING = 0.0125  # m: 8 particles across the 10 cm cube and ball
CORNER_UP = math.degrees(math.acos(1.0 / math.sqrt(3.0)))


def hydrostatic_energy(normal, rho: float = 0.5, cells: int = 60) -> float:
    """z_G - z_B of a unit cube floating with ``normal`` (its body axes) pointing up, density ratio ``rho``."""
    g = (np.arange(cells) + 0.5) / cells - 0.5
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    height = x @ (np.asarray(normal, np.float64) / np.linalg.norm(normal))
    line = np.quantile(height, rho)  # the water line: the submerged share is rho
    return float(-line - (height[height < line] - line).mean())


def _pool(body: dict) -> dict:
    """A 15 cm pool of water (projection none) in a 30 cm square tank, 1.25 cm spacing, and ``body`` of
    500 kg/m³ centred 6 cm above the water (1 cm above it for a 10 cm body)."""
    return scene_dict(
        particle_spacing=SPACING, fps=24, frame_end=200,
        materials=[{"name": "water", "preset": "water", "params": {"pressure_projection": "none"}}],
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, 0.15]}],
        colliders=[{"type": "box_container", "name": "tank", "size": [0.3, 0.3, 0.6], "position": [0.15, 0.15, 0.3]},
                   {"position": [0.15, 0.15, 0.21], "dynamic": True, "density": 500.0, **body}])


def test_corner_up_is_the_least_hydrostatic_energy_of_a_cube_of_half_the_waters_density():
    face, edge, corner = (hydrostatic_energy(n) for n in ((0, 0, 1), (0, 1, 1), (1, 1, 1)))
    assert corner < edge < face
    tilted = hydrostatic_energy(np.array([0, 1, 1]) / math.sqrt(2) + np.array([0.2, 0.0, 0.0]))
    assert tilted < edge, "edge up is a saddle: tilting it towards corner up lowers the energy"
    for rho in (0.15, 0.85):  # face up is the stable one below 0.21 and above 0.79
        face, edge, corner = (hydrostatic_energy(n, rho) for n in ((0, 0, 1), (0, 1, 1), (1, 1, 1)))
        assert face < min(edge, corner), rho


def test_a_cube_of_half_the_waters_density_settles_corner_up():
    """A 10 cm cube of 500 kg/m³, 8 particles across, released tilted 25° and 7.5° onto a 15 cm pool: from
    2.5 s to 4 s each of its axes within 4° of 54.7° from the vertical (measured 52.8-56.7° from 2 s to
    8 s, bobbing; at 5 particles across it passes edge up at 1 s, then drifts towards corner up for 10 s
    without settling)."""
    sim = Simulation(parse_scene(_pool({"type": "box", "name": "cube", "size": [0.1] * 3,
                                        "rotation": [math.radians(25.0), math.radians(7.5), 0.0]})))
    body = sim.bodies.bodies[0].motion
    angles = []
    for f in range(96):
        sim.advance_frame()
        if f >= 59:  # frame 61: 2.5 s after the first
            up = quaternion_matrix(body.q)[2, :]  # the body axes' vertical components
            angles.append(np.degrees(np.arccos(np.clip(np.abs(up), 0.0, 1.0))))
    angles = np.array(angles)
    assert np.abs(angles - CORNER_UP).max() < 4.0, (angles.min(axis=0), angles.max(axis=0))


def test_a_ball_of_half_the_waters_density_bobs_with_a_damped_oscillation_and_comes_to_rest():
    """A 10 cm ball of 500 kg/m³ dropped from 1 cm above a 15 cm pool (8 particles across) bobs about
    the water line: its centre's swings about where it ends alternate and each is smaller than the last
    (measured -26, +17, -8.3, +4.6, -2.5, +1.4 mm, a period of about 0.48 s), and from 2.5 s to 4 s it
    stays within 0.5 mm of one height, its centre within 2 mm of the water line the water's volume
    gives (half the ball under it)."""
    s, r = SPACING, 0.05
    sim = Simulation(parse_scene(_pool({"type": "sphere", "name": "ball", "radius": r})))
    body = sim.bodies.bodies[0].motion
    heights = []
    for _ in range(96):
        sim.advance_frame()
        heights.append(body.com[2])
    z = np.array(heights)
    rest = z[60:]
    assert np.ptp(rest) < 5e-4
    level = (sim.state.n * s**3 + 0.5 * 4.0 / 3.0 * math.pi * r**3) / 0.3**2
    assert abs(rest.mean() - level) < 2e-3
    swing = z - rest.mean()
    extrema = [swing[k] for k in range(1, len(z) - 1)
               if abs(swing[k]) > 1e-3 and abs(swing[k]) >= max(abs(swing[k - 1]), abs(swing[k + 1]))]
    assert len(extrema) >= 5, extrema
    assert all(a * b < 0 and abs(b) < abs(a) for a, b in zip(extrema, extrema[1:])), extrema
