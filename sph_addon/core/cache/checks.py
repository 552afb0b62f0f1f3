"""Checks of cache files before anything uses them: a cache is untrusted input (DESIGN.md section 6).

A cache may come from another machine, another version, a disk that filled up
or a hand that edited it. Everything read from it is checked against what the
writer (``cache.CacheDir``) produces and, for a checkpoint, against the scene
being resumed: shapes, dtypes, counts, unique ids, finite values. Sizes are
checked from headers before anything is allocated. A failed check is an
``InputError`` naming the file: the command exits 2 and nothing is "repaired".
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..world.state import BASE_ARRAYS

# ids are uint32 in the particle files (DESIGN.md section 4).
MAX_PARTICLES = 2**32 - 1
# The per-frame statistics the command line formats as numbers (``cli._INFO_TABLE``).
_NUMERIC_STATS = ("frame", "particles", "substeps", "max_speed", "density_error_mean", "density_error_max",
                  "density_iterations", "density_iterations_max", "density_capped", "kinetic_energy_j", "sdf_build_s",
                  "projection_iterations", "projection_iterations_max", "projection_capped")


def is_frame(value: Any) -> bool:
    """A frame number as JSON gives it (bool is an int in Python, but not a frame)."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 10**7


def _count(value: Any) -> bool:
    """A particle count or id bound as JSON gives it."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_PARTICLES


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_manifest(data: Any, path: Path, fmt: str) -> dict[str, Any]:
    """``data`` if it is a manifest as ``CacheDir`` writes it; InputError naming ``path`` otherwise."""
    def bad(what: str) -> InputError:
        return InputError(str(path), f"damaged manifest: {what}; bake again with --force")

    if not isinstance(data, dict):
        raise InputError(str(path), f"unknown cache format (the manifest is a {type(data).__name__}, "
                                    "not an object)")
    if data.get("format") != fmt:
        raise InputError(str(path), f"unknown cache format {data.get('format')!r}")
    done = data.get("frames_done")
    if not isinstance(done, list) or not all(map(is_frame, done)) or len(set(done)) != len(done):
        raise bad("frames_done must be a list of distinct frame numbers")
    checkpoint = data.get("checkpoint")
    if checkpoint is not None and not (is_frame(checkpoint) and checkpoint in done):
        raise bad("checkpoint must be the number of a frame done")
    if not isinstance(data.get("complete", False), bool):
        raise bad("complete must be true or false")
    start, end = data.get("frame_start"), data.get("frame_end")
    if not (is_frame(start) and is_frame(end) and start <= end):
        raise bad("frame_start and frame_end must be frame numbers in order")
    if not all(start <= f <= end for f in done):
        raise bad(f"frames_done lists frames outside {start}-{end}")
    for key in ("scene", "engine_version"):
        if not isinstance(data.get(key), str):
            raise bad(f"{key} must be a string")
    stats = data.get("stats", {})
    if not isinstance(stats, dict):
        raise bad("stats must be an object")
    for frame, s in stats.items():
        if not isinstance(s, dict):
            raise bad(f"stats[{frame!r}] must be an object")
        for key in _NUMERIC_STATS:
            if key in s and not _number(s[key]):
                raise bad(f"stats[{frame!r}].{key} must be a number")
        for key in ("bounds_min", "bounds_max"):
            if key in s and not (isinstance(s[key], list) and len(s[key]) == 3 and all(map(_number, s[key]))):
                raise bad(f"stats[{frame!r}].{key} must be 3 numbers")
        if s.get("front_m") is not None and not _number(s["front_m"]):
            raise bad(f"stats[{frame!r}].front_m must be a number or null")
    removed = data.get("removed") or {}
    if not isinstance(removed, dict) or not all(is_frame(v) for v in removed.values()):
        raise bad("removed must map material names to counts")
    vertices = data.get("deformed_vertices", {})  # deformed_meshes.DEFORMED_KEY
    if not (isinstance(vertices, dict) and all(k.isdigit() and _count(v) for k, v in vertices.items())):
        raise bad("deformed_vertices must map source indices to vertex counts")
    derived = data.get("derived") or {}
    if not isinstance(derived, dict):
        raise bad("derived must be an object")
    return data


def read_npz(path: Path, max_bytes: int) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` written by ``np.savez``, each header checked before its data is read.

    Refused (InputError naming ``path``): not a zip, a member that is not ``.npy``, object
    (pickle) arrays, a header claiming more elements than the member holds, or more than
    ``max_bytes`` in all.
    """
    out: dict[str, np.ndarray] = {}
    total = 0
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    raise InputError(str(path), f"damaged checkpoint: unexpected member {info.filename[:60]!r}")
                with z.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    if version not in ((1, 0), (2, 0)):
                        raise ValueError(f"npy format {version} is not one np.savez writes here")
                    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shape, fortran, dtype = read_header(fh)
                    if dtype.hasobject:
                        raise InputError(str(path), "damaged checkpoint: object arrays are never loaded (no pickle)")
                    nbytes = math.prod(shape) * dtype.itemsize
                    total += nbytes
                    if nbytes > info.file_size or total > max_bytes:
                        raise InputError(str(path), f"damaged checkpoint: {info.filename[:60]!r} claims shape "
                                                    f"{shape} ({nbytes:,} bytes) in a member of {info.file_size:,} "
                                                    "bytes")
                    data = bytearray(fh.read(nbytes))  # writable: the restored state is stepped in place
                if len(data) != nbytes:
                    raise InputError(str(path), f"damaged checkpoint: {info.filename[:60]!r} is truncated")
                arr = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")
                out[info.filename[:-4]] = arr
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(str(path), "the checkpoint is missing; bake again with --force") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError) as exc:
        raise InputError(str(path), f"damaged checkpoint ({type(exc).__name__}: {str(exc)[:80]}); "
                                    "bake again with --force") from None
    return out


def check_checkpoint(arrays: dict[str, np.ndarray], meta: Any, specs: dict[str, tuple[tuple[int, ...], np.dtype]],
                     frame: int, materials: int, inflows: int, path: Path) -> None:
    """A checkpoint's arrays and scalars against the simulation that will restore it.

    Parameters
    ----------
    arrays : name -> array, as read.
    meta : the decoded ``meta`` JSON.
    specs : the simulation's per-particle arrays: name -> (trailing shape, dtype).
    frame : the frame the manifest says this checkpoint is.
    materials, inflows : the scene's counts.
    """
    def bad(what: str) -> InputError:
        return InputError(str(path), f"damaged checkpoint: {what}; bake again with --force")

    if not isinstance(meta, dict):
        raise bad("no state record")
    if meta.get("frame") != frame or not is_frame(meta.get("frame")):
        raise bad(f"it is not the checkpoint of frame {frame}")
    if not _number(meta.get("time")):
        raise bad("the time is not a finite number")
    next_id = meta.get("next_id")
    if not _count(next_id):
        raise bad("next_id is not a particle count")
    removed = meta.get("removed")
    if not isinstance(removed, dict) or not all(
            str(k).isdigit() and int(k) < materials and is_frame(v) and v >= 0 for k, v in removed.items()):
        raise bad("removed must map material indices to counts")
    volumes = meta.get("inflow_volume")
    if not isinstance(volumes, list) or len(volumes) != inflows or not all(map(_number, volumes)):
        raise bad(f"inflow_volume must hold {inflows} numbers")
    if not isinstance(meta.get("models", {}), dict):
        raise bad("models must be an object")
    watch = meta.get("watch", {})
    if not (isinstance(watch, dict) and (watch.get("budget") is None or _number(watch["budget"]))
            and _number(watch.get("scale_per_kg", 0.0)) and _count(watch.get("seen_id", 0))):
        raise bad("watch must hold the energy budget (numbers) and the last id seen")
    if not _count(meta.get("substeps", 0)):
        raise bad("substeps must be the last frame's substep count")
    missing = sorted(set(specs) - set(arrays))
    unknown = sorted(set(arrays) - set(specs))
    if missing or unknown:
        raise bad(f"arrays missing {missing[:4]} or not of this scene {unknown[:4]}")
    n = len(arrays["id"]) if arrays["id"].ndim else -1
    for name, (trailing, dtype) in specs.items():
        a = arrays[name]
        # Trailing widths of slot arrays (springs) grow during a bake; their rank does not.
        same = a.shape[1:] == tuple(trailing) or (len(trailing) == 1 and a.ndim == 2 and a.shape[1] >= trailing[0])
        if a.ndim == 0 or len(a) != n or not same or a.dtype != np.dtype(dtype):
            raise bad(f"array {name!r} is {a.dtype}{list(a.shape)}, expected {np.dtype(dtype)}[{n}, "
                      f"{', '.join(map(str, trailing))}]")
        # Only the world's own arrays: a model may fill its arrays with NaN for "not set" (ArraySpec.fill).
        if name in BASE_ARRAYS and a.dtype.kind == "f" and not np.isfinite(a).all():
            raise bad(f"array {name!r} holds NaN or infinite values")
    ids = arrays["id"]
    if n and (ids.min() < 0 or ids.max() >= next_id):
        raise bad(f"particle ids outside 0..{next_id - 1}")
    if len(np.unique(ids)) != n:
        raise bad("particle ids are not unique")
    if n and arrays["material"].max() >= materials:
        raise bad(f"material indices beyond the scene's {materials} materials")


def check_particle_records(vertices: np.ndarray, path: Path) -> None:
    """A particle frame as ``CacheDir.write_particles`` writes it: fields, dtypes, finite, unique ids."""
    names = vertices.dtype.names or ()
    need = {"x": "f", "y": "f", "z": "f", "vx": "f", "vy": "f", "vz": "f", "id": "iu", "material": "iu"}
    for name, kinds in need.items():
        if name not in names or vertices.dtype[name].kind not in kinds:
            raise InputError(str(path), f"damaged particle frame: no {name!r} property of the right type")
    for name in ("x", "y", "z", "vx", "vy", "vz"):
        if not np.isfinite(vertices[name]).all():
            raise InputError(str(path), f"damaged particle frame: {name!r} holds NaN or infinite values")
    if len(np.unique(vertices["id"])) != len(vertices):
        raise InputError(str(path), "damaged particle frame: particle ids are not unique")


def check_deformed_vertices(vertices: np.ndarray, path: Path, count: int | None) -> np.ndarray:
    """A deformed mesh as ``DeformedMeshes.write`` writes it (``x y z`` float32, finite, ``count`` vertices
    when the source's count is known): its (m, 3) float64 positions; InputError naming ``path`` otherwise."""
    def bad(what: str) -> InputError:
        return InputError(str(path), f"damaged deformed mesh: {what}; bake again with --force")

    if vertices.dtype.names != ("x", "y", "z") or any(vertices.dtype[k].kind != "f" for k in "xyz"):
        raise bad(f"its vertices hold {', '.join(vertices.dtype.names or ())}, not x y z numbers")
    if count is not None and len(vertices) != count:
        raise bad(f"{len(vertices)} vertices where its source has {count}")
    x = np.column_stack([vertices["x"], vertices["y"], vertices["z"]]).astype(np.float64)
    if not np.isfinite(x).all():
        raise bad("a vertex holds NaN or infinite values")
    return x


# A body's pose in a bodies file (``CacheDir.write_bodies``): field -> how many numbers.
_BODY_POSE = {"location": 3, "rotation_quaternion": 4, "center_of_mass": 3, "velocity": 3, "angular_velocity": 3}


def check_bodies_file(data: Any, path: Path) -> list[dict]:
    """The poses of a bodies file as ``CacheDir.write_bodies`` writes it: an object whose ``bodies`` is a
    list of objects, each a ``name``, a ``collider`` index and its pose as finite numbers."""
    def bad(what: str) -> InputError:
        return InputError(str(path), f"damaged bodies file: {what}; bake again")

    if not isinstance(data, dict) or not isinstance(data.get("bodies"), list):
        raise bad("bodies must be a list of poses")
    for k, b in enumerate(data["bodies"]):
        if not isinstance(b, dict):
            raise bad(f"bodies[{k}] must be an object")
        if not isinstance(b.get("name"), str):
            raise bad(f"bodies[{k}].name must be a string")
        if not _count(b.get("collider")):
            raise bad(f"bodies[{k}].collider must be a collider index")
        for name, size in _BODY_POSE.items():
            v = b.get(name)
            if not (isinstance(v, list) and len(v) == size and all(map(_number, v))):
                raise bad(f"bodies[{k}].{name} must be {size} finite numbers")
    return data["bodies"]
