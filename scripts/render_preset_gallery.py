"""Render the preset gallery of docs/materials.md: a 10 cm cube of each preset ~1 s after it was dropped.

    .venv-bpy-4.5/bin/python scripts/render_preset_gallery.py [--work out/preset_gallery] [--only honey jelly]

For every preset of the viscoelastic, elastic and sph models (``core/models/presets.py``) a scene is
built with the sample builders of ``make_samples.py``: a 10 cm cube of the preset, its bottom 5 cm
above the floor, at 1 cm spacing (~1,000 particles, so each bake takes a minute or so), in a Domain
whose closed borders are the floor, with a floor plane that only renders. It is baked (and, for a
liquid, meshed) with the farm command's code path (as ``render_sample_docs.py`` does) and rendered
with Cycles by ``render_sample_docs.render``, small and denoised, to
``docs/images/preset_<name>.png``. A viscoelastic or sph preset is a Fluid and renders as its meshed
surface with the preset's own look (``blender/liquid_materials.py``, through the replay): no material
is set here. An elastic preset is a Solid: the cube's own mesh (5 loops across each face, bevelled
edges, a Subdivision Surface after the replay's SPH Deform) deformed by its particles, with a
material of this script's (``ELASTIC_LOOKS``; the Domain's Surface is off, as Quick Jelly leaves it).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import blender_session
import make_samples
import render_sample_docs

ROOT = blender_session.ROOT
MODELS = ("viscoelastic", "elastic", "sph")
SPACING = 0.01  # m: ~1,000 particles in the 10 cm cube
SIZE = 0.1  # m: the cube's edge
DROP = 0.05  # m: from the floor to the cube's bottom
FRAME = 25  # 1 s after release at Blender's default 24 fps (the bake starts at frame 1)


# The elastic presets' materials (Principled BSDF; the replay has no look for a Solid: it renders
# with its own material): what each substance does to light.
ELASTIC_LOOKS = {
    # Raspberry jelly, as sample_blends/jelly_steps.blend: clear glossy skin, deep red body.
    "jelly": dict(base=(1.0, 0.55, 0.6), roughness=0.04, transmission=1.0, absorb=(0.9, 0.03, 0.08)),
    # A green gummy candy: translucent, a little hazy (rougher than jelly).
    "gummy": dict(base=(0.6, 1.0, 0.5), roughness=0.2, transmission=1.0, absorb=(0.15, 0.8, 0.05)),
    # Soft silicone: milky, translucent by subsurface scattering, satin.
    "silicone": dict(base=(0.85, 0.9, 0.95), roughness=0.35, subsurface=1.0),
    # Soft rubber: opaque charcoal with a satin sheen (the old viscoelastic rubber's look).
    "rubber": dict(base=(0.04, 0.04, 0.045), roughness=0.45),
    # Flesh: pink, skin-like subsurface scattering reddened inside.
    "flesh": dict(base=(0.85, 0.5, 0.45), roughness=0.5, subsurface=1.0),
    # The melting solids (their looks in ``liquid_materials``): a tempered bar's satin brown, butter's pale
    # yellow, wax's milky white, ice cream's cream, cheese's yellow, basalt's near-black rock.
    "dark_chocolate": dict(base=(0.08, 0.03, 0.013), roughness=0.3),
    "butter": dict(base=(0.95, 0.8, 0.35), roughness=0.45, subsurface=0.4),
    "candle_wax": dict(base=(0.93, 0.9, 0.85), roughness=0.4, subsurface=1.0),
    "ice_cream": dict(base=(0.98, 0.9, 0.78), roughness=0.7, subsurface=0.6),
    "cheese": dict(base=(0.95, 0.78, 0.3), roughness=0.5, subsurface=0.5),
    "basalt": dict(base=(0.03, 0.028, 0.026), roughness=0.85),
}


def presets(module: str) -> dict[str, str]:
    """{preset: model} of the models' presets, in the order ``presets.py`` declares them."""
    solvers = importlib.import_module(f"{module}.sph_addon.core.models")
    return {name: model for model in MODELS for name in solvers.SOLVERS[model].presets}


def elastic_material(bpy, ob, preset: str) -> None:
    """Give ``ob`` the material of ``ELASTIC_LOOKS[preset]``."""
    lk = ELASTIC_LOOKS.get(preset, dict(base=(0.3, 0.58, 0.95), roughness=0.15))
    mat = bpy.data.materials.new(preset.title())
    mat.diffuse_color = (*lk["base"], 1.0)
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    bsdf = nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*lk["base"], 1.0)
    bsdf.inputs["Roughness"].default_value = lk["roughness"]
    bsdf.inputs["Transmission Weight"].default_value = lk.get("transmission", 0.0)
    bsdf.inputs["IOR"].default_value = 1.4
    if lk.get("subsurface"):
        bsdf.inputs["Subsurface Weight"].default_value = lk["subsurface"]
        bsdf.inputs["Subsurface Radius"].default_value = (1.0, 0.35, 0.25)
        bsdf.inputs["Subsurface Scale"].default_value = 0.01
    if "absorb" in lk:  # coloured inside: thick parts are deeper than thin ones
        absorb = nodes.new("ShaderNodeVolumeAbsorption")
        absorb.inputs["Color"].default_value = (*lk["absorb"], 1.0)
        absorb.inputs["Density"].default_value = 20.0
        mat.node_tree.links.new(absorb.outputs[0], nodes["Material Output"].inputs["Volume"])
    ob.data.materials.append(mat)


def build(bpy, preset: str, model: str, work: Path) -> Path:
    """Save ``<work>/preset_<preset>.blend``: the cube, its Domain, a render floor, camera and light."""
    scene = make_samples.new_scene(bpy, FRAME)
    scene.render.use_motion_blur = False  # the gallery compares shapes: keep their edges sharp
    centre = (0.0, 0.0, DROP + SIZE / 2)
    half = 0.25  # the Domain reaches past where water spreads in 1 s
    dom = make_samples.domain(bpy, "Domain", (-half, -half, 0.0), (half, half, 0.3), SPACING, FRAME,
                              f"preset_{preset}")
    # The cap bounds the automatic choice only; at 1 cm the sph presets' stable steps ask for more
    # substeps than the default 64 (classic_water 72), and the bake would be refused.
    dom.sph.domain.max_substeps = 1000
    if model == "elastic":
        cube = make_samples.rounded_box(bpy, preset.title(), (SIZE,) * 3, centre, cuts=5, bevel=0.008)
        make_samples.solid(cube, preset)
        elastic_material(bpy, cube, preset)
        make_samples.smooth_after_deform(bpy, cube)
        dom.sph.domain.surface_enabled = False  # the Solid renders itself
    else:
        cube = make_samples.box(bpy, preset.title(), (SIZE,) * 3, centre)
        make_samples.fluid(bpy, cube, "water")  # make_samples.fluid takes a viscoelastic preset:
        make_samples.material_preset(cube, preset, model)  # then the preset's own model (sph too)
    bpy.ops.mesh.primitive_plane_add(size=2 * half, location=(0.0, 0.0, 0.0))
    floor = bpy.context.object
    floor.name = "Render Floor"
    make_samples.material(bpy, floor, "Floor", (0.35, 0.35, 0.38, 1.0))
    make_samples.camera_and_light(bpy, scene, (0.0, -0.42, 0.24), (0.0, 0.0, 0.04))
    return render_sample_docs.save_fresh(bpy, work / f"preset_{preset}.blend", work / f"preset_{preset}_cache")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    render_sample_docs.render_arguments(parser, "preset_gallery", 16, (320, 240))
    parser.add_argument("--only", nargs="+", help="these presets only (default: all)")
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    bpy, module = blender_session.start(work / ".blender_user")
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")
    names = presets(module)
    unknown = set(args.only or ()) - set(names)
    if unknown:
        parser.error(f"unknown presets {sorted(unknown)}; the models have {list(names)}")
    for name in args.only or names:
        blend = build(bpy, name, names[name], work)
        code = render_sample_docs.bake_and_mesh(cli, name, blend, FRAME, mesh=names[name] != "elastic")
        if code != 0:
            return code
        render_sample_docs.render(bpy, blend, FRAME, Path(args.out).resolve() / f"preset_{name}.png", args)
        plyio = importlib.import_module(f"{module}.sph_addon.core.cache.plyio")
        print(f"{name}: {measure(plyio, work / f'preset_{name}_cache' / 'particles')}")
    return 0


def measure(plyio, particles: Path) -> str:
    """Width and height of the preset at FRAME, as docs/materials.md's gallery quotes them: twice the
    99th percentile of the particles' horizontal distance from their median, and the 99th percentile
    of their height above the lowest particle plus half a spacing (the cube at the start: 12.7, 9.5 cm)."""
    import numpy as np

    x = np.asarray(plyio.read_ply(particles / f"particles_{FRAME:04d}.ply").positions())
    radius = np.linalg.norm(x[:, :2] - np.median(x[:, :2], axis=0), axis=1)
    height = np.percentile(x[:, 2], 99) - x[:, 2].min() + SPACING / 2
    return f"width {200 * np.percentile(radius, 99):.1f} cm, height {100 * height:.1f} cm"


if __name__ == "__main__":
    sys.exit(main())
