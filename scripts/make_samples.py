"""Build the sample .blend files in ``sample_blends/`` with the PyPI ``bpy`` module.

    .venv-bpy-4.2/bin/python scripts/make_samples.py [--out sample_blends] [--only dam_break]

Run it with the oldest supported Blender (4.2) so the files open in every
supported version, or with another version's venv to rebuild them for it. Each
file holds a Domain with its settings, the fluid, the colliders, a camera and
a light, and bakes and renders with no setup: Bake in the Physics tab, or
``blender --command sph bake FILE.blend`` on a farm, then render.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDON = "bl_ext.sphdev.sph_addon"  # the module blender_session.start enables the checkout as


def enable_extension():
    """Enable the checkout in a throwaway user directory."""
    import blender_session

    global ADDON
    bpy, ADDON = blender_session.start(tempfile.mkdtemp(prefix="sph_samples_user_"))
    # No .blend1 backups beside the samples (the throwaway preferences are never saved).
    bpy.context.preferences.filepaths.save_version = 0
    return bpy


# ---- scene helpers ------------------------------------------------------------------------------

def new_scene(bpy, frame_end: int):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frame_end
    scene.render.engine = 'CYCLES'
    scene.cycles.device = 'CPU'
    scene.cycles.samples = 32
    scene.render.resolution_x, scene.render.resolution_y = 960, 540
    scene.render.use_motion_blur = True
    world = bpy.data.worlds.new("World")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.6, 0.65, 0.7, 1.0)
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.6
    scene.world = world
    return scene


def box(bpy, name, size, location):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=location)
    ob = bpy.context.object
    ob.name = ob.data.name = name
    ob.scale = size
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    return ob


def material(bpy, ob, name, rgba):
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    mat.diffuse_color = rgba
    mat.use_nodes = True
    mat.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = rgba
    ob.data.materials.append(mat)


def domain(bpy, name, lo, hi, spacing, frame_end, cache, **settings):
    """A Domain box with no material: the replay renders each preset with its own look
    (``liquid_materials``); a material given to the Domain would replace them."""
    ob = box(bpy, name, [b - a for a, b in zip(lo, hi)], [(a + b) / 2 for a, b in zip(lo, hi)])
    ob.display_type = 'WIRE'
    ob.hide_render = True
    ob.sph.role = 'DOMAIN'
    d = ob.sph.domain
    d.particle_spacing = spacing
    d.frame_start, d.frame_end = 1, frame_end
    d.cache_directory = f"//{cache}_cache"
    for key, value in settings.items():
        setattr(d, key, value)
    return ob


def material_preset(ob, preset, model="viscoelastic"):
    """Choose ``model`` and its ``preset`` (each model has its own settings group and presets)."""
    m = ob.sph.material
    m.model = model
    getattr(m, model).preset = preset


def fluid(bpy, ob, preset, velocity=(0.0, 0.0, 0.0)):
    ob.sph.role = 'FLUID'
    material_preset(ob, preset)
    ob.sph.material.initial_velocity = velocity
    ob.display_type = 'WIRE'
    ob.hide_render = True
    return ob


def collider(ob, friction=0.2, mode="solid", motion='STATIC'):
    ob.sph.role = 'COLLIDER'
    c = ob.sph.collider
    c.friction, c.mode, c.motion = friction, mode, motion
    return ob


def camera_and_light(bpy, scene, location, target):
    cam_data = bpy.data.cameras.new("Camera")
    cam = bpy.data.objects.new("Camera", cam_data)
    scene.collection.objects.link(cam)
    cam.location = location
    direction = [t - c for t, c in zip(target, location)]
    from mathutils import Vector

    cam.rotation_euler = Vector(direction).to_track_quat('-Z', 'Y').to_euler()
    scene.camera = cam
    sun_data = bpy.data.lights.new("Sun", 'SUN')
    sun_data.energy = 3.0
    sun = bpy.data.objects.new("Sun", sun_data)
    sun.rotation_euler = (math.radians(40), math.radians(10), math.radians(30))
    scene.collection.objects.link(sun)


# ---- the samples --------------------------------------------------------------------------------

def dam_break(bpy):
    """A water column collapsing in a closed tank (the classic SPH validation)."""
    scene = new_scene(bpy, 60)
    water = box(bpy, "Water", (0.5, 0.6, 0.8), (-0.65, 0.0, 0.4))
    fluid(bpy, water, "water")
    floor = box(bpy, "Tank Floor", (1.9, 0.7, 0.05), (0.0, 0.0, -0.025))
    material(bpy, floor, "Floor", (0.3, 0.3, 0.32, 1.0))
    domain(bpy, "Domain", (-0.9, -0.3, 0.0), (0.9, 0.3, 1.0), 0.03, 60, "dam_break")
    camera_and_light(bpy, scene, (0.0, -3.3, 1.4), (0.0, 0.0, 0.3))
    return scene


def honey_stool(bpy):
    """Honey poured onto a stool from a spout: a thin thread that coils on the seat (rope coiling).

    The regime of ``scripts/scenes/honey_coil.json``: a 1.25 cm thread (5 particles across at
    2.5 mm spacing) leaves a 5 mm-radius spout at 0.4 m/s, 12 cm above the seat, and hangs from a
    2 cm nozzle. Its Reynolds number U d / nu is ~0.2 (honey, nu = 0.03 m^2/s) and the fall is ~10
    thread diameters: thinner threads, faster ones or shorter falls fold or pile instead. The Domain
    holds only the seat's top and the stream, so no particle is spent elsewhere (~2,000 a second).
    """
    scene = new_scene(bpy, 72)  # 3 s at Blender's default 24 fps
    seat = box(bpy, "Stool Seat", (0.4, 0.4, 0.05), (0.0, 0.0, 0.45))
    legs = [box(bpy, f"Leg {k}", (0.04, 0.04, 0.45), (x, y, 0.225))
            for k, (x, y) in enumerate(((-0.16, -0.16), (0.16, -0.16), (-0.16, 0.16), (0.16, 0.16)))]
    bpy.ops.object.select_all(action='DESELECT')
    for ob in legs:
        ob.select_set(True)
    bpy.context.view_layer.objects.active = legs[0]
    bpy.ops.object.join()
    legs[0].name = "Stool Legs"
    material(bpy, seat, "Wood", (0.45, 0.28, 0.15, 1.0))
    material(bpy, legs[0], "Wood", (0.45, 0.28, 0.15, 1.0))
    # Only the seat collides: the legs are outside the Domain, and a collider's distance field
    # spans its whole mesh (the whole stool's at this spacing is 160 MB and slows every substep).
    # As honey_coil.json's floor, the seat grips the foot of the thread while the coil turns.
    collider(seat, friction=0.6)
    seat.sph.collider.stickiness = 200.0
    top = 0.475  # the seat's upper face
    bpy.ops.mesh.primitive_circle_add(radius=0.005, location=(0.0, 0.0, top + 0.12), fill_type='NGON')
    spout = bpy.context.object
    spout.name = "Honey Spout"
    spout.sph.role = 'INFLOW'
    material_preset(spout, "honey")
    spout.sph.inflow.speed = 0.4
    spout.sph.inflow.radius = 0.005
    spout.sph.inflow.nozzle_length = 0.02
    spout.sph.inflow.frame_end = 60  # pours 2.5 s
    spout.hide_render = True
    dom = domain(bpy, "Domain", (-0.08, -0.08, top - 0.02), (0.08, 0.08, top + 0.14), 0.0025, 72, "honey_stool",
                 closed_borders=False)
    # A thread 3-5 particles across: without Keep Droplets and with more smoothing its surface is a
    # smooth rope, not a string of particle bumps.
    dom.sph.domain.surface.thin_features = False
    dom.sph.domain.surface.smoothing_iterations = 25
    # The coil turns several times a second: motion blur would smear the rope into a haze.
    scene.render.use_motion_blur = False
    # The whole fall, spout (12 cm up) to the coil stack on the seat (8 cm wide at the end), a little
    # from above so the rings on the stack show; render_sample_docs.py --check-framing checks it.
    camera_and_light(bpy, scene, (0.0, -0.40, top + 0.15), (0.0, 0.0, top + 0.057))
    return scene


def mud_suzanne(bpy):
    """Suzanne ploughing through a pool of mud on a keyframed path (an animated collider)."""
    scene = new_scene(bpy, 60)
    mud = box(bpy, "Mud", (1.6, 0.8, 0.12), (0.0, 0.0, 0.06))
    fluid(bpy, mud, "mud")
    bpy.ops.mesh.primitive_monkey_add(size=0.4, location=(-0.9, 0.0, 0.12))
    monkey = bpy.context.object
    monkey.name = "Suzanne"
    material(bpy, monkey, "Skin", (0.8, 0.55, 0.4, 1.0))
    collider(monkey, friction=0.3, motion='ANIMATED')
    for frame, x, z, rz in ((1, -0.9, 0.12, 0.0), (30, 0.0, 0.05, 0.6), (60, 0.9, 0.15, 0.0)):
        monkey.location = (x, 0.0, z)
        monkey.rotation_euler = (0.0, 0.0, rz)
        monkey.keyframe_insert("location", frame=frame)
        monkey.keyframe_insert("rotation_euler", frame=frame)
    domain(bpy, "Domain", (-1.0, -0.5, 0.0), (1.0, 0.5, 0.8), 0.025, 60, "mud_suzanne")
    # The whole pool: the mud pushed ahead of Suzanne reaches the Domain's +x wall (x = 1) by the end.
    camera_and_light(bpy, scene, (0.05, -3.4, 1.75), (0.05, 0.0, 0.1))
    scene.frame_set(1)
    return scene


def solid(ob, preset, velocity=(0.0, 0.0, 0.0), **overrides):
    """Make ``ob`` a Solid of the elastic model's ``preset``: its particles deform the object itself.

    ``overrides`` are parameters set in the panel over the preset's (e.g. ``density``)."""
    ob.sph.role = 'SOLID'
    material_preset(ob, preset, model="elastic")
    for key, value in overrides.items():
        setattr(ob.sph.material.elastic, key, value)
    ob.sph.material.initial_velocity = velocity
    return ob


def smooth_after_deform(bpy, ob, levels=2):
    """Smooth shading and a Subdivision Surface: the replay's SPH Deform goes first in the stack, so the
    subdivision smooths the mesh as the particles carry it."""
    for poly in ob.data.polygons:
        poly.use_smooth = True
    sub = ob.modifiers.new("Subdivision", 'SUBSURF')
    sub.levels, sub.render_levels = levels, levels


def jelly_material(bpy, ob):
    """Raspberry jelly: a glossy clear skin over a deep red body (absorption inside the volume)."""
    mat = bpy.data.materials.new("Jelly")
    mat.diffuse_color = (0.8, 0.05, 0.1, 1.0)
    mat.use_nodes = True
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    bsdf = nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (1.0, 0.55, 0.6, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.04
    bsdf.inputs["IOR"].default_value = 1.35
    bsdf.inputs["Transmission Weight"].default_value = 1.0
    absorb = nodes.new("ShaderNodeVolumeAbsorption")
    absorb.inputs["Color"].default_value = (0.9, 0.03, 0.08, 1.0)
    absorb.inputs["Density"].default_value = 12.0
    links.new(absorb.outputs[0], nodes["Material Output"].inputs["Volume"])
    ob.data.materials.append(mat)


def rounded_box(bpy, name, size, location, cuts=6, bevel=0.025):
    """A box with bevelled edges and ``cuts`` loops across each face, so the particles can bend its faces."""
    ob = box(bpy, name, size, location)
    bpy.ops.object.mode_set(mode='EDIT')
    bpy.ops.mesh.select_all(action='SELECT')
    bpy.ops.mesh.subdivide(number_cuts=cuts)
    bpy.ops.object.mode_set(mode='OBJECT')
    mod = ob.modifiers.new("Bevel", 'BEVEL')
    mod.width, mod.segments, mod.limit_method = bevel, 3, 'ANGLE'
    bpy.ops.object.modifier_apply(modifier=mod.name)
    return ob


def jelly_steps(bpy):
    """A jelly thrown down a flight of steps: a Solid (the elastic model's jelly) whose own bevelled,
    subdivided mesh wobbles and bounces, with its own glossy translucent material."""
    scene = new_scene(bpy, 60)
    jelly = rounded_box(bpy, "Jelly", (0.2, 0.2, 0.2), (-0.3, 0.0, 0.75))
    solid(jelly, "jelly", velocity=(1.2, 0.0, 0.0))
    jelly_material(bpy, jelly)
    smooth_after_deform(bpy, jelly)
    steps = [box(bpy, f"Step {k}", (0.3, 0.6, h), (x, 0.0, h / 2))
             for k, (x, h) in enumerate(((-0.3, 0.45), (0.0, 0.3), (0.3, 0.15)))]
    bpy.ops.object.select_all(action='DESELECT')
    for ob in steps:
        ob.select_set(True)
    bpy.context.view_layer.objects.active = steps[0]
    bpy.ops.object.join()
    steps[0].name = "Steps"
    material(bpy, steps[0], "Stone", (0.5, 0.5, 0.5, 1.0))
    collider(steps[0], friction=0.3)
    dom = domain(bpy, "Domain", (-0.6, -0.4, 0.0), (0.8, 0.4, 1.0), 0.02, 60, "jelly_steps")
    # The jelly renders itself (its own mesh deformed): a surface of its particles would show it twice.
    dom.sph.domain.surface_enabled = False
    # The cube's whole path: thrown from 0.66-0.84 m at x = -0.3, it bounces down to the Domain's
    # far wall (x = 0.8) and settles there (render_sample_docs.py --check-framing).
    camera_and_light(bpy, scene, (0.2, -2.7, 1.05), (0.2, 0.0, 0.42))
    return scene


def water_hiding_material(bpy, hidden: int):
    """The water look for the surface, transparent where the vertex's ``material`` is ``hidden``.

    The surface stage meshes every material's particles, a Solid's too; the Solid renders itself
    (its own mesh deformed), so its particles' surface is made invisible here. Given to the
    Domain, it replaces the replay's default look (``liquid_materials``)."""
    import importlib

    looks = importlib.import_module(f"{ADDON}.sph_addon.blender.liquid_materials")
    mat = bpy.data.materials.new("Water, Solid Hidden")
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    water = nodes["Principled BSDF"]
    looks._set_look(water, looks.look("viscoelastic", "water"))
    hide_where(mat, looks.ATTRIBUTE, hidden, water.outputs["BSDF"], nodes["Material Output"])
    mat.diffuse_color = (0.85, 0.95, 1.0, 1.0)
    return mat


def hide_where(mat, attribute: str, hidden: int, shown, out) -> None:
    """Wire ``mat``'s ``shown`` shader socket to its output ``out``, transparent where the geometry
    attribute ``attribute`` (a vertex's material index) is ``hidden``."""
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_type, attr.attribute_name = 'GEOMETRY', attribute
    is_hidden = nodes.new("ShaderNodeMath")
    is_hidden.operation = 'COMPARE'
    is_hidden.inputs[1].default_value, is_hidden.inputs[2].default_value = float(hidden), 0.5
    links.new(next(o for o in attr.outputs if o.name in ("Fac", "Factor")), is_hidden.inputs[0])
    mix = nodes.new("ShaderNodeMixShader")
    links.new(is_hidden.outputs[0], mix.inputs["Fac"])
    links.new(shown, mix.inputs[1])
    links.new(nodes.new("ShaderNodeBsdfTransparent").outputs[0], mix.inputs[2])
    links.new(mix.outputs["Shader"], out.inputs["Surface"])


def rubber_suzanne(bpy):
    """A rubber Suzanne dropped into a pool of water: a Solid lighter than water that floats and bobs.

    Suzanne is the elastic model's rubber with its density set to 550 kg/m³ in the panel; the water's
    Pressure Projection is None (the grid's pressure solve does not see Solids: with Grid she sinks)."""
    scene = new_scene(bpy, 36)
    pool = box(bpy, "Water", (0.6, 0.6, 0.15), (0.0, 0.0, 0.075))
    fluid(bpy, pool, "water")
    pool.sph.material.viscoelastic.pressure_projection = 'none'
    bpy.ops.mesh.primitive_monkey_add(size=0.22, location=(0.0, 0.0, 0.36), rotation=(-0.35, 0.0, 0.3))
    monkey = bpy.context.object
    monkey.name = "Suzanne"
    bpy.ops.object.transform_apply(location=False, rotation=True, scale=True)
    solid(monkey, "rubber", density=550.0)
    rubber = bpy.data.materials.new("Yellow Rubber")
    rubber.diffuse_color = (0.9, 0.65, 0.05, 1.0)
    rubber.use_nodes = True
    bsdf = rubber.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (0.9, 0.6, 0.03, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.35
    monkey.data.materials.append(rubber)
    smooth_after_deform(bpy, monkey)
    floor = box(bpy, "Pool Floor", (0.7, 0.7, 0.04), (0.0, 0.0, -0.02))
    material(bpy, floor, "Tiles", (0.15, 0.35, 0.45, 1.0))
    dom = domain(bpy, "Domain", (-0.3, -0.3, 0.0), (0.3, 0.3, 0.5), 0.03, 36, "rubber_suzanne")
    # Materials: the Fluids first, then the Solids (export.build_scene): the water is 0, Suzanne 1.
    dom.data.materials.append(water_hiding_material(bpy, hidden=1))
    camera_and_light(bpy, scene, (0.0, -1.7, 0.85), (0.0, 0.0, 0.17))
    return scene


def crate_flood(bpy):
    """A dam break surging into a shallow pool where a pine crate floats: a Dynamic collider the wave lifts,
    carries and tips (the grid projection's pressure and Clavet's relaxation push it). The crate's motion is
    keyed by the bake."""
    scene = new_scene(bpy, 60)
    # One Fluid of two closed parts, the column and a 20 cm pool (deep enough for the crate to float
    # several particles above the floor: docs/bodies.md, Limits): one material, one surface.
    water = box(bpy, "Water", (0.42, 0.6, 0.7), (-0.69, 0.0, 0.35))
    pool = box(bpy, "Pool", (1.38, 0.6, 0.2), (0.21, 0.0, 0.1))
    bpy.ops.object.select_all(action='DESELECT')
    pool.select_set(True)
    water.select_set(True)
    bpy.context.view_layer.objects.active = water
    bpy.ops.object.join()
    fluid(bpy, water, "water")

    crate = box(bpy, "Crate", (0.22, 0.18, 0.14), (0.3, 0.0, 0.29))
    crate.rotation_euler = (0.0, 0.0, 0.35)
    collider(crate, friction=0.1, motion='DYNAMIC')
    c = crate.sph.collider
    c.density, c.body_friction, c.restitution = 500.0, 0.5, 0.0
    material(bpy, crate, "Pine", (0.55, 0.36, 0.18, 1.0))
    floor = box(bpy, "Tank Floor", (1.9, 0.7, 0.05), (0.0, 0.0, -0.025))
    material(bpy, floor, "Floor", (0.3, 0.3, 0.32, 1.0))
    domain(bpy, "Domain", (-0.9, -0.3, 0.0), (0.9, 0.3, 0.9), 0.03, 60, "crate_flood")
    camera_and_light(bpy, scene, (0.0, -3.3, 1.4), (0.0, 0.0, 0.3))
    return scene


def melt_and_float(bpy):
    """Chocolate melting on a hot plate beside a pool where a crate floats and a jelly bobs
    (``scripts/sample_melt_and_float.py``, where its docstring says what is raised for the melt to show)."""
    import sample_melt_and_float

    return sample_melt_and_float.melt_and_float(bpy, sys.modules[__name__], ADDON)


SAMPLES = {"dam_break": dam_break, "honey_stool": honey_stool, "mud_suzanne": mud_suzanne,
           "jelly_steps": jelly_steps, "rubber_suzanne": rubber_suzanne, "crate_flood": crate_flood,
           "melt_and_float": melt_and_float}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "sample_blends"), help="output folder")
    parser.add_argument("--only", choices=sorted(SAMPLES), action="append", help="build only these samples")
    args = parser.parse_args(argv)
    bpy = enable_extension()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.only or SAMPLES:
        SAMPLES[name](bpy)
        path = out / f"{name}.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(path), compress=True)
        print(f"wrote {path} (Blender {bpy.app.version_string})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
