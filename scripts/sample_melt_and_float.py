"""The ``melt_and_float`` sample: chocolate melting on a hot plate beside a pool where a crate and a jelly float.

Built by ``scripts/make_samples.py`` (``--only melt_and_float``), which hands this module its scene helpers
(``new_scene``, ``box``, ``domain``, ...) as ``ms``: one builder per sample module, no import back.
"""

from __future__ import annotations

import importlib

# Materials by index (export.build_scene): the enabled Fluids by name, then the Solids by name, then the
# materials melted into: Water 0, Chocolate 1, Jelly 2, Melted Chocolate 3.
LOOKS = (("viscoelastic", "water"), ("elastic", "dark_chocolate"), ("elastic", "jelly"), ("sph", "melted_chocolate"))
JELLY = 2
CONDUCTIVITY = 1000.0  # W/(m K): the chocolates' 0.2 raised 5000x (a time-lapse)


def looks_hiding_material(bpy, ms, addon: str, hidden: int):
    """Each material's preset look (as the replay's default), transparent where the vertex's ``material`` is
    ``hidden``: a Solid that renders itself (its own mesh deformed) is not shown twice by the surface of its
    particles. Given to the Domain, it replaces the replay's default look."""
    looks = importlib.import_module(f"{addon}.sph_addon.blender.liquid_materials")
    mat = bpy.data.materials.new("Preset Looks, Jelly Hidden")
    looks._build(mat, [looks.look(model, preset) for model, preset in LOOKS])
    out = next(n for n in mat.node_tree.nodes if n.bl_idname == "ShaderNodeOutputMaterial")
    ms.hide_where(mat, looks.ATTRIBUTE, hidden, out.inputs["Surface"].links[0].from_socket, out)
    return mat


def _melted_chocolate(bpy, ms):
    """A Fluid whose Enabled box is off: it emits nothing and carries the material the chocolate melts into."""
    bpy.ops.mesh.primitive_cube_add(size=0.02, location=(0.0, 0.0, -1.0))
    ob = bpy.context.object
    ob.name = "Melted Chocolate"
    ob.sph.role = 'FLUID'
    ob.sph.enabled = False
    ob.hide_render = ob.hide_viewport = True
    ms.material_preset(ob, "melted_chocolate", "sph")
    ob.sph.material.sph.thermal_conductivity = CONDUCTIVITY
    return ob


def _plate_and_chocolate(bpy, ms, top: float):
    """The hot plate (a block whose top is at ``top``, held at 70 °C) and the chocolate block on it."""
    plate = ms.box(bpy, "Hot Plate", (0.32, 0.4, top), (0.24, 0.0, top / 2))
    ms.collider(plate, friction=0.3)
    plate.sph.collider.heat_contact, plate.sph.collider.temperature = True, 70.0
    ms.material(bpy, plate, "Steel", (0.55, 0.55, 0.58, 1.0))
    plate.data.materials[0].node_tree.nodes["Principled BSDF"].inputs["Metallic"].default_value = 1.0
    choc = ms.rounded_box(bpy, "Chocolate", (0.1, 0.1, 0.12), (0.24, 0.0, top + 0.06), cuts=2, bevel=0.015)
    # E lowered from the preset's 1 MPa to 0.2 MPa, as the melting docs' Suzanne: fewer solver iterations.
    ms.solid(choc, "dark_chocolate", thermal_conductivity=CONDUCTIVITY, youngs_modulus=2e5,
             melts_into="Melted Chocolate")
    choc.sph.fluid.temperature = 20.0
    # The Domain's surface renders the chocolate and its melt with their looks; the block's own mesh would
    # stay a block over its melt.
    choc.hide_render = True
    _melted_chocolate(bpy, ms)


def _crate_and_jelly(bpy, ms, level: float):
    """The pine crate (a Dynamic collider, 500 kg/m³) dropped 2 cm onto the water and the jelly (600 kg/m³)
    dropped 5 cm beside it."""
    crate = ms.box(bpy, "Crate", (0.12, 0.12, 0.09), (-0.27, 0.0, level + 0.065))
    crate.rotation_euler = (0.0, 0.0, 0.3)
    ms.collider(crate, friction=0.1, motion='DYNAMIC')
    c = crate.sph.collider
    c.density, c.body_friction, c.restitution = 500.0, 0.5, 0.0
    ms.material(bpy, crate, "Pine", (0.55, 0.36, 0.18, 1.0))
    jelly = ms.rounded_box(bpy, "Jelly", (0.1, 0.1, 0.1), (-0.07, 0.0, level + 0.1), cuts=4, bevel=0.015)
    ms.solid(jelly, "jelly", density=600.0)
    ms.jelly_material(bpy, jelly)
    ms.smooth_after_deform(bpy, jelly)


def melt_and_float(bpy, ms, addon: str):
    """A dark chocolate block melting on a hot plate beside a pool of water where a pine crate floats and a
    jelly cube bobs: every kind of material in one bake.

    The water is the ``water`` preset as shipped (its grid Pressure Projection sees the crate and the jelly:
    they float). The crate is a Dynamic collider of 500 kg/m³, the jelly the elastic ``jelly`` at 600 kg/m³,
    dropped 5 cm onto the water. The chocolate (``dark_chocolate``, 20 °C) sits on a block held at 70 °C
    (Heat Contact) and melts past 34 °C into ``melted_chocolate`` (a Fluid whose Enabled box is off). Both
    chocolates' Thermal Conductivity is raised from 0.2 to 1000 W/(m K), a time-lapse: real conduction would
    take hours to melt what melts here in 2.5 s. The Domain's material is every preset's look with the
    jelly's particles transparent: the jelly renders as its own mesh, the chocolate as the surface.
    """
    frames = 60
    scene = ms.new_scene(bpy, frames)
    level = 0.14  # the water's surface
    water = ms.box(bpy, "Water", (0.46, 0.4, level), (-0.17, 0.0, level / 2))
    ms.fluid(bpy, water, "water")
    _plate_and_chocolate(bpy, ms, top=0.16)
    _crate_and_jelly(bpy, ms, level)
    floor = ms.box(bpy, "Floor", (1.0, 0.6, 0.04), (0.0, 0.0, -0.02))
    ms.material(bpy, floor, "Tiles", (0.15, 0.35, 0.45, 1.0))
    dom = ms.domain(bpy, "Domain", (-0.4, -0.2, 0.0), (0.4, 0.2, 0.4), 0.02, frames, "melt_and_float")
    dom.sph.domain.max_substeps = 1000
    dom.data.materials.append(looks_hiding_material(bpy, ms, addon, hidden=JELLY))
    ms.camera_and_light(bpy, scene, (0.0, -1.25, 0.75), (0.0, 0.0, 0.1))
    scene.frame_set(1)
    return scene
