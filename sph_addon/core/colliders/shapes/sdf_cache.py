"""On-disk cache of mesh SDFs, keyed by the mesh data and the build settings.

A file ``sdf_<key>.npz`` holds ``params``, ``grid``, ``build_s``, ``mode`` and
the full ``key``; it is written atomically (``core.atomic.atomic_open``) and
read with ``np.load(..., allow_pickle=False)`` only (DESIGN.md section 4: caches
are never unpickled). A file that is unreadable or whose stored key differs is
treated as a miss and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zipfile
from pathlib import Path

import numpy as np

from ...cache.atomic import atomic_open
from ...numerics import config
from .sdf_mesh import MeshSDF, build_mesh_sdf

log = logging.getLogger(__name__)

# Bump when the builder changes its output for the same input, so old files miss.
FORMAT_VERSION = "sph_addon.sdf_mesh/2"  # 2: the solid grid margin grows with hole_closing


def sdf_key(vertices: np.ndarray, triangles: np.ndarray, settings: dict) -> str:
    """Hex SHA-256 of the mesh arrays (exact bytes, fixed dtypes and byte order) and settings."""
    v = np.ascontiguousarray(vertices, dtype="<f8")
    t = np.ascontiguousarray(triangles, dtype="<i8")
    hsh = hashlib.sha256()
    hsh.update(FORMAT_VERSION.encode())
    hsh.update(json.dumps(settings, sort_keys=True, default=repr).encode())
    hsh.update(repr((v.shape, t.shape)).encode())
    hsh.update(v.tobytes())
    hsh.update(t.tobytes())
    return hsh.hexdigest()


def _settings(cell_size: float, padding: float, thickness: float, mode: str, flip_normals: bool,
              hole_closing: float, reach=None) -> dict:
    """The build settings that change the field (the key's second half), in canonical types."""
    out = dict(cell_size=float(cell_size), padding=float(padding), thickness=float(thickness),
               mode=str(mode), flip_normals=bool(flip_normals), hole_closing=float(hole_closing))
    if reach is not None:
        # Only when clipped, so the keys of whole-mesh fields stay those stored before clipping.
        out["reach"] = [float(c) for c in np.concatenate([np.ravel(reach[0]), np.ravel(reach[1])])]
    return out


def _build_settings(settings: dict) -> dict:
    """``build_mesh_sdf`` keywords from a key's settings."""
    out = dict(settings)
    if "reach" in out:
        out["reach"] = (np.array(out["reach"][:3]), np.array(out["reach"][3:]))
    return out


def _keyable(v: np.ndarray, t: np.ndarray) -> bool:
    """Whether the arrays are well-formed enough to hash (else the builder reports the problem)."""
    return bool(v.ndim == 2 and t.ndim == 2 and v.size and t.size and np.issubdtype(t.dtype, np.integer))


def cache_path(cache_dir: str | os.PathLike, key: str) -> Path:
    """File of the field with ``key`` in ``cache_dir``."""
    return Path(cache_dir) / f"sdf_{key[:40]}.npz"


def store_sdf(path: Path, key: str, sdf: MeshSDF) -> None:
    """Write ``sdf`` atomically to ``path`` (plain arrays only: readable without pickle)."""
    with atomic_open(path, "wb") as fh:
        np.savez(fh, params=sdf.params, grid=sdf.grid, build_s=np.float64(sdf.build_s),
                 mode=np.str_(sdf.mode), key=np.str_(key))


def cached_mesh_sdf(vertices, triangles, cache_dir: str | os.PathLike, *, cell_size: float,
                    padding: float, thickness: float = 0.0, mode: str = "solid",
                    flip_normals: bool = False, hole_closing: float = 0.0,
                    memory_budget: int = config.DEFAULT_MEMORY_BUDGET, where: str = "mesh",
                    reach=None) -> MeshSDF:
    """``build_mesh_sdf`` through a cache directory.

    Parameters are those of ``build_mesh_sdf``, plus ``cache_dir`` (created if
    missing). ``memory_budget`` and ``where`` are not part of the key: they do
    not change the field. Returns the cached field (``build_s`` is that of the
    original build) or builds, stores and returns a new one.
    """
    settings = _settings(cell_size, padding, thickness, mode, flip_normals, hole_closing, reach)
    v = np.asarray(vertices)
    t = np.asarray(triangles)
    if not _keyable(v, t):
        # Let the builder produce the proper InputError.
        return build_mesh_sdf(v, t, memory_budget=memory_budget, where=where, **_build_settings(settings))
    key = sdf_key(v, t, settings)
    path = cache_path(cache_dir, key)
    hit = _load(path, key)
    if hit is not None:
        log.debug("%s: SDF cache hit %s", where, path.name)
        return hit
    sdf = build_mesh_sdf(v, t, memory_budget=memory_budget, where=where, **_build_settings(settings))
    store_sdf(path, key, sdf)
    log.debug("%s: SDF cached to %s", where, path)
    return sdf


class SDFCache:
    """A bake's SDF folder (``DIR/sdf``) with writes that can be held back.

    A :class:`~sph_addon.core.world.simulation.Simulation` is built before the bake
    has checked everything (a later collider or source may still be bad input),
    and a bake refused for bad input must write nothing. So while ``deferred``
    is true, fields found in the folder are reused but new ones are only kept
    in memory; :meth:`flush` writes them (and re-writes any that were read
    but have since been deleted, e.g. by ``--force``) and turns deferral off.

    Parameters
    ----------
    root : folder of the ``sdf_<key>.npz`` files (created on the first write).
    deferred : hold writes until :meth:`flush`.
    """

    def __init__(self, root: str | os.PathLike, deferred: bool = True):
        self.root = Path(root)
        self.deferred = deferred
        self._pending: dict[Path, tuple[str, MeshSDF]] = {}

    def get(self, vertices, triangles, *, cell_size: float, padding: float, thickness: float = 0.0,
            mode: str = "solid", flip_normals: bool = False, hole_closing: float = 0.0,
            memory_budget: int = config.DEFAULT_MEMORY_BUDGET, where: str = "mesh", reach=None) -> MeshSDF:
        """The field of this mesh and settings, from the folder or freshly built (see ``build_mesh_sdf``)."""
        settings = _settings(cell_size, padding, thickness, mode, flip_normals, hole_closing, reach)
        v = np.asarray(vertices)
        t = np.asarray(triangles)
        if not _keyable(v, t):
            return build_mesh_sdf(v, t, memory_budget=memory_budget, where=where, **_build_settings(settings))
        key = sdf_key(v, t, settings)
        path = cache_path(self.root, key)
        if path in self._pending:
            return self._pending[path][1]
        sdf = _load(path, key)
        if sdf is None:
            sdf = build_mesh_sdf(v, t, memory_budget=memory_budget, where=where, **_build_settings(settings))
        if self.deferred:
            self._pending[path] = (key, sdf)
        elif not path.is_file():
            store_sdf(path, key, sdf)
        return sdf

    def flush(self) -> int:
        """Write the held-back fields that are not on disk, stop deferring; return how many were written."""
        n = 0
        for path, (key, sdf) in self._pending.items():
            if not path.is_file():
                store_sdf(path, key, sdf)
                n += 1
        self._pending.clear()
        self.deferred = False
        return n


def _load(path: Path, key: str) -> MeshSDF | None:
    """The cached field at ``path`` if it exists, is well formed and has ``key``; else None."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) != key:
                return None
            params = np.ascontiguousarray(z["params"], np.float64)
            grid = np.ascontiguousarray(z["grid"], np.float32)
            build_s = float(z["build_s"])
            mode = str(z["mode"])
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        log.warning("ignoring unreadable SDF cache file %s (%s)", path, exc)
        return None
    if params.shape != (4,) or grid.ndim != 3 or min(grid.shape) < 2 or not np.isfinite(grid).all():
        log.warning("ignoring malformed SDF cache file %s", path)
        return None
    return MeshSDF(params=params, grid=grid, build_s=build_s, mode=mode)
