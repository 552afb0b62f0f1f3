"""The main job inside Blender: bake a sample .blend headless and render a frame with Cycles.

    .venv-bpy-5.2/bin/python scripts/demo_blender.py [--sample dam_break] [--frame 24] [--out out/demo]

Copies ``sample_blends/<sample>.blend`` into the output folder, bakes it and
meshes its surface with the farm command's code path (what ``blender --command
sph bake FILE.blend`` runs), then renders one frame with Cycles on the CPU to
``<out>/<sample>_<frame>.png``. The Blender user directory (with the numba
cache) is kept in ``<out>/.blender_user`` so a second run skips compilation.
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="dam_break")
    parser.add_argument("--frame", type=int, default=24)
    parser.add_argument("--out", default=str(ROOT / "out" / "demo"))
    parser.add_argument("--samples", type=int, default=16, help="Cycles samples")
    parser.add_argument("--resolution", type=int, nargs=2, default=(640, 360))
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    bpy, module = blender_session.start(out / ".blender_user")
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")

    blend = out / f"{args.sample}.blend"
    png = out / f"{args.sample}_{args.frame:04d}.png"
    # This script owns its output folder: each run starts from the pristine sample and a fresh cache. The
    # pictures of earlier runs stay, the one this run replaces under the time it was made.
    for p in out.iterdir():
        if p == png:
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(p.stat().st_mtime))
            p.rename(p.with_name(f"{p.stem}.{stamp}.png"))
        elif p.name != ".blender_user" and p.suffix != ".png":
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    shutil.copy(ROOT / "sample_blends" / blend.name, blend)

    t0 = time.perf_counter()
    for command in (["bake", str(blend)], ["mesh", str(blend)]):
        code = cli.run(command)
        if code != 0:
            print(f"{' '.join(command[:1])} failed with exit code {code}", file=sys.stderr)
            return code
    print(f"baked and meshed in {time.perf_counter() - t0:.1f} s (Blender {bpy.app.version_string})")

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    scene.frame_set(args.frame)
    scene.render.engine = 'CYCLES'
    scene.cycles.device = 'CPU'
    scene.cycles.samples = args.samples
    scene.render.resolution_x, scene.render.resolution_y = args.resolution
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = 'PNG'
    scene.render.filepath = str(png)
    t0 = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    print(f"rendered frame {args.frame} in {time.perf_counter() - t0:.1f} s: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
