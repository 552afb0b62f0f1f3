"""Bake and render the water frames shown in docs/materials.md (docs/images/water_*.png).

    .venv-bpy-4.5/bin/python scripts/render_water_docs.py bake-dam   [--work out/water_docs]
    .venv-bpy-4.5/bin/python scripts/render_water_docs.py bake-quick [--work out/water_docs] [--frame-end 36] \
        [--spacing 0.05]
    .venv-bpy-4.5/bin/python scripts/render_water_docs.py render --blend out/water_docs/dam_break.blend \
        --frames-list 10 20 30 45 --prefix docs/images/water_dam_break_f --hide-particles

bake-dam copies sample_blends/dam_break.blend into the work folder and bakes and meshes it with the
farm command's code path (as scripts/demo.sh does). bake-quick starts from Blender's default scene
(the default cube), runs Quick Liquid (``sph.quick_fluid`` with the water preset) on the cube,
adds a floor plane that only renders (the Domain's closed borders are the floor the liquid
meets), saves the file and bakes and meshes it the same way. render renders the given frames with
Cycles on the CPU, small and denoised, to ``<prefix><NNN>.png``.
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


def _bake(cli, blend: Path, frames: str | None) -> int:
    t0 = time.perf_counter()
    extra = ["--frames", frames] if frames else []
    for command in (["bake", str(blend), *extra], ["mesh", str(blend), *extra]):
        t1 = time.perf_counter()
        code = cli.run(command)
        print(f"{command[0]} finished with exit code {code} in {time.perf_counter() - t1:.1f} s", flush=True)
        if code != 0:
            return code
    print(f"baked and meshed {blend.name} in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


def bake_dam(bpy, cli, work: Path, args) -> int:
    blend = work / "dam_break.blend"
    cache = work / "dam_break_cache"
    if cache.exists():
        shutil.rmtree(cache)
    shutil.copy(ROOT / "sample_blends" / blend.name, blend)
    return _bake(cli, blend, args.frames)


def bake_quick(bpy, cli, work: Path, args) -> int:
    bpy.ops.wm.read_homefile()  # Blender's default scene: cube, camera, light (the extension stays enabled)
    scene = bpy.context.scene
    cube = bpy.data.objects["Cube"]
    for ob in scene.objects:
        ob.select_set(False)
    cube.select_set(True)
    bpy.context.view_layer.objects.active = cube
    print("quick_fluid:", bpy.ops.sph.quick_fluid(preset="water"), flush=True)
    domain = next(ob for ob in scene.objects if ob.sph.role == 'DOMAIN')
    d = domain.sph.domain
    if args.spacing:
        d.particle_spacing = args.spacing
    d.frame_end = args.frame_end
    d.cache_directory = "//quick_liquid_cache"
    print(f"Domain {domain.name}: location {tuple(domain.location)}, size {tuple(domain.dimensions)}, "
          f"spacing {d.particle_spacing}, frames {d.frame_start}-{d.frame_end}", flush=True)
    # A floor that only renders, at the Domain's bottom, its size.
    lo_z = domain.location.z - domain.dimensions.z / 2
    bpy.ops.mesh.primitive_plane_add(size=1.0, location=(domain.location.x, domain.location.y, lo_z))
    floor = bpy.context.active_object
    floor.name = "Render Floor"
    floor.scale = (domain.dimensions.x, domain.dimensions.y, 1.0)
    mat = bpy.data.materials.new("Floor")
    mat.use_nodes = True
    mat.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (0.35, 0.35, 0.38, 1.0)
    floor.data.materials.append(mat)
    scene.frame_end = args.frame_end
    blend = work / "quick_liquid.blend"
    cache = work / "quick_liquid_cache"
    if cache.exists():
        shutil.rmtree(cache)
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    return _bake(cli, blend, args.frames)


def render(bpy, cli, work: Path, args) -> int:
    bpy.ops.wm.open_mainfile(filepath=str(Path(args.blend).resolve()))
    scene = bpy.context.scene
    scene.render.engine = 'CYCLES'
    scene.cycles.device = 'CPU'
    scene.cycles.samples = args.samples
    scene.cycles.use_denoising = True
    scene.render.resolution_x, scene.render.resolution_y = args.resolution
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = 'PNG'
    scene.render.image_settings.color_mode = 'RGB'
    scene.render.image_settings.compression = 100
    for ob in scene.objects:
        if ob.name.endswith(" Particles") and args.hide_particles:
            ob.hide_render = True
        print(f"  {ob.name}: {ob.type}, render {'off' if ob.hide_render else 'on'}", flush=True)
    if args.camera:
        cam = scene.camera
        cam.location = args.camera[:3]
        target = args.camera[3:]
        import mathutils
        direction = mathutils.Vector(target) - cam.location
        cam.rotation_euler = direction.to_track_quat('-Z', 'Y').to_euler()
    prefix = Path(args.prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for frame in args.frames_list:
        scene.frame_set(frame)
        png = Path(f"{prefix}{frame:03d}.png").resolve()
        scene.render.filepath = str(png)
        t0 = time.perf_counter()
        bpy.ops.render.render(write_still=True)
        print(f"rendered frame {frame} in {time.perf_counter() - t0:.1f} s: {png} "
              f"({png.stat().st_size // 1024} KiB)", flush=True)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("bake-dam", "bake-quick", "render"))
    parser.add_argument("--work", default=str(ROOT / "out" / "water_docs"))
    parser.add_argument("--frames", help="A-B to bake/mesh (default: the Domain's range)")
    parser.add_argument("--frame-end", type=int, default=36, help="bake-quick: last frame")
    parser.add_argument("--spacing", type=float, default=0.0, help="bake-quick: particle spacing (0: default)")
    parser.add_argument("--blend", help="render: the baked .blend")
    parser.add_argument("--frames-list", type=int, nargs="+", default=[24], help="render: frames")
    parser.add_argument("--prefix", default=str(ROOT / "docs" / "images" / "water_f"))
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--resolution", type=int, nargs=2, default=(640, 360))
    parser.add_argument("--hide-particles", action="store_true")
    parser.add_argument("--camera", type=float, nargs=6, help="render: camera location and target")
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    bpy, module = blender_session.start(work / ".blender_user")
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")
    return {"bake-dam": bake_dam, "bake-quick": bake_quick, "render": render}[args.action](bpy, cli, work, args)


if __name__ == "__main__":
    sys.exit(main())
