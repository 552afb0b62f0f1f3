"""The cache's frame files as the replay reads them: which hold geometry, and (handler mode) a frame
written into a mesh datablock, for Blender 4.2, which has no Import PLY node.

The replay objects read only the frames from the first to the last file holding vertices
(:func:`has_vertices` reads just the header). The frame handler of :mod:`.replay` reads a
particle or surface PLY file (``core.plyio``) and writes it through the fast attribute paths of
BLENDER_NOTES.md section 7: ``position`` and ``.corner_vert`` rather than ``co`` and
``vertex_index``, float32 C-contiguous arrays for ``foreach_set``. The attributes are those the
Import PLY node tree stores (``replay_nodes``), so both mechanisms give shaders and Geometry
Nodes the same geometry. Main thread only, like all bpy.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import bpy
import numpy as np

from ...core.cache.plyio import PlyError, read_ply
from ...core.models import SOLVERS

log = logging.getLogger(__name__)


def has_vertices(path: Path) -> bool:
    """Whether a PLY file's header declares at least one vertex (a file being written counts)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    for line in head.split(b"end_header")[0].splitlines():
        words = line.split()
        if words[:2] == [b"element", b"vertex"] and len(words) == 3:
            return words[2] != b"0"
    return True  # not a header we know: let the importer say what is wrong


def file_key(path: Path | None) -> str:
    """Path, modification time and size of the file ("" if missing): changes when a bake rewrites it."""
    if path is None:
        return ""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{path}|{st.st_mtime_ns}|{st.st_size}"


def read_frame(path: Path) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Vertex records and triangles of a file, (None, None) if unreadable.

    Triangles pointing past the vertices are rejected here: written into ``.corner_vert``
    they would make Blender read out of bounds.
    """
    try:
        data = read_ply(path)
    except PlyError as exc:
        log.warning("sph replay: %s", exc)
        return None, None
    n = 0 if data.vertices is None else len(data.vertices)
    if data.faces.size and (data.faces.min() < 0 or data.faces.max() >= n):
        log.warning("sph replay: %s: triangle indices outside 0..%d", path, n - 1)
        return None, None
    return data.vertices, data.faces


def write_points(me: bpy.types.Mesh, vertices: np.ndarray | None) -> None:
    """Vertex-only mesh + attributes: Python cannot resize a PointCloud (BLENDER_NOTES.md section 7)."""
    pos = _columns(vertices, ("x", "y", "z"))
    me.clear_geometry()
    me.vertices.add(len(pos))
    me.attributes["position"].data.foreach_set("vector", pos.ravel())
    _write_attributes(me, vertices, len(pos), particles=True)
    me.update()


def write_surface(me: bpy.types.Mesh, vertices: np.ndarray | None, faces: np.ndarray | None) -> None:
    """Triangle mesh through ``position`` / ``.corner_vert`` (3-4x faster than ``co`` / ``vertex_index``).

    ``.corner_vert`` is internal and undocumented, hence the fallback (BLENDER_NOTES.md section 7).
    """
    pos = _columns(vertices, ("x", "y", "z"))
    tris = np.zeros((0, 3), np.int32) if faces is None else np.ascontiguousarray(faces, dtype=np.int32)
    me.clear_geometry()
    me.vertices.add(len(pos))
    me.loops.add(tris.size)
    me.polygons.add(len(tris))
    me.attributes["position"].data.foreach_set("vector", pos.ravel())
    if ".corner_vert" in me.attributes:
        me.attributes[".corner_vert"].data.foreach_set("value", tris.ravel())
    else:
        me.loops.foreach_set("vertex_index", tris.ravel())
    me.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    _write_attributes(me, vertices, len(pos), particles=False)
    me.update(calc_edges=True)


def model_fields() -> dict[str, str]:
    """The registered models' extra particle fields (``MaterialModel.cache_fields``) as point attributes:
    name -> Blender data type, ``INT`` for an integer field (a level, a count), else ``FLOAT``."""
    return {f.name: 'INT' if np.dtype(f.dtype).kind in "iu" else 'FLOAT'
            for spec in SOLVERS.values() for f in spec.cache_fields}


# Cycles takes an Attribute node named ``temperature`` (or ``heat``, ``density``, ``flame``, ``color``) for a smoke
# volume's standard attribute and reads 0 on a mesh (measured: Blender 4.5, an emission from such an attribute
# rendered black, from ``temperature_celsius`` lit): the replay gives the cache's ``temperature`` under this name
# too, which the looks read (``liquid_materials``).
SHADER_TEMPERATURE = "temperature_celsius"


def _write_attributes(me: bpy.types.Mesh, vertices: np.ndarray | None, n: int, particles: bool) -> None:
    """The attributes the import mechanism stores too (``replay_nodes._attribute_chain``).

    ``velocity`` is always written (Cycles motion blur and Alembic velocities read it:
    BLENDER_NOTES.md section 7), with ``speed`` and an integer ``material``; particles get an
    integer ``id``, ``age`` (s) and each model's cache field (``time_level`` of the sph model), and particles and
    surfaces ``temperature`` (°C, also as :data:`SHADER_TEMPERATURE`) and ``melt`` (the melt fraction, 0 solid
    to 1 liquid), when the cache has them. An attribute the frame lacks is removed, so a mesh never shows a
    previous frame's values.
    """
    vel = _columns(vertices, ("vx", "vy", "vz"))
    names = set(vertices.dtype.names or ()) if vertices is not None else set()
    values = {"velocity": ('FLOAT_VECTOR', "vector", vel.ravel()),
              "speed": ('FLOAT', "value", np.linalg.norm(vel, axis=1).astype(np.float32)),
              "material": ('INT', "value", _column(vertices, "material", np.int32, n))}
    heat = {"temperature": 'FLOAT', "melt": 'FLOAT'}
    optional = {"id": 'INT', "age": 'FLOAT', **heat, **model_fields()}
    for name, data_type in optional.items():
        if name in names and (particles or name in heat):
            values[name] = (data_type, "value",
                            _column(vertices, name, np.int32 if data_type == 'INT' else np.float32, n))
    if "temperature" in values:
        values[SHADER_TEMPERATURE] = values["temperature"]
    for name in (*optional, SHADER_TEMPERATURE):
        if name not in values and name in me.attributes:
            me.attributes.remove(me.attributes[name])
    for name, (data_type, key, data) in values.items():
        attr = me.attributes.get(name)
        if attr is not None and attr.data_type != data_type:
            me.attributes.remove(attr)
            attr = None
        attr = attr or me.attributes.new(name, data_type, 'POINT')
        attr.data.foreach_set(key, data)


def _columns(vertices: np.ndarray | None, names: tuple[str, str, str]) -> np.ndarray:
    """(N, 3) float32 C-contiguous from three scalar properties (zeros if absent): foreach_set's fast input."""
    if vertices is None:
        return np.zeros((0, 3), np.float32)
    if not set(names) <= set(vertices.dtype.names or ()):
        return np.zeros((len(vertices), 3), np.float32)
    return np.ascontiguousarray(np.column_stack([vertices[n] for n in names]), dtype=np.float32)


def _column(vertices: np.ndarray | None, name: str, dtype, n: int) -> np.ndarray:
    """One property as a C-contiguous array of ``dtype`` (zeros if absent); uint32 ids wrap like int32."""
    if vertices is None or name not in (vertices.dtype.names or ()):
        return np.zeros(n, dtype)
    return np.ascontiguousarray(vertices[name].astype(dtype, casting="unsafe"))


def remove_handler(handlers: list, fn) -> None:
    """Take ``fn`` out of one of ``bpy.app.handlers``' lists (both replays register theirs with it)."""
    # Match by name too: after a reload of the module the old function object is a different one.
    for h in list(handlers):
        if h is fn or (getattr(h, "__name__", None) == fn.__name__ and getattr(h, "__module__", None) == fn.__module__):
            handlers.remove(h)
