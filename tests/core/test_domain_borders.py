"""Per-side borders and wall friction: a ``box_container`` with open faces (``open_x_max`` etc.).

The Blender Domain exports its box as a ``domain`` (particles outside are removed) and, with
Closed Borders, as a ``box_container`` collider whose open faces are the sides the artist opened
and whose ``friction`` is the Domain's Wall Friction.
"""

import math

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.colliders import COLLIDERS, BuildContext
from sph_addon.core.colliders.shapes.sdf_analytic import sdf_box_container, sdf_box_open
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

HALF = (0.3, 0.2, 0.1)


def _params(*open_faces: int) -> np.ndarray:
    flags = [1.0 if k in open_faces else 0.0 for k in range(6)]
    return np.array([*HALF, *flags])


GRID = np.zeros((1, 1, 1), np.float32)


def test_all_closed_open_box_is_the_closed_container():
    rng = np.random.default_rng(7)
    for p in rng.uniform(-0.5, 0.5, (500, 3)):
        a = sdf_box_open(_params(), GRID, *p)
        b = sdf_box_container(np.array(HALF), GRID, *p)
        assert a[0] == pytest.approx(b[0], abs=1e-12)
        if abs(a[0]) > 1e-3 and min(abs(abs(p[k]) - HALF[k]) for k in range(3)) > 1e-3:
            assert np.allclose(a[1:], b[1:], atol=1e-9), p


@pytest.mark.parametrize("point, open_faces, want", [
    # Open top (z+, face 5): inside, the top is no wall; the nearest wall is the floor 0.05 m below.
    ((0.0, 0.0, 0.05), (5,), (0.15, 0.0, 0.0, 1.0)),
    # Above the open top, over the centre: the rim of the y walls is sqrt(0.2^2 + 0.1^2) away.
    ((0.0, 0.0, 0.2), (5,), (math.hypot(0.2, 0.1), 0.0, 0.0, 0.0)),
    # Beside the tank below the rim: in the solid, 0.05 m from the inside of the tank (0.1 m from
    # the free space above the rim).
    ((0.0, 0.25, 0.0), (5,), (-0.05, 0.0, -1.0, 0.0)),
    # Out through the open x+ side, 0.05 m past it and 0.02 m above the floor's plane: the floor's edge.
    ((0.35, 0.0, -0.08), (1,), (math.hypot(0.05, 0.02), 0.05 / math.hypot(0.05, 0.02), 0.0,
                                0.02 / math.hypot(0.05, 0.02))),
    # As far past it below the floor's plane: free, beside the solid under the floor.
    ((0.35, 0.0, -0.12), (1,), (0.05, 1.0, 0.0, 0.0)),
    # Every face open: nothing to collide with.
    ((0.0, 0.0, 0.0), tuple(range(6)), (1e10, 0.0, 0.0, 1.0)),
])
def test_open_faces_distances(point, open_faces, want):
    d, nx, ny, nz = sdf_box_open(_params(*open_faces), GRID, *point)
    assert d == pytest.approx(want[0], abs=1e-12)
    if want[1:] != (0.0, 0.0, 0.0):
        assert (nx, ny, nz) == pytest.approx(want[1:], abs=1e-12)
    else:
        assert math.hypot(nx, ny, nz) == pytest.approx(1.0)


def test_no_open_face_builds_the_closed_container_function():
    # Files from before open faces keep the exact kernel they baked with.
    p = {"size": (0.6, 0.4, 0.2), **{f"open_{s}": False for s in ("x_min", "x_max", "y_min", "y_max", "z_min",
                                                                      "z_max")}}
    assert COLLIDERS["box_container"].build(p, BuildContext()).sdf is sdf_box_container
    assert COLLIDERS["box_container"].build({**p, "open_z_max": True}, BuildContext()).sdf is sdf_box_open


def _dam(open_x_max: bool, frames: int = 15) -> tuple[int, int, np.ndarray, np.ndarray]:
    """A 0.2 m water column at the x- end of a 0.6 x 0.2 x 0.4 m Domain: (particles at the start,
    removed in all, lowest and highest position reached)."""
    tank = {"type": "box_container", "name": "Domain", "size": [0.6, 0.2, 0.4], "position": [0.3, 0.1, 0.2]}
    if open_x_max:
        tank["open_x_max"] = True
    data = scene_dict(colliders=[tank], frame_end=1 + frames, domain={"min": [0, 0, 0], "max": [0.6, 0.2, 0.4]},
                      sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.2, 0.2, 0.3]}])
    sim = Simulation(parse_scene(data))
    n0, removed = sim.state.n, 0
    lo, hi = sim.state.x.min(axis=0), sim.state.x.max(axis=0)
    for _ in range(frames):
        stats = sim.advance_frame()
        removed += stats.removed
        assert stats.particles == sim.state.n
        lo, hi = np.minimum(lo, sim.state.x.min(axis=0)), np.maximum(hi, sim.state.x.max(axis=0))
    assert sim.state.n == n0 - removed
    return n0, removed, lo, hi


def test_open_side_lets_water_out_and_closed_sides_hold():
    n0, removed, lo, hi = _dam(open_x_max=True)
    # Measured: 28 of 96 particles left through x+ in 15 frames (0.5 s).
    assert removed >= 0.15 * n0
    r = 0.025  # particle radius: the closed walls hold particle surfaces at the wall
    assert lo == pytest.approx([r, r, r], abs=1e-9)
    assert hi[1] == pytest.approx(0.2 - r, abs=1e-9) and hi[2] < 0.4
    _, removed_closed, _, hi_closed = _dam(open_x_max=False)
    # The surge reaches the closed far wall and no particle passes it.
    assert removed_closed == 0 and 0.6 - r - 0.01 < hi_closed[0] <= 0.6 - r + 1e-9


def _slide(friction: float, frames: int = 10) -> float:
    """Distance (m) the centre of a water block launched at 2 m/s along the Domain's floor travels."""
    tank = {"type": "box_container", "name": "Domain", "size": [2.0, 0.4, 0.4], "position": [1.0, 0.2, 0.2],
            "friction": friction}
    data = scene_dict(colliders=[tank], frame_end=1 + frames,
                      sources=[{"type": "box", "material": "water", "min": [0.1, 0.1, 0], "max": [0.3, 0.3, 0.1],
                                "velocity": [2.0, 0, 0]}])
    sim = Simulation(parse_scene(data))
    x0 = float(sim.state.x[:, 0].mean())
    for _ in range(frames):
        sim.advance_frame()
    return float(sim.state.x[:, 0].mean()) - x0


def test_wall_friction_slows_a_block_sliding_on_the_floor():
    free, rough = _slide(0.0), _slide(0.5)
    # Measured: 0.667 m (2 m/s for 1/3 s: no loss) against 0.144 m.
    assert free == pytest.approx(2.0 * 10 / 30, rel=0.02)
    assert rough < 0.5 * free
