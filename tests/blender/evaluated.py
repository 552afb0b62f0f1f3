"""What Blender shows after evaluation: the replay objects' geometry, read back as numpy."""

import bpy
import numpy as np


def evaluated_points(ob) -> tuple[np.ndarray, np.ndarray | None]:
    """Positions and velocities of the point cloud ``ob``'s modifier makes (an instance of ``ob`` in 4.2-5.0)."""
    dg = bpy.context.evaluated_depsgraph_get()
    for inst in dg.object_instances:
        if inst.is_instance and inst.parent and inst.parent.original == ob and inst.object.type == 'POINTCLOUD':
            pc = inst.object.data
            pos = np.empty(len(pc.points) * 3, np.float32)
            pc.attributes["position"].data.foreach_get("vector", pos)
            vel = None
            if "velocity" in pc.attributes:
                vel = np.empty(len(pc.points) * 3, np.float32)
                pc.attributes["velocity"].data.foreach_get("vector", vel)
                vel = vel.reshape(-1, 3)
            return pos.reshape(-1, 3), vel
    return np.zeros((0, 3), np.float32), None


def evaluated_mesh(ob) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Positions, triangle corners and velocities of ``ob``'s evaluated mesh."""
    dg = bpy.context.evaluated_depsgraph_get()
    me = ob.evaluated_get(dg).data
    pos = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", pos)
    corners = np.empty(len(me.loops), np.int32)
    me.loops.foreach_get("vertex_index", corners)
    vel = None
    if "velocity" in me.attributes:
        vel = np.empty(len(me.vertices) * 3, np.float32)
        me.attributes["velocity"].data.foreach_get("vector", vel)
        vel = vel.reshape(-1, 3)
    return pos.reshape(-1, 3), corners, vel
