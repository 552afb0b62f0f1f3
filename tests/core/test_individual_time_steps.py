"""Individual time steps (Desbrun & Cani 1996, section 5.2) on the ``sph`` model: they pay where few
particles are fast, give the same result as one step for all, and resume exactly.

The scene: a thin jet of a soft paste (2 x 2 particles, 0.3 m long, 16 m/s) shot into a resting pool
of it (0.3 m square, 5 cm deep, 4,500 particles). The jet is faster than the material's speed of sound
(2 m/s): its particles' own limit (eq. 8, 0.3 ε / |v|) is a quarter of the resting particles'.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, scene_dict
from test_bake_cli import killed_after

from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.world.simulation import Simulation

# A soft paste (mashed potato's density, a speed of sound of 2 m/s, no yield stress): a jet at 16 m/s is
# eight times faster than its sound.
SOFT = {"speed_of_sound": 2.0, "artificial_viscosity": 0.8, "tensile_strength": 500.0, "yield_stress": 0.0}


def jet_scene(time_steps: str = "individual", fps: int = 60, frame_end: int = 1, speed: float = 16.0,
              pool: float = 0.3) -> dict:
    """A 2 cm jet at ``speed`` m/s into a 5 cm deep pool ``pool`` m wide, in a tank as wide."""
    a = pool / 2
    return scene_dict(
        particle_spacing=0.01, fps=fps, frame_end=frame_end, simulation={"time_steps": time_steps},
        materials=[{"name": "mash", "model": "sph", "preset": "mashed_potato", "params": SOFT}],
        sources=[{"type": "box", "material": "mash", "min": [-a, -a, 0], "max": [a, a, 0.05]},
                 {"type": "box", "material": "mash", "min": [-0.01, -0.01, 0.07], "max": [0.01, 0.01, 0.37],
                  "velocity": [0, 0, -speed]}],
        colliders=[{"type": "box_container", "size": [pool, pool, 0.5], "position": [0, 0, 0.25]}])


@pytest.fixture(scope="module")
def jets() -> dict:
    """The jet's first frame (1/60 s: it enters the pool and reaches the floor), both ways."""
    out = {}
    for mode in ("individual", "global"):
        sim = Simulation(parse_scene(jet_scene(mode)))
        jet = sim.state.x[:, 2] > 0.06
        jet_ids = sim.state.ids[jet]
        st = sim.advance_frame()
        m = sim._particle_mass[sim.state.material]
        in_jet = np.isin(sim.state.ids, jet_ids)
        out[mode] = dict(stats=st.extra, ke=0.5 * float((m * (sim.state.v**2).sum(1)).sum()),
                         jet_depth=float(sim.state.x[in_jet, 2].mean()))
    return out


def test_individual_levels_halve_the_work_at_the_same_result(jets):
    """Half the force evaluations or fewer (measured 3.7x fewer in this frame), at least 3 levels in use
    in one world, and the kinetic energy and the jet's mean depth within 2 % of the one-step bake
    (measured 0.25 % and 0.05 %). The wall-clock gain is in BENCHMARKS.md (a timed test would be
    flaky): the evaluations are the work the levels save."""
    ind, glob = jets["individual"], jets["global"]
    assert 2 * ind["stats"]["force_evaluations"] <= glob["stats"]["force_evaluations"], (
        ind["stats"]["force_evaluations"], glob["stats"]["force_evaluations"])
    assert abs(ind["ke"] / glob["ke"] - 1) < 0.02, (ind["ke"], glob["ke"])
    assert abs(ind["jet_depth"] / glob["jet_depth"] - 1) < 0.02, (ind["jet_depth"], glob["jet_depth"])


def test_the_jet_uses_three_levels_in_one_world():
    """While the jet flies the resting pool is at the coarsest level and the jet two levels finer; when
    it enters the pool, the neighbour limiter puts the particles around it between: three levels in one
    world (the substeps of the first frame, 1/60 s in 27)."""
    sim = Simulation(parse_scene(jet_scene()))
    jet_ids = sim.state.ids[sim.state.x[:, 2] > 0.06]
    most = 0
    for _ in range(27):
        sim.step(1 / 60 / 27)
        level = sim.state.arrays["time_level"]
        jet = np.isin(sim.state.ids, jet_ids)
        assert level[jet].max() > level[~jet].min()
        most = max(most, int((np.bincount(level) > 0).sum()))
    assert most >= 3, most


@pytest.mark.slow
def test_sigkill_with_levels_in_flight_resumes_byte_identically(tmp_path, write_scene):
    """Killed while the jet's particles are at finer levels than the pool's (frames at 1/240 s), the
    resumed bake writes the same bytes as the uninterrupted one; the kept accelerations and the
    levels come back from the checkpoint."""
    scene = write_scene(jet_scene(fps=240, frame_end=10))
    full, killed = tmp_path / "full", tmp_path / "killed"
    cmd = [sys.executable, "-m", "sph_addon", "bake", str(scene), "--quiet", "--out"]
    assert subprocess.run([*cmd, str(full)], cwd=REPO, capture_output=True).returncode == 0
    levels = [json.loads((full / "manifest.json").read_text())["stats"][str(f)]["time_levels"] for f in (2, 3)]
    assert all(len([c for c in lv if c]) >= 2 for lv in levels), levels
    done = killed_after(cmd, killed, 3)
    assert 3 <= len(done) < 10, done
    arrays, _ = CacheDir(killed).read_checkpoint(CacheDir(killed).read_manifest()["checkpoint"])
    assert "acceleration" in arrays and "time_level" in arrays
    assert subprocess.run([*cmd, str(killed), "--resume"], cwd=REPO, capture_output=True).returncode == 0
    for f in range(1, 11):
        a = (full / "particles" / f"particles_{f:04d}.ply").read_bytes()
        b = (killed / "particles" / f"particles_{f:04d}.ply").read_bytes()
        assert a == b, f"frame {f} differs after resume"
