"""simulation.time_scale: each frame advances time_scale / fps seconds of physics (slow motion below 1).

Frame numbers stay the timeline's (inflow ranges, collider keyframes), rates and speeds stay physical:
a falling drop, an inflow and a keyframed collider are each checked against the physical time the
frames stand for.
"""

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

G = 9.81
FPS = 30.0
FRAMES = 6


def _drop(time_scale: float) -> tuple[float, list[int]]:
    """(Fall of a free water drop's centre of mass over FRAMES frames in m, substeps of each frame)."""
    data = scene_dict(colliders=[], fps=FPS, frame_end=1 + FRAMES, simulation={"time_scale": time_scale},
                      sources=[{"type": "box", "material": "water", "min": [0, 0, 1], "max": [0.2, 0.2, 1.2]}])
    sim = Simulation(parse_scene(data))
    z0 = float(sim.state.x[:, 2].mean())
    substeps = [sim.advance_frame().substeps for _ in range(FRAMES)]
    return z0 - float(sim.state.x[:, 2].mean()), substeps


def test_slow_motion_drop_falls_g_t2_over_2_with_scaled_time():
    # The pair forces of the liquid cancel in the centre of mass: it falls freely, g t^2 / 2 with
    # t = time_scale x frames / fps, as the semi-implicit Euler steps take it (v += g dt, then
    # z -= v dt, with each frame's substeps: the first frame may take more than the next).
    for scale in (0.5, 1.0):
        fall, substeps = _drop(scale)
        v = stepped = 0.0
        for n in substeps:
            dt = scale / (FPS * n)
            for _ in range(n):
                v += G * dt
                stepped += v * dt
        t = scale * FRAMES / FPS
        assert stepped == pytest.approx(0.5 * G * t * t, rel=0.1)
        assert fall == pytest.approx(stepped, rel=1e-6), (scale, fall, stepped, substeps)
    slow, _ = _drop(0.5)
    normal, _ = _drop(1.0)
    # Half the time per frame: a quarter of the fall (measured 0.0495 m vs 0.1978 m).
    assert slow / normal == pytest.approx(0.25, rel=0.03)


def test_inflow_emits_its_physical_rate_per_scaled_frame():
    def emitted(scale: float) -> float:
        """Volume emitted over 6 frames, m^3: the particles' lattice cells plus the layer owed."""
        data = scene_dict(colliders=[], frame_end=7, simulation={"time_scale": scale, "gravity": [0, 0, 0]},
                          sources=[{"type": "inflow", "material": "water", "center": [0, 0, 0],
                                    "velocity": [0, 0, -1.0], "radius": 0.1}])
        sim = Simulation(parse_scene(data))
        for _ in range(6):
            sim.advance_frame()
        return sim.state.n * 0.05**3 + sim.inflows[0].emitted_volume

    # area x speed x (6 frames x time_scale / fps) of physical time.
    for scale in (0.5, 1.0):
        assert emitted(scale) == pytest.approx(np.pi * 0.1**2 * 1.0 * 6 * scale / 30, rel=1e-9)


def test_keyframed_collider_follows_the_timeline_and_pushes_faster_in_physical_time():
    # A plate keyed from x = 0 to x = 0.3 m over frames 1-4 moves 0.1 m per frame of the timeline
    # whatever the time scale: 3 m/s of physics at time scale 1, 6 m/s at 0.5 (a frame lasts 1/60 s).
    def sim_at(scale: float, moving: bool = True) -> Simulation:
        keys = [{"frame": 1, "position": [0, 0, 0]}, {"frame": 4, "position": [0.3, 0, 0]}]
        data = scene_dict(frame_end=4, simulation={"time_scale": scale, "cfl": 0.2, "max_substeps": 1000,
                                                   "gravity": [0, 0, 0]},
                          colliders=[{"type": "box", "size": [0.1, 1, 1], "position": [0, 0, 0],
                                      "keyframes": keys if moving else keys[:1]}],
                          sources=[{"type": "box", "material": "water", "min": [0.2, 0, 0], "max": [0.3, 0.1, 0.1]}])
        return Simulation(parse_scene(data))

    slow, normal = sim_at(0.5), sim_at(1.0)
    assert slow._frame_at(0.05) == pytest.approx(4.0)  # t = 0.05 s is frame 1 + 0.05 x 30 / 0.5
    assert normal._frame_at(0.05) == pytest.approx(2.5)
    # The substep rule sees the collider's physical speed: the same travel per frame (0.1 m at
    # CFL 0.2 x 0.05 m: 10 substeps) at both scales. Reading 3 m/s over a 1/60 s frame would give 5.
    assert slow.substeps_for_frame() == normal.substeps_for_frame() == 10
    assert sim_at(0.5, moving=False).substeps_for_frame() == 2  # min_substeps: the plate set the 10


def test_time_scale_is_validated():
    with pytest.raises(InputError) as exc:
        parse_scene(scene_dict(simulation={"time_scale": 0}))
    assert exc.value.where == "simulation.time_scale"
