"""Simulation benchmarks: the dam break against SPlisHSPlasH's DFSPH, and scaling with particle count.

``dam_break``: ``scripts/scenes/dam_break.json`` for ``--seconds`` simulated (default 1 s = 30
frames), automatic substeps, JIT compile measured apart (a warm-up on a coarse copy of the scene
compiles every kernel; numba's on-disk cache makes later processes start fast). With
``--vs splishsplash`` the same tank, column and particle spacing run in SPlisHSPlasH (DFSPH, its
DamBreak parameters) in a subprocess of the bench venv, in the same run, and ``ratio`` is our wall
time over theirs.

``dam_break_scaling``: the same column at the scene's spacing and at half of it (8x the particles),
each advanced the same number of steps of the same dt (the finer one's stable step), so the ratio
isolates the cost per particle-step from the substep count.
"""

from __future__ import annotations

import copy
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sph_addon.core.scene import load_scene, parse_scene  # noqa: E402
from sph_addon.core.simulation import Simulation  # noqa: E402

SCENE = REPO / "scripts" / "scenes" / "dam_break.json"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _scene_variant(spacing: float | None = None, frames: int | None = None, substeps: int | None = None):
    base = load_scene(SCENE)
    raw = copy.deepcopy(base.raw)
    if spacing is not None:
        raw["particle_spacing"] = spacing
    if frames is not None:
        raw["frame_end"] = raw["frame_start"] + frames
    if substeps is not None:
        raw.setdefault("simulation", {})["substeps"] = substeps
    return parse_scene(raw, base.base_dir)


def _warm_up() -> float:
    t0 = time.perf_counter()
    sim = Simulation(_scene_variant(spacing=0.2, frames=1))
    sim.advance_frame()
    return time.perf_counter() - t0


def run_dam_break(seconds: float, vs: str | None, threads: int) -> dict:
    compile_s = _warm_up()
    scene = _scene_variant(frames=int(round(seconds * 30)))
    sim = Simulation(scene)
    n0 = sim.state.n
    steps = 0
    t0 = time.perf_counter()
    frames = 0
    while sim.frame < scene.frame_end:
        steps += sim.advance_frame().substeps
        frames += 1
    wall = time.perf_counter() - t0
    out = {"scene": "dam_break", "particles": n0, "frames": frames, "steps": steps, "wall_s": round(wall, 3),
           "particle_steps_per_s": round(n0 * steps / wall), "peak_mb": round(_peak_mb(), 1),
           "compile_s": round(compile_s, 3), "simulated_s": seconds}
    if vs == "splishsplash":
        from peers import peer_env, peer_python

        proc = subprocess.run([peer_python(), str(Path(__file__).with_name("splishsplash_peer.py")),
                               "--seconds", str(seconds), "--spacing", str(scene.particle_spacing),
                               "--threads", str(threads)], capture_output=True, text=True,
                              env=peer_env(threads), check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"SPlisHSPlasH failed:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
        peer = json.loads(proc.stdout.strip().splitlines()[-1])
        out.update(peer_particles=peer["particles"], peer_steps=peer["steps"], peer_wall_s=round(peer["wall_s"], 3),
                   ratio=round(wall / peer["wall_s"], 4))
    elif vs is not None:
        raise SystemExit(f"unknown peer {vs!r} for dam_break (use splishsplash)")
    return out


def run_scaling(steps: int) -> dict:
    """Cost of the same number of steps at the scene's spacing and at half of it (8x the particles).

    The stable relaxation pass scales as sqrt(h / k); the fine scene gets half the stiffness so both
    need the same passes per step and the ratio measures the cost per particle-step alone.
    """
    _warm_up()
    base = _scene_variant()
    coarse = Simulation(base)
    raw = copy.deepcopy(base.raw)
    raw["particle_spacing"] = base.particle_spacing / 2
    for mat in raw["materials"]:
        mat.setdefault("params", {})["stiffness"] = base.materials[0].params.stiffness / 2
    fine = Simulation(parse_scene(raw, base.base_dir))
    dt = 1.0 / (base.fps * 5)
    result = {"scene": "dam_break_scaling", "steps": steps, "dt": dt}
    for name, sim in (("coarse", coarse), ("fine", fine)):
        sim.step(dt)  # the first step sizes the buffers
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step(dt)
        wall = time.perf_counter() - t0
        result[f"{name}_particles"] = sim.state.n
        result[f"{name}_passes"] = sim.models[0].passes
        result[f"{name}_wall_s"] = round(wall, 3)
    result["particle_ratio"] = round(result["fine_particles"] / result["coarse_particles"], 3)
    result["time_ratio"] = round(result["fine_wall_s"] / result["coarse_wall_s"], 3)
    result["peak_mb"] = round(_peak_mb(), 1)
    return result
