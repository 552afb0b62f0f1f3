"""The bake cache directory (DESIGN.md section 4), written atomically, read with safe loaders.

::

    DIR/scene.json                    the exact scene that was baked
    DIR/manifest.json                 format, engine version, frames done, per-frame stats
    DIR/particles/particles_0001.ply  x y z vx vy vz (float32), id (uint32), material (uint8),
                                      particle_id (uint32, = id), age (float32 s, if known),
                                      then the models' extras
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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class CacheSummary:
    """What a cache directory holds, for status lines (the Domain panel, ``blender --command sph info``)."""

    baked: bool                     # manifest.json exists (a bake started here)
    complete: bool = False          # every frame of the bake's range is done
    first_frame: int | None = None  # first frame done (Blender frame number)
    last_frame: int | None = None   # last frame done
    frames_done: int = 0            # how many frames are done
    checkpoint: int | None = None   # the frame a resume continues from
    frames_meshed: int = 0          # surface meshes written (surface/surface_NNNN.ply)


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

    def has_bake(self) -> bool:
        """Whether a bake, finished or not, is here (what a new bake must not overwrite unasked).

        A manifest, or particle frames without one: a bake killed before its first manifest
        write leaves frame files that are still this tool's and still someone's work.
        """
        return self.exists() or any(self.root.glob("particles/particles_*.ply"))

    def read_manifest(self) -> dict[str, Any]:
        """The manifest as written; raises InputError naming the file if it is missing or not ours."""
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(str(self.root), "not a bake cache (no manifest.json)") from None
        except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8 text
            raise InputError(str(self.manifest_path), f"unreadable manifest ({exc})") from None
        fmt = data.get("format") if isinstance(data, dict) else None
        if fmt != MANIFEST_FORMAT:
            raise InputError(str(self.manifest_path), f"unknown cache format {fmt!r}")
        return data

    def summary(self) -> CacheSummary:
        """The cache's state, read safely: ``baked=False`` when there is no bake here (never raises then).

        Raises
        ------
        InputError : the manifest exists but cannot be read, is not ours, or its frames,
            checkpoint or completion flag are malformed (the message names the file).
        """
        if not self.exists():
            return CacheSummary(baked=False)
        m = self.read_manifest()
        done, checkpoint, complete = m.get("frames_done"), m.get("checkpoint"), m.get("complete", False)
        # The manifest is untrusted input (DESIGN.md section 6): check the fields before using them.
        if not isinstance(done, list) or not all(_is_frame(f) for f in done):
            raise InputError(str(self.manifest_path), "malformed manifest: frames_done must be a list of frames")
        if checkpoint is not None and not _is_frame(checkpoint):
            raise InputError(str(self.manifest_path), "malformed manifest: checkpoint must be a frame number")
        if not isinstance(complete, bool):
            raise InputError(str(self.manifest_path), "malformed manifest: complete must be true or false")
        surfaces = self.root / "surface"
        meshed = sum(1 for _ in surfaces.glob("surface_*.ply")) if surfaces.is_dir() else 0
        return CacheSummary(baked=True, complete=complete, first_frame=min(done) if done else None,
                            last_frame=max(done) if done else None, frames_done=len(done),
                            checkpoint=checkpoint, frames_meshed=meshed)

    def new_manifest(self, scene_name: str, frame_start: int, frame_end: int) -> dict[str, Any]:
        return {"format": MANIFEST_FORMAT, "engine_version": __version__, "scene": scene_name,
                "frame_start": frame_start, "frame_end": frame_end, "frames_done": [], "removed": {},
                "stats": {}, "complete": False}

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json(self.manifest_path, manifest)

    # particles
    def write_particles(self, frame: int, x: np.ndarray, v: np.ndarray, ids: np.ndarray,
                        material: np.ndarray, extra: dict[str, tuple[np.ndarray, str]] | None = None,
                        age: np.ndarray | None = None) -> None:
        """Write a particle frame: the base fields, ``particle_id``, ``age`` when given (seconds since
        the particle first appeared, ``ages.Births``), then each ``extra`` name -> (values (n,), PLY dtype).

        ``particle_id`` repeats ``id`` under a name Blender's PLY importer keeps: Blender 4.2-4.5
        reserve the attribute name ``id`` for integers and drop the float attribute their
        importer would make of it, so a Python-free replay (Import PLY) gets the ids from it.
        The extras are the models' declared cache fields (``MaterialModel.cache_fields``).
        Readers find every field by name: files without the newer fields stay readable.
        """
        extra = {"particle_id": (ids, "<u4"), **({"age": (age, "<f4")} if age is not None else {}),
                 **(extra or {})}
        dtype = np.dtype(PARTICLE_DTYPE.descr + [(name, np.dtype(t).str) for name, (_, t) in extra.items()])
        rec = np.empty(len(x), dtype)
        rec["x"], rec["y"], rec["z"] = x[:, 0], x[:, 1], x[:, 2]
        rec["vx"], rec["vy"], rec["vz"] = v[:, 0], v[:, 1], v[:, 2]
        rec["id"] = ids
        rec["material"] = material
        for name, (values, _) in extra.items():
            rec[name] = values
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


def _is_frame(value: Any) -> bool:
    """A frame number as JSON gives it (bool is an int in Python, but not a frame)."""
    return isinstance(value, int) and not isinstance(value, bool)
