"""The material-model contract: a model defined only here plugs into the world with no other file edited.

``ToyOscillator`` is a force-based model: each particle is tied to the point
where it was emitted by a linear spring of angular frequency ω = 2π f
(a = -ω² (x - anchor)), advanced by the leapfrog scheme with individual
power-of-two time steps (Desbrun & Cani 1996 section 5.2). Its particles share
the world with viscoelastic water. Everything the contract offers is used: a
parameter (typed dataclass), scoped presets, a per-particle array with a fill
value set on emission, a cache field, frame statistics and non-array state
that must survive a checkpoint.

Each toy particle is an undamped harmonic oscillator started at its anchor
with velocity v0, so z(t) - anchor_z = (v0/ω) sin ωt: the bake is checked
against that.
"""

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, scene_dict

from sph_addon.core import models as solvers
from sph_addon.core.bake import bake
from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.models.base import ArraySpec, CacheField, Look, MaterialModel, Removed
from sph_addon.core.scene.params import Parameter

KILL_ENV = "SPH_TEST_TOY_KILL_AFTER_FRAMES"


class ToyOscillator(MaterialModel):
    name = "toy_oscillator"
    label = "Toy Oscillator"
    description = "Particles on springs to their emission point (a test model)"
    citation = "Desbrun & Cani 1996, section 5.2 (individual time steps)"
    parameters = (Parameter("frequency", 1.0, "Hz", 0.01, 1000.0, description="f = ω / 2π of each particle"),
                  Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, description="mass per volume"))
    presets = {"slow": {"frequency": 1.0}, "fast": {"frequency": 12.0}}
    arrays = {"anchor": ArraySpec((3,), np.float64, math.nan, "emission point, m")}
    cache_fields = (CacheField("anchor_z", "anchor", 2, "<f4", "height of the emission point, m"),)
    integrator = "leapfrog"

    def __init__(self, setup):
        super().__init__(setup)
        self.omega = 2 * math.pi * self.per_material("frequency")
        self.frames_seen = 0  # non-array state: must come back from a checkpoint

    def on_emitted(self, world, new):
        world.arrays["anchor"][new] = world.x[new]

    def accelerations(self, ctx, idx, out):
        w2 = self.omega[ctx.material[idx]] ** 2
        out -= w2[:, None] * (ctx.x[idx] - ctx.arrays["anchor"][idx])

    def particle_dt(self, world, idx):
        # ω δt = 0.1: a leapfrog phase error of (ω δt)²/24 per radian, 0.04 % per period.
        return 0.1 / self.omega[world.material[idx]]

    def frame_stats(self, world):
        self.frames_seen += 1
        if os.environ.get(KILL_ENV) == str(self.frames_seen):
            os.kill(os.getpid(), signal.SIGKILL)  # a kill at a known place, mid-bake
        return {"toy_frames_seen": self.frames_seen}

    def state_dict(self):
        return {"frames_seen": self.frames_seen}

    def load_state_dict(self, state):
        self.frames_seen = state["frames_seen"]


V0 = 0.2  # m/s, upward start velocity of every toy particle


def toy_scene(frame_end: int = 20) -> dict:
    # No gravity: the water block only holds itself together (the contract's world sharing is
    # the point here); the toy blocks are further than h from it and from each other.
    return scene_dict(
        frame_end=frame_end, simulation={"gravity": [0, 0, 0]}, colliders=[],
        materials=[{"name": "water", "preset": "water"},
                   {"name": "slow", "model": "toy_oscillator", "preset": "slow"},
                   {"name": "fast", "model": "toy_oscillator", "preset": "fast"}],
        sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.2, 0.2, 0.2]},
                 {"type": "box", "material": "slow", "min": [1, 0, 0], "max": [1.1, 0.1, 0.1],
                  "velocity": [0, 0, V0]},
                 {"type": "box", "material": "fast", "min": [2, 0, 0], "max": [2.1, 0.1, 0.1],
                  "velocity": [0, 0, V0]}])


@pytest.fixture
def toy_registered():
    solvers.register(ToyOscillator)
    yield
    solvers.unregister(ToyOscillator.name)


def test_declarations_generate_a_typed_parameter_class():
    p = ToyOscillator.Params(frequency=3.0)
    assert p.frequency == 3.0 and "Hz" in ToyOscillator.Params.__doc__
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.frequency = 4.0
    with pytest.raises(TypeError, match="undeclared"):
        type("Bad", (MaterialModel,), {"name": "bad", "parameters": (), "presets": {"x": {"nope": 1}}})


def test_looks_and_removed_parameters_are_declarations_of_the_model():
    """A preset's look is data beside the presets (optional: the replay shades a preset without one with the
    neutral look); a look of no preset is refused. A removed parameter's advice is the scene file's text,
    with the panel's words beside it for the note an old .blend file's upgrade logs."""
    assert ToyOscillator.looks == {} and MaterialModel.looks == {}
    density = Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, description="mass per volume")
    with pytest.raises(TypeError, match="Look of one of its presets"):
        type("Bad", (MaterialModel,), {"name": "bad", "parameters": (density,), "presets": {"x": {}},
                                       "looks": {"y": Look(color=(1.0, 1.0, 1.0), roughness=0.5)}})
    advice = Removed("delete this field and set density_error", "set Density Error")
    assert advice == "delete this field and set density_error" and f"{advice}." == advice + "."
    assert advice.panel == "set Density Error" and Removed("one text").panel == "one text"


def test_toy_model_bakes_in_one_world_with_viscoelastic_particles(tmp_path, write_scene, toy_registered):
    manifest = bake(write_scene(toy_scene()), tmp_path / "c")
    cache = CacheDir(tmp_path / "c")
    t_end = (manifest["frame_end"] - manifest["frame_start"]) / 30.0
    v = cache.read_particles(manifest["frame_end"])
    assert "anchor_z" in v.dtype.names, "the model's declared cache field is in the frames"
    assert len(np.unique(v["id"])) == len(v), "one id space for every model"
    water = v["material"] == 0
    assert water.sum() == 64 and np.isfinite(v["z"][water]).all()
    assert np.isnan(v["anchor_z"][water]).all(), "other models' particles keep the declared fill"
    levels = manifest["stats"][str(manifest["frame_end"])]["time_levels"]
    used = [lvl for lvl, count in enumerate(levels) if count]
    # Substeps of 1/60 s: ω δt <= 0.1 puts 1 Hz at level 1 and 12 Hz at level 4.
    assert used == [1, 4], levels
    for mat, f, level in ((1, 1.0, 1), (2, 12.0, 4)):
        sel = v["material"] == mat
        w = 2 * math.pi * f
        amplitude = V0 / w
        expected = amplitude * math.sin(w * t_end)
        # Leapfrog's phase error grows as ω t (ω δt)²/24 (second order); the bound is 1.5 times
        # that, plus float32 rounding of the frames. A first-order scheme, or a particle stepped
        # at another level, misses it (12 Hz at level 3 errs by 4 times as much).
        step = 1 / 60 / 2**level
        bound = 1.5 * w * t_end * (w * step) ** 2 / 24 * amplitude + 1e-6
        error = np.abs(v["z"][sel] - v["anchor_z"][sel] - expected).max()
        assert error < bound, (f, error, bound)
    assert manifest["stats"][str(manifest["frame_end"])]["toy_frames_seen"] == 20  # frames 1 to 20


def test_toy_model_survives_sigkill_and_resume_byte_identically(tmp_path, write_scene):
    scene = write_scene(toy_scene(frame_end=12))
    code = ("import sys; sys.path[:0] = ['tests', 'tests/core']; import test_model_contract as t; "
            "from sph_addon.core import solvers; solvers.register(t.ToyOscillator); "
            "from sph_addon.cli import main; sys.exit(main(sys.argv[1:]))")

    def run(out, *extra, kill_after=None):
        env = dict(os.environ)
        env.pop(KILL_ENV, None)
        if kill_after is not None:
            env[KILL_ENV] = str(kill_after)
        return subprocess.run([sys.executable, "-c", code, "bake", str(scene), "--out", str(out), "--quiet",
                               *extra], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)

    full, killed = tmp_path / "full", tmp_path / "killed"
    assert run(full).returncode == 0
    r = run(killed, kill_after=7)
    assert r.returncode == -signal.SIGKILL, r.stderr
    done = json.loads((killed / "manifest.json").read_text())["frames_done"]
    # Frame statistics are taken before a frame is written: the 7th call (frame 7) never wrote it.
    assert done == list(range(1, 7)), done
    arrays, meta = CacheDir(killed).read_checkpoint(6)
    assert "anchor" in arrays and meta["models"]["toy_oscillator"] == {"frames_seen": 6}
    r = run(killed, "--resume")
    assert r.returncode == 0, r.stderr
    for f in range(1, 13):
        a = (full / "particles" / f"particles_{f:04d}.ply").read_bytes()
        b = (killed / "particles" / f"particles_{f:04d}.ply").read_bytes()
        assert a == b, f"frame {f} differs after resume"
    stats = [json.loads((d / "manifest.json").read_text())["stats"] for d in (full, killed)]
    assert stats[0]["12"]["toy_frames_seen"] == stats[1]["12"]["toy_frames_seen"] == 12


class FreeParticles(MaterialModel):
    """Force-free particles advanced by leapfrog: only other models' pair terms move them."""

    name = "free_particles"
    description = "Particles with no forces of their own (a test model)"
    citation = "none (test)"
    parameters = (Parameter("density", 1000.0, "kg/m^3", 1.0, 25000.0, description="mass per volume"),)
    presets = {"default": {}}
    integrator = "leapfrog"


def test_momentum_is_conserved_across_schemes():
    """Water (prediction-relaxation) interleaved with force-free leapfrog particles, no gravity, no
    colliders: relaxation displacements and viscosity impulses that reach the other scheme's
    particles become equal and opposite velocity changes (integrators.py), so the total momentum
    is unchanged to round-off (1e-9 relative) while both kinds of particles are pushed. Both materials
    have one density: the implicit viscosity exchanges momentum as between equal masses."""
    from sph_addon.core.scene.scene_file import parse_scene
    from sph_addon.core.world.simulation import Simulation

    solvers.register(FreeParticles)
    try:
        _momentum_across_schemes(Simulation(parse_scene(scene_dict(
            simulation={"gravity": [0, 0, 0], "substeps": 4}, colliders=[],
            materials=[{"name": "water", "preset": "honey", "params": {"density": 1000.0}},
                       {"name": "free", "model": "free_particles"}],
            sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.3, 0.3]},
                     {"type": "box", "material": "free", "min": [0.3, 0, 0], "max": [0.5, 0.3, 0.3]}]))))
    finally:
        solvers.unregister(FreeParticles.name)


def _momentum_across_schemes(sim) -> None:
    assert [type(s).__name__ for s, _, _ in sim.schemes] == ["PredictionRelaxation", "Leapfrog"]
    rng = np.random.default_rng(1)
    sim.state.v[:] = rng.normal(0.0, 0.3, sim.state.v.shape)
    free = sim.state.material == 1
    v_free = sim.state.v[free].copy()
    p0 = sim.state.v.sum(axis=0)
    scale = np.abs(sim.state.v).sum()
    for _ in range(2):
        sim.advance_frame()
    free = sim.state.material == 1
    assert np.abs(sim.state.v.sum(axis=0) - p0).max() < 1e-9 * scale
    # Sorting reorders particles: compare the free particles' velocity spread, not rows.
    assert not np.allclose(np.sort(sim.state.v[free], axis=0), np.sort(v_free, axis=0)), \
        "the water's pair terms must reach the free particles"
