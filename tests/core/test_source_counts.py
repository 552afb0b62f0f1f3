"""The preflight's particle counts (``SceneFile.estimate_particles``: what ``validate`` prints and the memory
check weighs) against what the bake makes: exact for boxes and spheres; a sphere was estimated at twice
its count (269 for 136), a bound meant only for spheres too large to count point by point."""

from __future__ import annotations

import pytest

from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.sources.emission import EXACT_SPHERE_POINTS, estimate_count
from sph_addon.core.world.simulation import Simulation
from tests.conftest import scene_dict


@pytest.mark.parametrize(("spacing", "center", "radius"), [(0.02, [0.2, 0.2, 0.3], 0.065),
                                                          (0.0125, [0.213, 0.193, 0.3], 0.1),
                                                          (0.05, [0.2, 0.2, 0.5], 0.05)])
def test_a_sphere_and_a_box_are_counted_as_the_bake_fills_them(spacing, center, radius):
    data = scene_dict(particle_spacing=spacing, frame_end=1,
                      sources=[{"type": "sphere", "material": "water", "center": center, "radius": radius},
                               {"type": "box", "material": "water", "min": [0.05, 0.05, 0.0], "max": [0.15, 0.2, 0.1]}])
    scene = parse_scene(data)  # both inside the default tank (0.4 x 0.4 x 1 m), clear of each other
    assert scene.estimate_particles() == Simulation(scene).state.n


def test_a_sphere_too_large_to_count_is_bounded_above_by_its_volume():
    p = {"center": [0.0, 0.0, 0.0], "radius": 1.0}
    spacing = 2.0 / EXACT_SPHERE_POINTS ** (1 / 3)  # just past the point-by-point limit
    volume = 4.0 / 3.0 * 3.141592653589793 * (1.0 / spacing) ** 3
    assert volume < estimate_count("sphere", p, spacing, 1.0) < 1.5 * volume
