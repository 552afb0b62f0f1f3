"""The bake cache directory (DESIGN.md section 4), written atomically, read with safe loaders.

::

    DIR/scene.json                    the exact scene that was baked
    DIR/manifest.json                 format, engine version, frames done, per-frame stats
    DIR/particles/particles_0001.ply  x y z vx vy vz (float32), id (uint32), material (uint8)
    DIR/surface/surface_0001.ply      written by the meshing stage
    DIR/state/checkpoint_0001.npz     full state for --resume (no pickle)
    DIR/sdf/sdf_<key>.npz             mesh collider distance fields (colliders/sdf_cache.py)

Every file goes through ``atomic.atomic_open`` (temp file + rename), and the
manifest is rewritten after the frame's files exist, so a killed bake leaves
every listed frame complete. A checkpoint is written *before* the manifest
says its frame is done, so resume never starts from a frame whose particles
are missing.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .atomic import atomic_open, write_json
from .errors import InputError
from .plyio import PlyError, read_ply, write_ply

MANIFEST_FORMAT = "sph_addon.cache/1"
PARTICLE_DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("vx", "<f4"), ("vy", "<f4"),
                           ("vz", "<f4"), ("id", "<u4"), ("material", "u1")])
_OWN_PATTERNS = (("particles", "particles_", ".ply"), ("surface", "surface_", ".ply"),
                 ("state", "checkpoint_", ".npz"), ("sdf", "sdf_", ".npz"))


class CacheDir:
    """Paths and readers/writers of one bake cache."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    # paths
    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    @property
    def scene_path(self) -> Path:
        return self.root / "scene.json"

    def particles_path(self, frame: int) -> Path:
        return self.root / "particles" / f"particles_{frame:04d}.ply"

    def surface_path(self, frame: int) -> Path:
        return self.root / "surface" / f"surface_{frame:04d}.ply"

    def checkpoint_path(self, frame: int) -> Path:
        return self.root / "state" / f"checkpoint_{frame:04d}.npz"

    # manifest
    def exists(self) -> bool:
        return self.manifest_path.exists()

    def read_manifest(self) -> dict[str, Any]:
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(str(self.root), "not a bake cache (no manifest.json)") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(str(self.manifest_path), f"unreadable manifest ({exc})") from None
        if data.get("format") != MANIFEST_FORMAT:
            raise InputError(str(self.manifest_path), f"unknown cache format {data.get('format')!r}")
        return data

    def new_manifest(self, scene_name: str, frame_start: int, frame_end: int) -> dict[str, Any]:
        return {"format": MANIFEST_FORMAT, "engine_version": __version__, "scene": scene_name,
                "frame_start": frame_start, "frame_end": frame_end, "frames_done": [], "removed": {},
                "stats": {}, "complete": False}

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json(self.manifest_path, manifest)

    # particles
    def write_particles(self, frame: int, x: np.ndarray, v: np.ndarray, ids: np.ndarray,
                        material: np.ndarray) -> None:
        rec = np.empty(len(x), PARTICLE_DTYPE)
        rec["x"], rec["y"], rec["z"] = x[:, 0], x[:, 1], x[:, 2]
        rec["vx"], rec["vy"], rec["vz"] = v[:, 0], v[:, 1], v[:, 2]
        rec["id"] = ids
        rec["material"] = material
        write_ply(self.particles_path(frame), rec, comments=[f"sph_addon {__version__} frame {frame}"])

    def read_particles(self, frame: int) -> np.ndarray:
        """The frame's particle records (structured array with PARTICLE_DTYPE fields)."""
        path = self.particles_path(frame)
        try:
            return read_ply(path).vertices
        except PlyError as exc:
            raise InputError(str(path), str(exc).split(": ", 1)[-1]) from None

    # checkpoints
    def write_checkpoint(self, frame: int, arrays: dict[str, np.ndarray], meta: dict) -> None:
        buf = io.BytesIO()
        payload = {f"a_{k}": v for k, v in arrays.items()}
        payload["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
        np.savez(buf, **payload)
        with atomic_open(self.checkpoint_path(frame), "wb") as fh:
            fh.write(buf.getvalue())

    def read_checkpoint(self, frame: int) -> tuple[dict[str, np.ndarray], dict]:
        path = self.checkpoint_path(frame)
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k[2:]: z[k] for k in z.files if k.startswith("a_")}
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(str(path), f"unreadable checkpoint ({exc})") from None
        return arrays, meta

    def prune_checkpoints(self, keep: int) -> None:
        """Delete checkpoints other than frame ``keep`` (only files this cache wrote)."""
        folder = self.root / "state"
        if not folder.is_dir():
            return
        for p in folder.glob("checkpoint_*.npz"):
            if p.name != self.checkpoint_path(keep).name:
                p.unlink(missing_ok=True)

    def remove_stale_temps(self) -> int:
        """Delete temporary files a killed writer left (``.name.XXXX.tmp``, see atomic.py)."""
        n = 0
        for folder in (self.root, *(self.root / f for f, _, _ in _OWN_PATTERNS)):
            if folder.is_dir():
                for p in folder.glob(".*.tmp"):
                    p.unlink(missing_ok=True)
                    n += 1
        return n

    def owned_files(self) -> list[Path]:
        """Every file a bake or meshing run writes here (what ``free`` deletes)."""
        files = [p for p in (self.manifest_path, self.scene_path) if p.exists()]
        files += [p for p in self.root.glob(".*.tmp")] if self.root.is_dir() else []
        for folder, prefix, suffix in _OWN_PATTERNS:
            d = self.root / folder
            if d.is_dir():
                files += [p for p in d.iterdir() if p.name.startswith(prefix) and p.name.endswith(suffix)]
        return sorted(files)

    def free(self) -> int:
        """Delete the files this tool wrote (and their folders if left empty); return how many."""
        files = self.owned_files()
        for p in files:
            p.unlink(missing_ok=True)
        for folder, _, _ in _OWN_PATTERNS:
            d = self.root / folder
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        return len(files)
