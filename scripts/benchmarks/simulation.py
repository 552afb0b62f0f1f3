"""Simulation benchmarks: the dam break against SPlisHSPlasH's DFSPH, and scaling with particle count.

``dam_break``: ``scripts/scenes/dam_break.json`` for ``--seconds`` simulated (default 1 s = 30
frames), automatic substeps, JIT compile measured apart (a warm-up on a coarse copy of the scene
compiles every kernel; numba's on-disk cache makes later processes start fast). Accuracy beside
time: the surge front is taken after every frame and its slope in Z(T) compared with Martin &
Moyce (1952) (``martin_moyce.py``: ``front_slope``, ``mm_slope``, ``front_error`` =
front_slope / mm_slope - 1; the slope's window ends at T = 3.0, 0.68 s simulated, so shorter runs
print None). ``density_iterations_per_step`` is the mean of the density relaxation passes per
substep over the run. With ``--vs splishsplash`` the same tank, column and particle spacing run in
SPlisHSPlasH (DFSPH, its DamBreak parameters) in a subprocess of the bench venv, in the same run,
its front measured the same way, and ``ratio`` is our wall time over theirs.

``dam_break_scaling``: the same column at the scene's spacing and at half of it (8x the particles),
each advanced the same number of steps of the same dt, with the density relaxation passes per step
of each, so the cost per particle-step (and per particle-pass) can be read apart from the substep
and pass counts.

``dam_break_1m``: the same geometry at the spacing that gives about ``--particles`` particles
(default one million), ``--frames`` frames (default 3) after the warm-up: seconds per frame,
substeps, density passes per substep and peak resident bytes per particle.
"""

from __future__ import annotations

import copy
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import martin_moyce as mm
import numpy as np

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sph_addon.core.scene.scene_file import load_scene, parse_scene  # noqa: E402
from sph_addon.core.world.simulation import Simulation  # noqa: E402

SCENE = REPO / "scripts" / "scenes" / "dam_break.json"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# The classic SPH liquid (the ``sph`` model) on the same column: its speed of sound ten times the surge's
# speed, 2 (g a)^½ for a column a wide (Martin & Moyce's front reaches about 2 (g a)^½), a = 1 m here.
SPH_WATER = {"name": "water", "model": "sph", "preset": "classic_water", "params": {"speed_of_sound": 63.0}}


def _scene_variant(spacing: float | None = None, frames: int | None = None, substeps: int | None = None,
                   model: str = "viscoelastic"):
    base = load_scene(SCENE)
    raw = copy.deepcopy(base.raw)
    if model == "sph":
        raw["materials"] = [SPH_WATER]
    if spacing is not None:
        raw["particle_spacing"] = spacing
    if frames is not None:
        raw["frame_end"] = raw["frame_start"] + frames
    if substeps is not None:
        raw.setdefault("simulation", {})["substeps"] = substeps
    return parse_scene(raw, base.base_dir)


def _warm_up(model: str = "viscoelastic") -> float:
    t0 = time.perf_counter()
    sim = Simulation(_scene_variant(spacing=0.2, frames=1, model=model))
    sim.advance_frame()
    return time.perf_counter() - t0


def _geometry(scene) -> tuple[float, float, float]:
    """(back wall x, column width a, |g|) of a dam break scene, m, m, m/s² (the surge runs along +x)."""
    raw = scene.raw
    tank = raw["colliders"][0]
    src = raw["sources"][0]
    wall = tank["position"][0] - tank["size"][0] / 2
    a = src["max"][0] - src["min"][0]
    g = float(np.linalg.norm(raw.get("simulation", {}).get("gravity", (0.0, 0.0, -9.81))))
    return wall, a, g


def _front_point(sim, wall: float, a: float, g: float) -> tuple[float, float]:
    """(T, Z) of the simulation as it stands (martin_moyce.front, non-dimensional)."""
    z = mm.front(sim.state.x[:, 0], wall, sim.spacing)
    return round(mm.nondim_time(sim.state.time, a, g), 4), round(z / a, 4)


def _iterations(stats) -> float:
    """Density relaxation passes summed over a frame's substeps (its mean per substep x substeps)."""
    return float(stats.extra.get("density_iterations", 0.0)) * stats.substeps


def _round(value, digits: int = 4):
    return None if value is None else round(value, digits)


def run_dam_break(seconds: float, vs: str | None, threads: int, spacing: float | None = None,
                  model: str = "viscoelastic", peer_method: str = "dfsph") -> dict:
    """The dam break with our ``model`` (``viscoelastic`` water, or ``sph``: the classic liquid) and, with
    ``vs="splishsplash"``, SPlisHSPlasH's ``peer_method`` (dfsph or wcsph) on the same column."""
    compile_s = _warm_up(model)
    scene = _scene_variant(spacing=spacing, frames=int(round(seconds * 30)), model=model)
    sim = Simulation(scene)
    wall_x, a, g = _geometry(scene)
    n0 = sim.state.n
    steps = 0
    iterations = 0.0
    grid = 0.0  # the grid projection's pressure-solve iterations, summed over the substeps
    wall = 0.0  # the frames alone, not the front measurement between them
    frames = 0
    fronts = [_front_point(sim, wall_x, a, g)]
    while sim.frame < scene.frame_end:
        t0 = time.perf_counter()
        stats = sim.advance_frame()
        wall += time.perf_counter() - t0
        steps += stats.substeps
        iterations += _iterations(stats)
        grid += stats.extra.get("projection_iterations", 0.0) * stats.substeps
        frames += 1
        fronts.append(_front_point(sim, wall_x, a, g))
    slope = mm.front_slope(fronts)
    out = {"scene": "dam_break", "model": model, "particles": n0, "frames": frames, "steps": steps,
           "wall_s": round(wall, 3),
           "front_slope": _round(slope), "mm_slope": round(mm.MM_SLOPE, 4),
           "front_error": _round(mm.front_error(slope)),
           "particle_steps_per_s": round(n0 * steps / wall),
           "density_iterations_per_step": round(iterations / max(steps, 1), 3),
           "grid_iterations_per_step": round(grid / max(steps, 1), 1),
           "peak_mb": round(_peak_mb(), 1), "compile_s": round(compile_s, 3), "simulated_s": seconds}
    peer_fronts = None
    if vs == "splishsplash":
        from peers import peer_env, peer_python

        proc = subprocess.run([peer_python(), str(Path(__file__).with_name("splishsplash_peer.py")),
                               "--seconds", str(seconds), "--spacing", str(scene.particle_spacing),
                               "--threads", str(threads), "--method", peer_method], capture_output=True, text=True,
                              env=peer_env(threads), check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"SPlisHSPlasH failed:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
        peer = json.loads(proc.stdout.strip().splitlines()[-1])
        peer_fronts = peer["fronts"]
        out.update(peer_method=peer_method)
        out.update(peer_particles=peer["particles"], peer_steps=peer["steps"], peer_wall_s=round(peer["wall_s"], 3),
                   peer_front_slope=_round(peer["front_slope"]), peer_front_error=_round(peer["front_error"]),
                   peer_particle_steps_per_s=round(peer["particles"] * peer["steps"] / peer["wall_s"]),
                   ratio=round(wall / peer["wall_s"], 4))
    elif vs is not None:
        raise SystemExit(f"unknown peer {vs!r} for dam_break (use splishsplash)")
    out["fronts_TZ"] = fronts
    if peer_fronts is not None:
        out["peer_fronts_TZ"] = [tuple(p) for p in peer_fronts]
    return out


def run_scaling(steps: int) -> dict:
    """Cost of the same number of steps at the scene's spacing and at half of it (8x the particles).

    The model derives its constants from the spacing and relaxes the density until its error is met,
    so the two resolutions may need different passes per step: each one's mean passes per step
    (``*_density_iterations``) is recorded, and ``time_ratio_per_pass`` divides the time ratio by the
    particle ratio and the passes ratio (1 when a particle-pass costs the same at both).
    """
    _warm_up()
    base = _scene_variant()
    coarse = Simulation(base)
    fine = Simulation(_scene_variant(spacing=base.particle_spacing / 2))
    dt = 1.0 / (base.fps * 5)
    result = {"scene": "dam_break_scaling", "steps": steps, "dt": dt}
    for name, sim in (("coarse", coarse), ("fine", fine)):
        sim.step(dt)  # the first step sizes the buffers
        sim.check_and_stats()  # and its passes are left out of the statistics
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step(dt)
        wall = time.perf_counter() - t0
        stats = sim.check_and_stats(steps)
        result[f"{name}_particles"] = sim.state.n
        result[f"{name}_density_iterations"] = stats.extra.get("density_iterations")
        result[f"{name}_density_iterations_max"] = stats.extra.get("density_iterations_max")
        result[f"{name}_wall_s"] = round(wall, 3)
    result["particle_ratio"] = round(result["fine_particles"] / result["coarse_particles"], 3)
    result["time_ratio"] = round(result["fine_wall_s"] / result["coarse_wall_s"], 3)
    if result["coarse_density_iterations"] and result["fine_density_iterations"]:
        passes = result["fine_density_iterations"] / result["coarse_density_iterations"]
        result["time_ratio_per_pass"] = round(result["time_ratio"] / (result["particle_ratio"] * passes), 3)
    result["peak_mb"] = round(_peak_mb(), 1)
    return result


def spacing_for(particles: int) -> float:
    """The dam break's spacing for about ``particles`` particles: the column's volume / spacing³."""
    base = load_scene(SCENE)
    src = base.raw["sources"][0]
    volume = math.prod(hi - lo for lo, hi in zip(src["min"], src["max"]))
    return (volume / particles) ** (1.0 / 3.0)


def run_large(particles: int, frames: int) -> dict:
    """The dam break at about ``particles`` particles (the same geometry, a finer spacing), ``frames`` frames.

    ``peak_bytes_per_particle`` is the process's peak resident size (ru_maxrss, including the
    interpreter, numba and the warm-up, ``rss_before_mb``) over the particle count.
    """
    compile_s = _warm_up()
    rss_before = _peak_mb()
    spacing = spacing_for(particles)
    t0 = time.perf_counter()
    sim = Simulation(_scene_variant(spacing=spacing, frames=frames))
    setup_s = time.perf_counter() - t0
    n0 = sim.state.n
    seconds, substeps, passes = [], [], []
    for _ in range(frames):
        t0 = time.perf_counter()
        stats = sim.advance_frame()
        seconds.append(round(time.perf_counter() - t0, 3))
        substeps.append(stats.substeps)
        passes.append(stats.extra.get("density_iterations"))
    steps = sum(substeps)
    iterations = sum(p * k for p, k in zip(passes, substeps) if p is not None)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    return {"scene": "dam_break_1m", "particles": n0, "spacing_m": round(spacing, 6), "frames": frames,
            "seconds_per_frame": round(statistics.median(seconds), 3), "frame_s": seconds,
            "substeps": substeps, "density_iterations_per_step": round(iterations / max(steps, 1), 3),
            "density_iterations": passes, "particle_steps_per_s": round(n0 * steps / sum(seconds)),
            "peak_bytes_per_particle": round(peak / max(n0, 1)), "peak_mb": round(peak / 2**20, 1),
            "rss_before_mb": round(rss_before, 1), "setup_s": round(setup_s, 3), "compile_s": round(compile_s, 3)}
