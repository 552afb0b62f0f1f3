"""Bake each sample, check that its camera frames the liquid, and render it for docs/blender.md.

    .venv-bpy-4.5/bin/python scripts/render_sample_docs.py [--work out/sample_docs] [--only honey_stool]
    .venv-bpy-4.5/bin/python scripts/render_sample_docs.py --check-framing [--margin 0.03] [--rebake]

Each sample is copied to the work folder and baked over its Domain's whole frame range with the
farm command's code path (``blender --command sph bake``); the cache is kept there and reused by
later runs (``--rebake`` bakes again: needed after a sample's physics changed, not after a camera
did). ``--check-framing`` then projects the baked particles of the first (holding any: an Inflow's
first frame has none), middle and last frames through the sample's camera
(``world_to_camera_view``) and reports, per frame, the fraction of particles inside the frame less
``--margin`` on every side and where the corners of their bounding box land; it exits 1 when a
bounding box leaves that window. Without it, the frames in ``FRAMES``
are meshed and rendered on the CPU, small and denoised, to ``docs/images/sample_<name>_fNNN.png``.
Renders are kept small on purpose: a shared two-core machine. Committed samples carry no Domain
material, so each renders with its preset's look (``liquid_materials``).
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import blender_session

ROOT = blender_session.ROOT
# The frames shown: the start of the motion, the middle of the action and the end of the range
# (honey: the thread reaching the seat, a ring laid on its stack, the pour's last coils; rubber
# Suzanne: falling, the splash, floating).
FRAMES = {"dam_break": (1, 16, 60), "honey_stool": (12, 36, 72), "mud_suzanne": (1, 30, 60),
          "jelly_steps": (1, 9, 60), "rubber_suzanne": (3, 8, 36), "crate_flood": (1, 16, 60),
          "melt_and_float": (1, 30, 60)}


def prepare(bpy, name: str, work: Path, rebake: bool = False, source: Path = ROOT / "sample_blends") -> Path:
    """Copy the sample from ``source`` into ``work`` (its cache there is kept unless ``rebake``); the copy's path."""
    blend = work / f"{name}.blend"
    shutil.copy(source / blend.name, blend)
    cache = work / f"{name}_cache"
    if rebake and cache.exists():
        shutil.rmtree(cache)
    return blend


def _domain(bpy):
    return next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')


def bake_range(bpy, cli, name: str, blend: Path) -> int:
    """Bake the Domain's whole frame range unless the cache beside ``blend`` holds it; the exit code."""
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    d = _domain(bpy).sph.domain
    cache = blend.parent / f"{name}_cache" / "particles"
    if all((cache / f"particles_{k:04d}.ply").exists() for k in (d.frame_start, d.frame_end)):
        return 0
    t0 = time.perf_counter()
    code = cli.run(["bake", str(blend), "--frames", f"{d.frame_start}-{d.frame_end}", "--replace"])
    print(f"{name}: bake exit {code} in {time.perf_counter() - t0:.1f} s", flush=True)
    return code


@dataclass(frozen=True)
class Framing:
    """Where one frame's particles land in the camera view (0-1 across the frame, as world_to_camera_view)."""

    frame: int
    count: int
    inside: float  # fraction of the particles inside the frame less the margin
    box: tuple[float, float, float, float]  # x min, x max, y min, y max of the bounding box's 8 corners
    ok: bool  # every corner inside the frame less the margin, in front of the camera


def framing(bpy, plyio, blend: Path, frames, margin: float) -> list[Framing]:
    """Project the particles baked beside ``blend`` at ``frames`` through the file's camera.

    The particle files are in metres; the replay object's transform (1 / Unit Scale) takes them to
    the scene. A frame with no particles reports count 0 and passes. ``plyio`` is the add-on's
    ``core.plyio`` module.
    """
    import numpy as np
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    domain = _domain(bpy)
    replay = next((ob for ob in scene.objects
                   if ob.get("sph_domain") == domain.name and ob.get("sph_replay") == "particles"), None)
    to_world = np.array(replay.matrix_world) if replay is not None else np.eye(4)
    cache = blend.parent / f"{blend.stem}_cache" / "particles"
    lo, hi = margin, 1.0 - margin
    found = []
    for k in frames:
        scene.frame_set(k)  # an animated camera would move
        x = plyio.read_ply(cache / f"particles_{k:04d}.ply").positions()
        if len(x) == 0:
            found.append(Framing(k, 0, 1.0, (0.5, 0.5, 0.5, 0.5), True))
            continue
        x = x @ to_world[:3, :3].T + to_world[:3, 3]
        view = np.array([tuple(world_to_camera_view(scene, scene.camera, Vector(p))) for p in x])
        inside = ((view[:, 0] >= lo) & (view[:, 0] <= hi) & (view[:, 1] >= lo) & (view[:, 1] <= hi)
                  & (view[:, 2] > 0)).mean()
        a, b = x.min(axis=0), x.max(axis=0)
        corners = np.array([tuple(world_to_camera_view(scene, scene.camera, Vector((i, j, m))))
                            for i in (a[0], b[0]) for j in (a[1], b[1]) for m in (a[2], b[2])])
        box = (corners[:, 0].min(), corners[:, 0].max(), corners[:, 1].min(), corners[:, 1].max())
        ok = bool(box[0] >= lo and box[1] <= hi and box[2] >= lo and box[3] <= hi and (corners[:, 2] > 0).all())
        found.append(Framing(k, len(x), float(inside), tuple(float(v) for v in box), ok))
    return found


def check_framing(bpy, module: str, names, work: Path, margin: float, rebake: bool, source: Path) -> int:
    """Bake each sample's range and check its first, middle and last frames; 0 when all are framed."""
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")
    plyio = importlib.import_module(f"{module}.sph_addon.core.cache.plyio")
    failed = []
    for name in names:
        blend = prepare(bpy, name, work, rebake, source)
        code = bake_range(bpy, cli, name, blend)
        if code != 0:
            return code
        d = _domain(bpy).sph.domain
        # The first frame holding particles (an Inflow's first frame has none yet), the middle, the last.
        cache = blend.parent / f"{name}_cache" / "particles"
        first = next((k for k in range(d.frame_start, d.frame_end + 1)
                      if len(plyio.read_ply(cache / f"particles_{k:04d}.ply").vertices)), d.frame_start)
        frames = (first, (d.frame_start + d.frame_end) // 2, d.frame_end)
        for f in framing(bpy, plyio, blend, frames, margin):
            verdict = "ok" if f.ok else "OUT OF FRAME"
            print(f"{name} frame {f.frame}: {f.count} particles, {100 * f.inside:.1f} % inside the frame less "
                  f"{margin:g}; bounding box x {f.box[0]:.3f}-{f.box[1]:.3f}, y {f.box[2]:.3f}-{f.box[3]:.3f}: "
                  f"{verdict}", flush=True)
            if not f.ok:
                failed.append(f"{name} frame {f.frame}")
    print("framing: all in frame" if not failed else f"framing: out of frame: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


def save_fresh(bpy, blend: Path, cache: Path) -> Path:
    """Save the open scene as ``blend`` with no cache left at ``cache`` from an earlier run; ``blend``."""
    if cache.exists():
        shutil.rmtree(cache)
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    return blend


def render(bpy, blend: Path, frame: int, out: Path, args) -> None:
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    scene.render.engine = 'CYCLES'
    scene.cycles.device = 'CPU'
    scene.cycles.samples = args.samples
    scene.cycles.use_denoising = True
    scene.render.threads_mode = 'FIXED'
    scene.render.threads = 2
    scene.render.resolution_x, scene.render.resolution_y = args.resolution
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = 'PNG'
    scene.render.image_settings.color_mode = 'RGB'
    scene.render.image_settings.compression = 100
    scene.frame_set(frame)
    scene.render.filepath = str(out)
    t0 = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    print(f"rendered {blend.stem} frame {frame} in {time.perf_counter() - t0:.1f} s: {out}", flush=True)


def bake_and_mesh(cli, name: str, blend: Path, frame: int, mesh: bool = True) -> int:
    """Bake ``blend`` up to ``frame`` and (``mesh``) mesh that frame with the farm command's code path; its exit
    code."""
    commands = [["bake", str(blend), "--frames", f"1-{frame}"], ["mesh", str(blend), "--frames", f"{frame}"]]
    for command in commands[:1 + mesh]:
        t0 = time.perf_counter()
        code = cli.run(command)
        print(f"{name}: {command[0]} exit {code} in {time.perf_counter() - t0:.1f} s", flush=True)
        if code != 0:
            return code
    return 0


def render_arguments(parser: argparse.ArgumentParser, work: str, samples: int, resolution: tuple[int, int]) -> None:
    """The options both doc renderers take: work folder, Cycles samples, resolution, output folder."""
    parser.add_argument("--work", default=str(ROOT / "out" / work))
    parser.add_argument("--samples", type=int, default=samples)
    parser.add_argument("--resolution", type=int, nargs=2, default=resolution)
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))


def mesh_frames(bpy, cli, name: str, blend: Path, frames) -> int:
    """Mesh ``frames`` of the baked cache and save ``blend`` with its replay objects; the exit code.

    The copy in the work folder is fresh from sample_blends/ (its cache kept): each ``mesh`` run
    gives it the replay objects (``baking.finish``) but, like a farm's meshing task, never saves.
    A Domain whose Surface is off (Solids only: they render themselves) is not meshed: it gets its
    replay objects and its Solids' SPH Deform as a bake's end gives them (``baking.finish``).
    """
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    domain = _domain(bpy)
    if not domain.sph.domain.surface_enabled:
        cli.baking.finish(bpy.context.scene, SimpleNamespace(domain_name=domain.name))
        bpy.ops.wm.save_mainfile()
        return 0
    for frame in frames:
        t0 = time.perf_counter()
        code = cli.run(["mesh", str(blend), "--frames", f"{frame}-{frame}"])
        print(f"{name}: mesh frame {frame} exit {code} in {time.perf_counter() - t0:.1f} s", flush=True)
        if code != 0:
            return code
    bpy.ops.wm.save_mainfile()
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    render_arguments(parser, "sample_docs", 24, (480, 270))
    parser.add_argument("--only", nargs="+", choices=sorted(FRAMES), default=sorted(FRAMES))
    parser.add_argument("--check-framing", action="store_true",
                        help="check that each camera frames the baked particles; render nothing")
    parser.add_argument("--margin", type=float, default=0.03,
                        help="border left free on every side, as a fraction of the frame (default 0.03)")
    parser.add_argument("--rebake", action="store_true", help="bake again even if the work folder holds a cache")
    parser.add_argument("--samples-dir", default=str(ROOT / "sample_blends"),
                        help="where the sample .blend files are (default sample_blends/: candidates elsewhere)")
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    bpy, module = blender_session.start(work / ".blender_user")
    if args.check_framing:
        return check_framing(bpy, module, args.only, work, args.margin, args.rebake, Path(args.samples_dir).resolve())
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")
    for name in args.only:
        blend = prepare(bpy, name, work, args.rebake, Path(args.samples_dir).resolve())
        code = bake_range(bpy, cli, name, blend) or mesh_frames(bpy, cli, name, blend, FRAMES[name])
        if code != 0:
            return code
        for frame in FRAMES[name]:
            render(bpy, blend, frame, Path(args.out).resolve() / f"sample_{name}_f{frame:03d}.png", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
