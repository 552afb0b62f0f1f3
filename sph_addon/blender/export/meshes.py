"""Evaluated Blender meshes as arrays and PLY files for the scene file.

Meshes are evaluated (modifiers, armatures, shape keys applied); fluids are taken in world
space, colliders and outflows in their local frame with the object's scale applied, so the core
only has to move them rigidly (position + Euler XYZ rotation, :func:`transform`). Vertices are
written in metres. Main thread only, like all bpy.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ...core.cache.plyio import write_ply
from .errors import ExportError

_VERTEX = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4")])


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "object"


def mesh_arrays(ob, depsgraph, space: str):
    """Evaluated triangles of ``ob``: (vertices float32 (N, 3), triangles int32 (M, 3)).

    ``space``: "world" (matrix_world applied) or "scaled" (local coordinates times the object's
    world scale: the collider frame the core moves rigidly).
    """
    ob_eval = ob.evaluated_get(depsgraph)
    try:
        me = ob_eval.to_mesh()
    except RuntimeError:
        me = None
    if me is None:
        raise ExportError(ob.name, f"is a {ob.type.lower()} object with no surface; use a mesh (or a curve, "
                                   "text or surface that converts to one)")
    try:
        me.calc_loop_triangles()
        co = np.empty(3 * len(me.vertices), np.float32)
        me.vertices.foreach_get("co", co)
        tris = np.empty(3 * len(me.loop_triangles), np.int32)
        me.loop_triangles.foreach_get("vertices", tris)
    finally:
        ob_eval.to_mesh_clear()
    co = co.reshape(-1, 3).astype(np.float64)
    m = np.array(ob.matrix_world, dtype=np.float64)
    if space == "world":
        co = co @ m[:3, :3].T + m[:3, 3]
    else:
        co = co * np.array(ob.matrix_world.to_scale(), dtype=np.float64)
    return co.astype(np.float32), tris.reshape(-1, 3)


def base_mesh_world(ob):
    """``ob``'s own mesh, before modifiers and shape keys, in world space: (vertices float32 (N, 3) in
    Blender's vertex order, triangles int32 (M, 3)).

    A Solid's mesh: the bake writes it back deformed vertex for vertex, and the replay moves these
    same vertices, so modifiers (a Subdivision Surface) apply after the deformation, as on any mesh.
    """
    if ob.type != 'MESH':
        raise ExportError(ob.name, f"is a {ob.type.lower()} object; a Solid must be a mesh (its vertices are "
                                   "what the particles move)")
    me = ob.data
    me.calc_loop_triangles()
    co = np.empty(3 * len(me.vertices), np.float32)
    me.vertices.foreach_get("co", co)
    tris = np.empty(3 * len(me.loop_triangles), np.int32)
    me.loop_triangles.foreach_get("vertices", tris)
    m = np.array(ob.matrix_world, dtype=np.float64)
    co = co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
    return co.astype(np.float32), tris.reshape(-1, 3)


def write_mesh(path: Path, co: np.ndarray, tris: np.ndarray, unit: float = 1.0) -> None:
    """Write a mesh as PLY; ``unit``: metres per Blender unit (vertices are stored in metres)."""
    if unit != 1.0:
        # In float64: 15 units x 0.01 then rounds to the same float32 as 0.15 m modelled in metres.
        co = (co.astype(np.float64) * unit).astype(np.float32)
    v = np.empty(len(co), _VERTEX)
    v["x"], v["y"], v["z"] = co[:, 0], co[:, 1], co[:, 2]
    write_ply(path, v, tris)


def signed_volume(co: np.ndarray, tris: np.ndarray) -> float:
    """Volume enclosed by a closed triangle mesh (divergence theorem), sign by orientation."""
    a, b, c = (co[tris[:, k]].astype(np.float64) for k in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def transform(ob) -> tuple[list[float], list[float]]:
    loc, rot, _ = ob.matrix_world.decompose()
    return [float(x) for x in loc], [float(x) for x in rot.to_euler('XYZ')]
