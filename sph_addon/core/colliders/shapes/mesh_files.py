"""Mesh colliders and sources in the scene file: declared fields, file paths, file checks.

Kept apart from the builder (``mesh_collider``) and free of numba so that scene
validation, the generated docs and the Blender UI can read the declarations
without compiling anything.

A mesh file is PLY or OBJ, referenced relative to the scene file (DESIGN.md
section 4). A *deforming* collider has one mesh per frame (written by the
Blender exporter after armatures and shape keys), named either by a pattern
in ``path`` (``meshes/cloth_{frame:04d}.ply``) or by an explicit
``frame_paths`` list of ``{frame, path}``, where each frame uses the last entry
at or before it (the first entry before that), so a mesh that only changes now
and then is listed once per change.
"""

from __future__ import annotations

import os
import re
import stat
import string
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...scene.params import Parameter, resolve

MESH_SUFFIXES = (".ply", ".obj")

MESH_DESCRIPTION = (
    "A triangle mesh (PLY or OBJ) turned into a signed distance field on a grid in the object's local "
    "frame (Clavet 2005, section 6.1). `solid`: the inside of a closed mesh is solid, robust to internal "
    "faces, duplicated or flipped triangles, intersecting parts, non-manifold edges and small holes. "
    "`shell`: the surface gets a thickness and collides from both sides (single planes, cloth, open "
    "bowls). Deforming meshes list one file per frame: `path` with `{frame:04d}`, or `frame_paths`, a "
    "list of `{frame, path}` (each frame uses the last entry at or before it); the field is rebuilt "
    "every frame and the time it takes is reported as `sdf_build_s` in the frame stats. With a `domain`, "
    "the grid covers only the part of the mesh the domain reaches over the bake, seen from the moving "
    "collider (plus the padding and 4 cells).")

MESH_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("path", "", label="Mesh File",
              description="PLY or OBJ file in the collider's local frame, relative to the scene file; a "
                          "deforming mesh may use {frame:04d} for the frame number."),
    Parameter("mode", "solid", choices=("solid", "shell"), label="Mode",
              description="solid: the inside of a closed mesh is solid; shell: the surface is thickened "
                          "and collides from both sides (open sheets, planes, cloth)."),
    Parameter("cell_size", 0.0, "m", 0.0, 10.0, label="Resolution",
              description="Cell size of the distance grid; 0 uses half the particle spacing."),
    Parameter("padding", 0.0, "m", 0.0, 100.0,
              description="Extra margin of the grid around the mesh; at least 2 cells are always kept, "
                          "plus a shell's thickness or a solid's hole_closing beyond one cell."),
    Parameter("thickness", 0.0, "m", 0.0, 10.0, label="Thickness",
              description="Shell: half-thickness on each side of the surface, 0 uses the particle "
                          "spacing, at least the cell size. Solid: inflates the solid (0 = none)."),
    Parameter("flip_normals", False, label="Flip Normals",
              description="Negate the field: for a mesh modelled inside out, or to keep particles inside "
                          "a closed container mesh."),
    Parameter("hole_closing", 0.0, "m", 0.0, 10.0, label="Hole Closing",
              description="Solid: holes narrower than about twice this are closed when finding the "
                          "inside; 0 uses half a cell."),
    Parameter("deforming", False, label="Deforming",
              description="Rebuild the field every frame from that frame's mesh (armatures, shape "
                          "keys); needs {frame:04d} in path or a frame_paths list."),
)

_FRAME_PATH_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("frame", 1, "", -100000, 1000000, description="First frame that uses this mesh."),
    Parameter("path", "", description="PLY or OBJ file, relative to the scene file."),
)


def is_deforming(p: dict[str, Any]) -> bool:
    """Whether a resolved mesh collider rebuilds its field every frame."""
    return bool(p["deforming"])


def _frame_fields(text: str, where: str) -> set[str]:
    """Names of the ``{...}`` fields of a path pattern; InputError if it is not a valid pattern."""
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(text) if name is not None]
        names = {name for name, _, _ in fields}
        # Only a zero-padded width: {frame:>99999999999d} would allocate a 100 GB string.
        if any(conv or not re.fullmatch(r"(0?[1-9]?[0-9]d?)?", spec or "") for _, spec, conv in fields):
            raise ValueError("only {frame}, {frame:04d} or {frame:04} are allowed")
        text.format(frame=1)
    except (ValueError, KeyError, IndexError, AttributeError) as exc:
        raise InputError(where, f"not a valid path pattern ({exc}); write the frame number as "
                                "{frame:04d}, and double braces {{ }} for literal ones") from None
    return names


def frame_file(p: dict[str, Any], frame: int) -> tuple[str, str]:
    """The mesh path text for ``frame`` and the JSON path suffix of the field that names it.

    Parameters
    ----------
    p : resolved mesh collider fields (``frame_paths`` already parsed by ``check_mesh_files``).
    frame : Blender frame number.

    Returns
    -------
    text : the path as written in the scene (pattern filled in), relative to the scene file.
    field : e.g. ``".path"`` or ``".frame_paths[3].path"``, for messages.
    """
    entries = p.get("frame_paths") or []
    if entries:
        k = 0
        for j, e in enumerate(entries):
            if e["frame"] <= frame:
                k = j
        return entries[k]["path"], f".frame_paths[{k}].path"
    if p["deforming"]:
        return p["path"].format(frame=frame), ".path"
    return p["path"], ".path"


def resolve_mesh_path(base_dir: Path, text: str) -> Path:
    """A mesh path from the scene file: relative to the scene's folder, or absolute."""
    return Path(base_dir) / text


def _stat(path: Path, where: str) -> os.stat_result | None:
    """``path``'s status, None when it does not exist; InputError at ``where`` for a path that cannot be used."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a name too long, a loop of links, a folder that is a file
        raise InputError(where, f"mesh file cannot be opened ({exc.strerror or exc}); check the path") from None
    except ValueError:  # no file system takes a NUL character in a name
        raise InputError(where, "the path contains a NUL character, which no file name can hold; correct the "
                                "path") from None


def check_file(path: Path, where: str) -> None:
    """Raise InputError at ``where`` unless ``path`` is a readable PLY or OBJ file."""
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise InputError(where, f"{path.name}: unsupported mesh format {path.suffix!r} (use .ply or .obj)")
    found = _stat(path, where)
    if found is None:
        raise InputError(where, f"mesh file not found: {path}")
    if not stat.S_ISREG(found.st_mode):
        raise InputError(where, f"not a file: {path}")
    if not os.access(path, os.R_OK):
        raise InputError(where, f"mesh file cannot be read (permission denied): {path}")


def check_mesh_files(p: dict[str, Any], item: dict[str, Any], where: str, base_dir: Path,
                     frames: tuple[int, int]) -> None:
    """Scene validation of a mesh collider: parse ``frame_paths`` into ``p``, check every file.

    Parameters
    ----------
    p : resolved declared fields; mutated: ``p["frame_paths"]`` becomes a list of
        ``{"frame": int, "path": str}`` (empty when absent).
    item : the collider's JSON object (for ``frame_paths``).
    where : JSON path of the collider, e.g. ``colliders[2]``.
    base_dir : folder of the scene file.
    frames : (first, last) frame of the bake; a deforming mesh needs a file for each.

    Raises
    ------
    InputError
        Naming ``colliders[k].path`` (or ``.frame_paths[i]...``): no path, a bad
        pattern, an unsupported suffix, a missing or unreadable file.
    """
    raw = item.get("frame_paths")
    entries: list[dict[str, Any]] = []
    if raw is not None:
        fw = f"{where}.frame_paths"
        if not p["deforming"]:
            raise InputError(fw, "only used by deforming meshes; set deforming to true or remove it")
        if not isinstance(raw, list) or not raw:
            raise InputError(fw, "expected a non-empty list of {frame, path}")
        for k, e in enumerate(raw):
            ew = f"{fw}[{k}]"
            r = resolve(_FRAME_PATH_PARAMETERS, e, ew)
            if not r["path"]:
                raise InputError(f"{ew}.path", "required: a PLY or OBJ file, relative to the scene file")
            if entries and r["frame"] <= entries[-1]["frame"]:
                raise InputError(f"{ew}.frame", "frame_paths must be in increasing frame order")
            entries.append(r)
    p["frame_paths"] = entries
    if not entries:
        if not p["path"]:
            raise InputError(f"{where}.path", "required: a PLY or OBJ file, relative to the scene file")
        if p["deforming"] and "frame" not in _frame_fields(p["path"], f"{where}.path"):
            raise InputError(f"{where}.path", "a deforming mesh needs one file per frame: put {frame:04d} in "
                                              "the path (e.g. meshes/cloth_{frame:04d}.ply) or give "
                                              "frame_paths")
        if p["deforming"] and _frame_fields(p["path"], f"{where}.path") - {"frame"}:
            raise InputError(f"{where}.path", "the only field allowed in a path pattern is {frame}")
    wanted = range(frames[0], frames[1] + 1) if p["deforming"] else range(frames[0], frames[0] + 1)
    checked: set[str] = set()
    missing: list[tuple[str, Path]] = []
    for f in wanted:
        text, suffix = frame_file(p, f)
        if text in checked:
            continue
        checked.add(text)
        path = resolve_mesh_path(base_dir, text)
        if path.suffix.lower() in MESH_SUFFIXES and _stat(path, where + suffix) is None:
            missing.append((suffix, path))
            continue
        check_file(path, where + suffix)
    if missing:
        suffix, path = missing[0]
        more = f" ({len(missing)} of the frames' files are missing)" if len(missing) > 1 else ""
        raise InputError(where + suffix, f"mesh file not found: {path}{more}")
