"""Bake each sample for a few dozen frames and render one small Cycles picture of it for docs/blender.md.

    .venv-bpy-4.5/bin/python scripts/render_sample_docs.py [--work out/sample_docs] [--only honey_stool]

Each sample is copied to the work folder, its Domain's material is removed (the committed samples
still carry a plain colour there, from before the presets had looks; ``make_samples.py`` no longer
sets one), and it is baked and meshed with the farm command's code path up to the frame shown, then
rendered on the CPU, small and denoised, to ``docs/images/sample_<name>.png``. Renders are kept
small on purpose: a shared two-core machine.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import time
from pathlib import Path

import blender_session

ROOT = blender_session.ROOT
# The frame shown: where each sample's motion is under way (honey: the rope laying a ring on its stack).
FRAMES = {"dam_break": 24, "honey_stool": 24, "mud_suzanne": 30, "jelly_steps": 16}


def prepare(bpy, name: str, work: Path) -> Path:
    blend = work / f"{name}.blend"
    shutil.copy(ROOT / "sample_blends" / blend.name, blend)
    cache = work / f"{name}_cache"
    if cache.exists():
        shutil.rmtree(cache)
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    for ob in bpy.context.scene.objects:
        if ob.sph.role == 'DOMAIN':
            ob.data.materials.clear()
    bpy.ops.wm.save_mainfile()
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


def bake_and_mesh(cli, name: str, blend: Path, frame: int) -> int:
    """Bake ``blend`` up to ``frame`` and mesh that frame with the farm command's code path; its exit code."""
    for command in (["bake", str(blend), "--frames", f"1-{frame}"], ["mesh", str(blend), "--frames", f"{frame}"]):
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    render_arguments(parser, "sample_docs", 24, (480, 270))
    parser.add_argument("--only", nargs="+", choices=sorted(FRAMES), default=sorted(FRAMES))
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    bpy, module = blender_session.start(work / ".blender_user")
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")
    for name in args.only:
        frame = FRAMES[name]
        blend = prepare(bpy, name, work)
        code = bake_and_mesh(cli, name, blend, frame)
        if code != 0:
            return code
        render(bpy, blend, frame, Path(args.out).resolve() / f"sample_{name}.png", args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
