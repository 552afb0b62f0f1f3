"""The smallest bakeable scene, built with operators: a cube of water in a Domain."""

import bpy


def water_in_tank(water_size: float, water_z: float, tank_size: float, tank_z: float, spacing: float,
                  frame_end: int) -> bpy.types.Object:
    """A cube "Water" (Fluid, water) inside a cube "Tank" (Domain) in the current file; returns the Tank."""
    bpy.ops.mesh.primitive_cube_add(size=water_size, location=(0, 0, water_z))
    bpy.context.object.name = "Water"
    bpy.context.object.sph.role = 'FLUID'
    bpy.ops.mesh.primitive_cube_add(size=tank_size, location=(0, 0, tank_z))
    tank = bpy.context.object
    tank.name = "Tank"
    tank.sph.role = 'DOMAIN'
    tank.sph.domain.particle_spacing = spacing
    tank.sph.domain.frame_end = frame_end
    return tank
