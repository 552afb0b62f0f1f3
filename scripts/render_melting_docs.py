"""Render the melting pictures of docs/materials.md: a chocolate Suzanne melting on a hot plate at three
frames, and lava poured on a cold slab glowing where it is hot.

    .venv-bpy-4.5/bin/python scripts/render_melting_docs.py [--work out/melting] [--only chocolate lava]

Both are time-lapses: conduction through 10 cm of chocolate takes hours, so the materials' Thermal
Conductivity is raised (the chocolates' 1000x, 200 W/(m K), the lava's 200x, with the air's heat transfer
raised to match): the 2 s shown stand for what a real plate does in about half an hour. What
conducts and melts is the product's heat and phase as the tests check them (tests/core/test_heat.py,
test_phase.py); only the time scale is the artist's.

* chocolate: Suzanne (16 cm) of the elastic model's ``dark_chocolate`` (Young's modulus lowered to 0.2 MPa) at
  20 °C on a plate held at 60 °C,
  melting past 34 °C (softening from 28 °C) into ``melted_chocolate`` of the sph model (a Fluid whose
  Enabled box is off carries that material: it emits nothing). The Domain's surface renders both phases
  with their looks; Suzanne's own mesh is hidden (its vertices would follow the particles into the puddle).
* lava: the sph model's ``lava`` at 1150 °C poured from an Inflow onto a slab held at 20 °C, cooling into
  the slab and the air; its look glows by the surface's ``temperature`` attribute.

Each scene is built with ``make_samples``' helpers, baked and meshed with the farm command's code path,
and rendered with Cycles by ``render_sample_docs.render`` to ``docs/images/melting_<name>_f<frame>.png``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import blender_session
import make_samples
import render_sample_docs

SPACING = 0.008  # m, the chocolate's (the lava's 1 cm)
FRAMES = {"chocolate": (1, 24, 48), "lava": (20, 40, 60)}


def _fluid_material(bpy, name: str, model: str, preset: str, **params):
    """A Fluid whose Enabled box is off, carrying a material for another to melt or solidify into."""
    bpy.ops.mesh.primitive_cube_add(size=0.02, location=(0.0, 0.0, -1.0))
    ob = bpy.context.object
    ob.name = name
    ob.sph.role = 'FLUID'
    ob.sph.enabled = False
    ob.hide_render = ob.hide_viewport = True
    make_samples.material_preset(ob, preset, model)
    for key, value in params.items():
        setattr(getattr(ob.sph.material, model), key, value)
    return ob


def chocolate(bpy, work: Path) -> Path:
    scene = make_samples.new_scene(bpy, FRAMES["chocolate"][-1])
    plate = make_samples.box(bpy, "Hot Plate", (0.4, 0.4, 0.03), (0.0, 0.0, -0.015))
    make_samples.collider(plate, friction=0.3)
    plate.sph.collider.heat_contact, plate.sph.collider.temperature = True, 60.0
    make_samples.material(bpy, plate, "Steel", (0.55, 0.55, 0.58, 1.0))
    plate.data.materials[0].node_tree.nodes["Principled BSDF"].inputs["Metallic"].default_value = 1.0
    bpy.ops.mesh.primitive_monkey_add(size=0.16, location=(0.0, 0.0, 0.082), rotation=(0.0, 0.0, 0.35))
    monkey = bpy.context.object
    monkey.name = "Chocolate Suzanne"
    bpy.ops.object.transform_apply(location=False, rotation=True, scale=True)
    # E lowered from the preset's 1 MPa to 0.2 MPa: at 1 MPa Suzanne took 250-700 iterations a solve (a cube 30-45).
    make_samples.solid(monkey, "dark_chocolate", thermal_conductivity=200.0, youngs_modulus=2e5,
                       melts_into="Melted Chocolate")
    monkey.sph.fluid.temperature = 20.0
    monkey.hide_render = True
    _fluid_material(bpy, "Melted Chocolate", "sph", "melted_chocolate", thermal_conductivity=200.0)
    dom = make_samples.domain(bpy, "Domain", (-0.2, -0.2, 0.0), (0.2, 0.2, 0.2), SPACING, FRAMES["chocolate"][-1],
                              "chocolate")
    dom.sph.domain.max_substeps = 1000
    dom.sph.domain.surface_enabled = True
    make_samples.camera_and_light(bpy, scene, (0.0, -0.5, 0.3), (0.0, 0.0, 0.04))
    return _save(bpy, work, "chocolate")


def lava(bpy, work: Path) -> Path:
    scene = make_samples.new_scene(bpy, FRAMES["lava"][-1])
    scene.world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.15  # dusk: the glow reads
    slab = make_samples.box(bpy, "Cold Slab", (0.7, 0.6, 0.03), (0.0, 0.0, -0.015))
    make_samples.collider(slab, friction=0.5)
    slab.sph.collider.heat_contact, slab.sph.collider.temperature = True, 20.0
    make_samples.material(bpy, slab, "Rock", (0.12, 0.11, 0.1, 1.0))
    bpy.ops.mesh.primitive_circle_add(radius=0.02, location=(-0.1, 0.0, 0.15), rotation=(0.0, -0.5, 0.0))
    spout = bpy.context.object
    spout.name = "Lava"
    spout.sph.role = 'INFLOW'
    make_samples.material_preset(spout, "lava", "sph")
    spout.sph.material.sph.thermal_conductivity = 300.0
    inflow = spout.sph.inflow
    inflow.speed, inflow.radius, inflow.frame_start, inflow.frame_end = 0.6, 0.02, 1, 30
    inflow.temperature = 1150.0
    spout.hide_render = True
    dom = make_samples.domain(bpy, "Domain", (-0.35, -0.3, 0.0), (0.35, 0.3, 0.3), 0.01, FRAMES["lava"][-1], "lava")
    dom.sph.domain.max_substeps = 1000
    dom.sph.domain.air_heat_transfer = 3000.0
    make_samples.camera_and_light(bpy, scene, (0.05, -0.65, 0.35), (0.0, 0.0, 0.02))
    bpy.data.objects["Sun"].data.energy = 0.6
    return _save(bpy, work, "lava")


def _save(bpy, work: Path, name: str) -> Path:
    return render_sample_docs.save_fresh(bpy, work / f"melting_{name}.blend", work / f"{name}_cache")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    render_sample_docs.render_arguments(parser, "melting", 24, (480, 320))
    parser.add_argument("--only", nargs="+", choices=sorted(FRAMES), default=sorted(FRAMES))
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    bpy, module = blender_session.start(work / ".blender_user")
    cli = importlib.import_module(f"{module}.sph_addon.blender.cli_command")
    for name in args.only:
        blend = {"chocolate": chocolate, "lava": lava}[name](bpy, work)
        frames = FRAMES[name]
        code = render_sample_docs.bake_and_mesh(cli, name, blend, frames[-1], mesh=False)
        if code == 0:
            code = render_sample_docs.mesh_frames(bpy, cli, name, blend, frames)
        if code != 0:
            return code
        for frame in frames:
            out = Path(args.out).resolve() / f"melting_{name}_f{frame:03d}.png"
            render_sample_docs.render(bpy, blend, frame, out, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
