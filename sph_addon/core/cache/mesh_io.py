"""Loading triangle meshes for colliders and sources: PLY and OBJ, numpy only.

PLY goes through ``sph_addon.core.cache.plyio.read_ply``. OBJ is read here: ``v`` and
``f`` lines, face corners as ``v``, ``v/vt``, ``v/vt/vn`` or ``v//vn``, 1-based
or negative (relative) indices; every other statement (``vt``, ``vn``, ``o``, ``g``,
``usemtl``, ``s``, ``l``, ...) is ignored. Errors are ``InputError`` naming the
file (and line for OBJ). Polygons of both formats are triangulated by
``core.polygons.triangulate``: ear clipping in the polygon's plane, so a concave
face (an L-shaped wall) covers exactly its own area.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..numerics import config
from .plyio import PlyError, read_ply
from .polygons import triangulate


def load_mesh(path: str | os.PathLike, where: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load a triangle mesh from a ``.ply`` or ``.obj`` file.

    Parameters
    ----------
    path : file path; the suffix (case-insensitive) selects the reader.
    where : name for error messages (e.g. the scene's JSON path); defaults to the file name.

    Returns
    -------
    vertices : (n, 3) float64
    triangles : (m, 3) int64, indices into ``vertices``.

    Raises
    ------
    InputError
        Unreadable file, unknown suffix, malformed content, no triangles, or coordinates
        :func:`check_coordinates` refuses.
    """
    path = Path(path)
    where = where or str(path)
    suffix = path.suffix.lower()
    if suffix == ".ply":
        try:
            ply = read_ply(path)
        except PlyError as exc:
            raise InputError(where, str(exc)) from exc
        names = ply.vertices.dtype.names or ()
        if not all(n in names for n in ("x", "y", "z")):
            raise InputError(where, f"{path.name}: the vertex element has no x, y, z properties.")
        v, t = ply.positions(), ply.faces.astype(np.int64)
    elif suffix == ".obj":
        v, t = read_obj(path, where)
    else:
        raise InputError(where, f"{path.name}: unsupported mesh format {suffix!r} (use .ply or .obj).")
    if len(t) == 0:
        raise InputError(where, f"{path.name}: the file has no faces.")
    check_coordinates(v, where, path.name)
    return v, t


def check_coordinates(vertices: np.ndarray, where: str, name: str) -> None:
    """Refuse NaN, infinite or absurd (beyond ``config.MAX_MAGNITUDE``) vertex coordinates, m.

    The one guard of mesh sizes: every size, count and grid derived from a mesh (particle
    estimates, distance grids, fills) is computed after it, so none of them can overflow
    (a box scaled to 1e300 m made the particle estimate infinite) or warn.
    """
    v = np.asarray(vertices)
    if not np.isfinite(v).all() or (v.size and float(np.abs(v).max()) > config.MAX_MAGNITUDE):
        raise InputError(where, f"{name}: the mesh has NaN, infinite or absurd (beyond {config.MAX_MAGNITUDE:g} m) "
                                "vertex coordinates; fix the mesh")


def _obj_index(token: str, nv: int, where: str, lineno: int) -> int:
    """0-based vertex index from an OBJ face corner token (``v``, ``v/vt``, ``v/vt/vn``, ``v//vn``)."""
    head = token.split("/", 1)[0]
    try:
        k = int(head)
    except ValueError:
        raise InputError(where, f"line {lineno}: bad face corner {token!r}.") from None
    if k > 0:
        k -= 1
    elif k < 0:
        # Negative indices count back from the last vertex defined so far.
        k += nv
    else:
        raise InputError(where, f"line {lineno}: vertex index 0 is not valid in OBJ (indices start at 1).")
    if not 0 <= k < nv:
        raise InputError(where, f"line {lineno}: face corner {token!r} refers to a vertex not defined "
                                f"yet ({nv} so far).")
    return k


def read_obj(path: str | os.PathLike, where: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read vertices and (triangulated, see ``polygons.triangulate``) faces from a Wavefront OBJ file.

    Parameters
    ----------
    path : file path.
    where : name for error messages; defaults to the file name.

    Returns
    -------
    vertices : (n, 3) float64
    triangles : (m, 3) int64
    """
    path = Path(path)
    where = where or str(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(where, f"cannot read {path.name} ({exc.strerror}).") from exc
    if not text:
        raise InputError(where, f"{path.name}: the file is empty (0 bytes); export the mesh again.")
    verts: list[tuple[float, float, float]] = []
    polys: list[list[int]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "v":
            try:
                # Extra components (w or vertex colours) are allowed and ignored.
                verts.append((float(words[1]), float(words[2]), float(words[3])))
            except (IndexError, ValueError):
                raise InputError(where, f"line {lineno}: bad vertex {line.strip()!r}.") from None
        elif words[0] == "f":
            if len(words) < 4:
                raise InputError(where, f"line {lineno}: a face needs at least 3 corners.")
            polys.append([_obj_index(w, len(verts), where, lineno) for w in words[1:]])
    v = np.asarray(verts, np.float64).reshape(-1, 3)
    return v, triangulate(polys, v)
