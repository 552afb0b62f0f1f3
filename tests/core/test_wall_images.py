"""Which walls mirror the liquid (``boundary.mirror``): a closed tank's faces and ground planes."""

import numpy as np
from conftest import scene_dict

from sph_addon.core.boundary.mirror import wall_mirror
from sph_addon.core.colliders.shapes.sdf_dispatch import SPHERE
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

S = 0.05


def _walls(colliders):
    sim = Simulation(parse_scene(scene_dict(particle_spacing=S, colliders=colliders)))
    return sim.walls_at(0.0), sim.h


def test_a_tank_mirrors_in_the_faces_each_particle_reaches_and_hands_other_colliders_on():
    """Corner, edge, face, middle and outside of a 1 m tank (h = 2 s): 3, 2, 1, 0 and 0 faces, nearest
    first; a sphere inside it keeps the continued lattice (it is handed on as ``others``)."""
    walls, h = _walls([{"type": "box_container", "size": [1, 1, 1], "position": [0.5, 0.5, 0.5]},
                       {"type": "sphere", "radius": 0.1, "position": [0.5, 0.5, 0.5]}])
    x = np.array([[0.02, 0.03, 0.04], [0.02, 0.5, 0.03], [0.5, 0.5, 0.02], [0.5, 0.5, 0.8], [1.2, 0.5, 0.5]])
    planes, plane_of, others = wall_mirror(x, walls, S, h)
    assert [int((row >= 0).sum()) for row in plane_of] == [3, 2, 1, 0, 0]
    corner = plane_of[0]
    distances = [x[0] @ planes[a, :3] - planes[a, 3] for a in corner]
    np.testing.assert_allclose(distances, [0.02, 0.03, 0.04])  # x, y and z faces, nearest first
    np.testing.assert_allclose(planes[plane_of[2, 0]], [0, 0, 1, 0])  # the floor, normal into the liquid
    assert others is not None and [c.shape.code for c, _, _ in others.placed] == [SPHERE]


def test_a_ground_plane_along_the_tanks_floor_is_mirrored_once():
    walls, h = _walls([{"type": "box_container", "size": [1, 1, 1], "position": [0.5, 0.5, 0.5]},
                       {"type": "plane"}])
    planes, plane_of, others = wall_mirror(np.array([[0.5, 0.5, 0.02]]), walls, S, h)
    assert others is None and len(planes) == 7
    assert (plane_of[0] >= 0).sum() == 1
