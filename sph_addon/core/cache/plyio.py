"""Reading and writing PLY files with numpy, no pickle, no third-party code.

Writing: binary little-endian, one ``vertex`` element with any number of scalar
properties (a numpy structured array) and an optional ``face`` element of
triangles (``list uchar int vertex_indices``). This is what Blender's Geometry
Nodes *Import PLY* reads, with extra vertex properties becoming attributes.

Reading: ``binary_little_endian``, ``binary_big_endian`` and ``ascii``; scalar
vertex properties; a face element (its ``vertex_indices`` list; other properties are read
past) whose polygons are triangulated by ``polygons.triangulate`` (ear clipping). Other
elements are skipped when their size can be known. Truncated or malformed files
raise ``PlyError`` naming the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .atomic import atomic_open
from .polygons import triangulate

_PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1",
    "short": "i2", "int16": "i2", "ushort": "u2", "uint16": "u2",
    "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
    "float": "f4", "float32": "f4", "double": "f8", "float64": "f8",
}
_NUMPY_TO_PLY = {"i1": "char", "u1": "uchar", "i2": "short", "u2": "ushort",
                 "i4": "int", "u4": "uint", "f4": "float", "f8": "double"}


class PlyError(ValueError):
    """A PLY file that cannot be read; the message names the file."""


@dataclass
class PlyData:
    """Contents of a PLY file.

    Attributes
    ----------
    vertices : numpy structured array, one record per vertex, fields as in the file.
    faces : (F, 3) int32 triangles (polygons triangulated, see ``polygons``), or an empty (0, 3) array.
    comments : header comment lines, without the ``comment`` keyword.
    """

    vertices: np.ndarray
    faces: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int32))
    comments: list[str] = field(default_factory=list)

    def positions(self) -> np.ndarray:
        """(N, 3) float64 positions from the ``x y z`` properties."""
        v = self.vertices
        return np.column_stack([v["x"], v["y"], v["z"]]).astype(np.float64)


def write_ply(path: str | os.PathLike, vertices: np.ndarray, faces: np.ndarray | None = None,
              comments: list[str] | tuple[str, ...] = ()) -> None:
    """Write a binary little-endian PLY atomically.

    Parameters
    ----------
    path : destination; written through a temp file and renamed.
    vertices : structured array with scalar fields (e.g. x y z vx vy vz as float32).
    faces : optional (F, 3) integer triangles, indices into ``vertices``.
    comments : header comments (single lines).
    """
    vertices = np.ascontiguousarray(vertices)
    dt = vertices.dtype
    if dt.names is None:
        raise TypeError("vertices must be a structured array")
    le = np.dtype([(n, dt[n].newbyteorder("<")) for n in dt.names])
    vbytes = vertices.astype(le, copy=False).tobytes()
    header = ["ply", "format binary_little_endian 1.0"]
    header += [f"comment {c}" for c in comments]
    header.append(f"element vertex {len(vertices)}")
    for n in dt.names:
        header.append(f"property {_NUMPY_TO_PLY[dt[n].str[1:]]} {n}")
    fbytes = b""
    if faces is not None:
        faces = np.asarray(faces)
        if faces.ndim != 2 or faces.shape[1] != 3:
            raise ValueError("faces must be (F, 3)")
        header.append(f"element face {len(faces)}")
        header.append("property list uchar int vertex_indices")
        rec = np.empty(len(faces), dtype=[("n", "u1"), ("i", "<i4", (3,))])
        rec["n"] = 3
        rec["i"] = faces
        fbytes = rec.tobytes()
    header.append("end_header")
    with atomic_open(path, "wb") as fh:
        fh.write(("\n".join(header) + "\n").encode("ascii"))
        fh.write(vbytes)
        fh.write(fbytes)


# Header bounds: real headers have a few dozen lines; a file without end_header must not be
# read line by line to its end, nor one endless line be read whole.
_MAX_HEADER_LINES = 10_000
_MAX_HEADER_LINE = 4096


def _parse_header(fh, name: str):
    """(format, elements, comments) of a PLY header; ``elements`` is a list of
    ``[name, count, [(prop, dtype) | ("list", prop, count_dtype, item_dtype)]]``."""
    magic = fh.readline(_MAX_HEADER_LINE)
    if not magic:
        raise PlyError(f"{name}: the file is empty (0 bytes); export the mesh again")
    if magic.strip() != b"ply":
        raise PlyError(f"{name}: not a PLY file (no 'ply' magic line)")
    fmt = None
    elements: list[list] = []
    comments = []
    for _ in range(_MAX_HEADER_LINES):
        line = fh.readline(_MAX_HEADER_LINE)
        if not line:
            raise PlyError(f"{name}: truncated header (no end_header)")
        text = line.decode("ascii", "replace")
        words = text.split()
        if not words:
            continue
        key = words[0]
        if key == "format":
            if len(words) < 2:
                raise PlyError(f"{name}: the format line names no format")
            fmt = words[1]
        elif key == "comment":
            comments.append(text[len("comment "):].rstrip("\r\n"))
        elif key == "obj_info":
            continue
        elif key == "element":
            if len(words) != 3 or not words[2].isdigit():
                raise PlyError(f"{name}: bad element line {text.strip()[:60]!r} (expected 'element NAME COUNT' "
                               "with a whole-number count)")
            elements.append([words[1], int(words[2]), []])
        elif key == "property":
            if not elements:
                raise PlyError(f"{name}: property before any element")
            try:
                if words[1] == "list":
                    prop = ("list", words[4], _PLY_TYPES[words[2]], _PLY_TYPES[words[3]])
                else:
                    prop = (words[2], _PLY_TYPES[words[1]])
            except (KeyError, IndexError):
                raise PlyError(f"{name}: bad property line {text.strip()[:60]!r}") from None
            # Every reader finds properties by name (a numpy record's fields), so a name must be unique.
            if _prop_name(prop) in map(_prop_name, elements[-1][2]):
                raise PlyError(f"{name}: element '{elements[-1][0][:40]}' declares the property "
                               f"{words[-1][:40]!r} twice")
            elements[-1][2].append(prop)
        elif key == "end_header":
            break
        else:
            raise PlyError(f"{name}: unknown header keyword {key[:40]!r}")
    else:
        raise PlyError(f"{name}: no end_header in the first {_MAX_HEADER_LINES} lines")
    if fmt not in ("binary_little_endian", "binary_big_endian", "ascii"):
        raise PlyError(f"{name}: unsupported format {fmt!r}")
    return fmt, elements, comments


def _prop_name(prop: tuple) -> str:
    """The name of a parsed property: ``(name, dtype)`` or ``("list", name, count dtype, item dtype)``."""
    return prop[1] if prop[0] == "list" else prop[0]


def _index_list(props: list) -> int:
    """Position of a face element's corner list: ``vertex_indices`` (or ``vertex_index``, as some
    exporters spell it), else its first list; texture coordinates or flags may come before it."""
    lists = [k for k, p in enumerate(props) if p[0] == "list"]
    named = [k for k in lists if props[k][1] in ("vertex_indices", "vertex_index")]
    return (named or lists)[0]


def _triangulate(polys: list[np.ndarray] | np.ndarray, vertices: np.ndarray, name: str) -> np.ndarray:
    """(F, 3) int32 triangles of the face element's polygons, indices checked first.

    Concave polygons are ear-clipped in their plane (``polygons.triangulate``), which
    needs the positions; without x, y, z (not a mesh the colliders can use) they are fanned.
    """
    if isinstance(polys, np.ndarray):
        flat = polys.ravel()
    else:
        flat = np.concatenate(polys) if polys else np.zeros(0, np.int64)
    _check_faces(flat, len(vertices), name)
    names = vertices.dtype.names or ()
    if all(n in names for n in ("x", "y", "z")):
        positions = np.column_stack([vertices["x"], vertices["y"], vertices["z"]])
    else:
        positions = np.zeros((len(vertices), 3))
    return triangulate(polys, positions).astype(np.int32)


def read_ply(path: str | os.PathLike, exact: bool = False) -> PlyData:
    """Read a PLY file (see module docstring for what is supported).

    ``exact``: the header's counts must account for every byte of a binary file (files this
    package wrote: a count lowered by hand would otherwise hide particles silently).
    """
    path = Path(path)
    name = str(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise PlyError(f"{name}: cannot open ({exc.strerror})") from exc
    with fh:
        fmt, elements, comments = _parse_header(fh, name)
        if fmt == "ascii":
            return _read_ascii(fh, elements, comments, name)
        order = "<" if fmt == "binary_little_endian" else ">"
        data = fh.read()
    pos = 0
    vertices = None
    faces: list | np.ndarray = []
    for el_name, count, props in elements:
        if not any(p[0] == "list" for p in props):
            dt = np.dtype([(p[0], order + p[1]) for p in props])
            nbytes = dt.itemsize * count
            if pos + nbytes > len(data):
                raise PlyError(f"{name}: truncated: element '{el_name}' claims {count} records, "
                               f"{nbytes} bytes, but {len(data) - pos} are left")
            arr = np.frombuffer(data, dtype=dt, count=count, offset=pos)
            pos += nbytes
            if el_name == "vertex":
                vertices = arr.astype(dt.newbyteorder("="))
            continue
        if el_name == "face":
            corners = props[_index_list(props)]
            if np.dtype(corners[3]).kind not in "iu":
                raise PlyError(f"{name}: the face element's {corners[1][:40]!r} holds {corners[3]} values, not "
                               "whole-number vertex indices")
            faces, pos = _read_list_element(data, pos, order, el_name, count, props, name)
            continue
        with np.errstate(invalid="ignore"):  # read past: another element's lists are never used
            _, pos = _read_list_element(data, pos, order, el_name, count, props, name)
    if exact and pos != len(data):
        raise PlyError(f"{name}: {len(data) - pos} bytes follow the last element: the header's counts do not "
                       "match the file")
    if vertices is None:
        raise PlyError(f"{name}: no vertex element")
    return PlyData(vertices, _triangulate(faces, vertices, name), comments)


def _read_list_element(data: bytes, pos: int, order: str, el_name: str, count: int, props: list, name: str):
    """Read a binary element with list properties; return (its corner lists, new offset).

    Scalar properties beside the lists (a face's flags or material index) are read past.
    Every record is assumed to have the first record's list lengths (what exporters write:
    all triangles); if one does not, the records are walked one by one.
    """
    types = [(np.dtype(order + p[2]), np.dtype(order + p[3])) if p[0] == "list" else np.dtype(order + p[1])
             for p in props]
    smallest = sum(t[0].itemsize if isinstance(t, tuple) else t.itemsize for t in types)
    if pos + smallest * count > len(data):
        raise PlyError(f"{name}: truncated: element '{el_name}' claims {count} records, at least "
                       f"{smallest * count} bytes, but {len(data) - pos} are left")
    if count == 0:
        return [], pos
    lengths, _ = _walk_record(data, pos, types, name)
    fields = []
    for k, t in enumerate(types):
        if isinstance(t, tuple):
            fields += [(f"n{k}", t[0]), (f"v{k}", t[1], (lengths[k],))]
        else:
            fields.append((f"s{k}", t))
    rec = np.dtype(fields)
    first_list = _index_list(props)
    if pos + rec.itemsize * count <= len(data):
        arr = np.frombuffer(data, dtype=rec, count=count, offset=pos)
        if all(np.all(arr[f"n{k}"] == n) for k, n in lengths.items()):
            return arr[f"v{first_list}"].reshape(count, -1).astype(np.int64), pos + rec.itemsize * count
    polys = []
    for _ in range(count):
        lengths, items = _walk_record(data, pos, types, name)
        pos = items.pop()
        polys.append(items[first_list])
    return polys, pos


def _walk_record(data: bytes, pos: int, types: list, name: str) -> tuple[dict[int, int], list]:
    """One record of a list element at ``pos``: ({prop index: list length}, [lists by index ..., end offset])."""
    lengths: dict[int, int] = {}
    lists: dict[int, np.ndarray] = {}
    for k, t in enumerate(types):
        if isinstance(t, tuple):
            ct, it = t
            if pos + ct.itemsize > len(data):
                raise PlyError(f"{name}: truncated in a list element")
            n = int(np.frombuffer(data, ct, 1, pos)[0])
            pos += ct.itemsize
            if n < 0 or pos + n * it.itemsize > len(data):
                raise PlyError(f"{name}: truncated in a list element (a list of {n} items)")
            lists[k] = np.frombuffer(data, it, n, pos).astype(np.int64)
            lengths[k] = n
            pos += n * it.itemsize
        else:
            pos += t.itemsize
    return lengths, [lists.get(k) for k in range(len(types))] + [pos]


def _read_ascii(fh, elements, comments, name) -> PlyData:
    words = fh.read().split()
    pos = 0
    vertices = None
    faces: list = []
    try:
        for el_name, count, props in elements:
            if any(p[0] == "list" for p in props):
                polys = []
                corners = _index_list(props)
                for _ in range(count):
                    for k, p in enumerate(props):
                        if p[0] != "list":
                            pos += 1
                            continue
                        n = int(words[pos])
                        if n < 0 or pos + 1 + n > len(words):
                            raise PlyError(f"{name}: truncated in element '{el_name}'")
                        if k == corners:
                            polys.append(np.array(words[pos + 1:pos + 1 + n], dtype=np.int64))
                        pos += 1 + n
                if pos > len(words):
                    raise PlyError(f"{name}: truncated in element '{el_name}'")
                if el_name == "face":
                    faces = polys
                continue
            dt = np.dtype([(p[0], p[1]) for p in props])
            nprop = len(props)
            if pos + nprop * count > len(words):
                raise PlyError(f"{name}: truncated: element '{el_name}' claims {count} records, "
                               f"{len(words) - pos} values are left")
            table = np.array(words[pos:pos + nprop * count], dtype=np.float64).reshape(count, nprop)
            pos += nprop * count
            if el_name == "vertex":
                vertices = np.empty(count, dt)
                for k, p in enumerate(props):
                    vertices[p[0]] = _ascii_column(table[:, k], dt[p[0]], p[0], name)
    except (IndexError, ValueError) as exc:
        raise PlyError(f"{name}: malformed ascii body ({exc})") from None
    if vertices is None:
        raise PlyError(f"{name}: no vertex element")
    return PlyData(vertices, _triangulate(faces, vertices, name), comments)


def _ascii_column(values: np.ndarray, dtype: np.dtype, prop: str, name: str) -> np.ndarray:
    """An ascii property's values (float64 as read) in its declared type.

    A float beyond the type's range becomes infinite, as in a binary file (readers refuse
    non-finite positions by name); an integer property must hold whole numbers in its range.
    """
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return values.astype(dtype)
    info = np.iinfo(dtype)
    if not (np.isfinite(values).all() and (values == np.round(values)).all()
            and (values >= info.min).all() and (values <= info.max).all()):
        raise PlyError(f"{name}: property {prop[:40]!r} holds values that are not {dtype.name} integers")
    return values.astype(dtype)


def _check_faces(faces: np.ndarray, nv: int, name: str) -> None:
    """Raise PlyError if a corner index is outside the vertex element."""
    if faces.size and (faces.min() < 0 or faces.max() >= nv):
        raise PlyError(f"{name}: face index out of range (0..{nv - 1})")


def header_comments(path: Path) -> list[str]:
    """Comment lines of a PLY header ([] if the file is missing or not a PLY)."""
    out = []
    try:
        with open(path, "rb") as fh:
            if fh.readline().strip() != b"ply":
                return []
            for _ in range(200):  # our headers have ~20 lines; stop on garbage
                line = fh.readline()
                if not line or line.strip() == b"end_header":
                    break
                if line.startswith(b"comment "):
                    out.append(line[8:].decode("ascii", "replace").strip())
    except OSError:
        return []
    return out
