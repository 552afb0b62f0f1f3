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


def _read_attributes(attributes, domain_size: int) -> dict[str, tuple[str, np.ndarray]]:
    """Every user-visible point attribute: name -> (data type, values); internal ones (".name") left out."""
    out = {}
    for a in attributes:
        if a.domain != 'POINT' or a.name.startswith("."):
            continue
        if a.data_type in {'FLOAT', 'INT'}:
            vals = np.empty(domain_size, np.float64 if a.data_type == 'FLOAT' else np.int64)
            buf = np.empty(domain_size, np.float32 if a.data_type == 'FLOAT' else np.int32)
            a.data.foreach_get("value", buf)
            vals[:] = buf
        elif a.data_type == 'FLOAT_VECTOR':
            buf = np.empty(domain_size * 3, np.float32)
            a.data.foreach_get("vector", buf)
            vals = buf.reshape(-1, 3)
        else:
            vals = None
        out[a.name] = (a.data_type, vals)
    return out


def evaluated_point_attributes(ob) -> dict[str, tuple[str, np.ndarray]]:
    """The point attributes of the point cloud ``ob``'s modifier makes (empty if it makes none)."""
    dg = bpy.context.evaluated_depsgraph_get()
    for inst in dg.object_instances:
        if inst.is_instance and inst.parent and inst.parent.original == ob and inst.object.type == 'POINTCLOUD':
            pc = inst.object.data
            return _read_attributes(pc.attributes, len(pc.points))
    return {}


def evaluated_mesh_attributes(ob) -> dict[str, tuple[str, np.ndarray]]:
    """The point (vertex) attributes of ``ob``'s evaluated mesh."""
    dg = bpy.context.evaluated_depsgraph_get()
    me = ob.evaluated_get(dg).data
    return _read_attributes(me.attributes, len(me.vertices))
