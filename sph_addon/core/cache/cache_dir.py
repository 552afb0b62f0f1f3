"""The bake cache directory (DESIGN.md section 4), written atomically, read with safe loaders.

::

    DIR/scene.json                    the exact scene that was baked
    DIR/manifest.json                 format, engine version, frames done, per-frame stats
    DIR/particles/particles_0001.ply  x y z vx vy vz (float32), id (uint32), material (uint8),
                                      particle_id (uint32, = id), age (float32 s, if known),
                                      then the models' extras
    DIR/surface/surface_0001.ply      written by the meshing stage
    DIR/whitewater/whitewater_0001.ply  spray, foam and bubbles, written by the whitewater stage
    DIR/deformed/source_0_0001.ply    a bound source mesh as its particles carry it (deformed_meshes.py)
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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ... import __version__
from ..errors import InputError
from .atomic import atomic_open, write_json
from .checks import check_bodies_file, check_deformed_vertices, check_manifest, check_particle_records, read_npz
from .jsonfile import parse_json_text
from .plyio import PlyError, read_ply, write_ply

MANIFEST_FORMAT = "sph_addon.cache/1"
PARTICLE_DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("vx", "<f4"), ("vy", "<f4"),
                           ("vz", "<f4"), ("id", "<u4"), ("material", "u1")])
_OWN_PATTERNS = (("particles", "particles_", ".ply"), ("surface", "surface_", ".ply"),
                 ("state", "checkpoint_", ".npz"), ("sdf", "sdf_", ".npz"), ("deformed", "source_", ".ply"),
                 ("bodies", "bodies_", ".json"), ("whitewater", "whitewater_", ".ply"))
# The cache's own folders: what bakes and meshing write into, and free deletes from.
CACHE_FOLDERS = tuple(folder for folder, _, _ in _OWN_PATTERNS)
# The exact names those writers give (a frame number, or a hex key for distance fields): free deletes
# these and nothing else, so a user's "particles_notes.ply" beside them survives.
_OWN_NAMES = {folder: re.compile(rf"{prefix}(-?\d+|[0-9a-f]{{8,64}}){re.escape(suffix)}")
              for folder, prefix, suffix in _OWN_PATTERNS}
# Deformed meshes are numbered by source and frame: source_<k>_<frame>.ply.
_OWN_NAMES["deformed"] = re.compile(r"source_\d+_-?\d+\.ply")


def refuse_links(root: str | os.PathLike, *targets: str | os.PathLike) -> None:
    """Refuse (InputError naming it) a symbolic link among the cache's folders or on the way to ``targets``,
    and a cache folder that is not a folder.

    Every command that writes into a cache calls this before writing: a ``surface`` folder
    linked to another cache would receive that command's files (``mesh --force`` overwrote
    the other folder's meshes). ``targets`` are the files a command is about to write; those
    outside ``root`` are the user's to place and are not checked. The cache root itself may
    be a link (a cache kept on another disk).
    """
    root = Path(root)
    paths = [root / folder for folder in CACHE_FOLDERS]
    for target in targets:
        try:  # abspath, not resolve: the links are what is looked for
            parts = Path(os.path.abspath(target)).relative_to(os.path.abspath(root)).parts
        except ValueError:
            continue
        paths += [root.joinpath(*parts[:k]) for k in range(1, len(parts) + 1)]
    for path in paths:
        if path.is_symlink():
            raise InputError(str(path), "is a symbolic link: a cache's folders and files must be real ones inside "
                                        "it, never written through a link (to keep a cache on another disk, "
                                        "link or name the cache directory itself)")
    for folder in CACHE_FOLDERS:
        # A file where a writer makes its folder failed at its first write, with a traceback.
        if (root / folder).exists() and not (root / folder).is_dir():
            raise InputError(str(root / folder), f"is not a folder: the cache keeps its {folder} files there; "
                                                 "move it out of the cache")


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
    frames_whitewater: int = 0      # whitewater frames written (whitewater/whitewater_NNNN.ply)


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

    def deformed_path(self, source: int, frame: int) -> Path:
        """The mesh of source ``source`` (its index in the scene) deformed at ``frame`` (``bind_mesh``)."""
        return self.root / "deformed" / f"source_{source}_{frame:04d}.ply"

    def read_deformed(self, source: int, frame: int, count: int | None = None) -> np.ndarray:
        """The (m, 3) float64 vertices of a deformed mesh, checked (``checks.check_deformed_vertices``):
        a PLY of ``x y z`` numbers, all finite, ``count`` of them when given; InputError naming the file."""
        path = self.deformed_path(source, frame)
        try:
            vertices = read_ply(path, exact=True).vertices
        except PlyError as exc:
            raise InputError(str(path), f"damaged deformed mesh ({str(exc).split(': ', 1)[-1]}); "
                                        "bake again with --force") from None
        return check_deformed_vertices(vertices, path, count)

    def checkpoint_path(self, frame: int) -> Path:
        return self.root / "state" / f"checkpoint_{frame:04d}.npz"

    def bodies_path(self, frame: int) -> Path:
        """The dynamic colliders' poses at ``frame`` (``bodies.Bodies.transforms``), JSON."""
        return self.root / "bodies" / f"bodies_{frame:04d}.json"

    def write_bodies(self, frame: int, bodies: list[dict]) -> None:
        write_json(self.bodies_path(frame), {"frame": frame, "bodies": bodies})

    def read_bodies(self, frame: int) -> list[dict]:
        """The poses :meth:`write_bodies` wrote for ``frame`` (InputError naming the file when unreadable)."""
        path = self.bodies_path(frame)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(path), f"cannot read the bodies' poses ({exc}); bake again") from exc
        return check_bodies_file(parse_json_text(text, str(path), "bodies file"), path)

    # manifest
    def exists(self) -> bool:
        return self.manifest_path.exists()

    def has_bake(self) -> bool:
        """Whether a bake, finished or not, is here (what a new bake must not overwrite unasked).

        A manifest listing frames, or particle frames without one: a bake killed before its
        first manifest write leaves frame files that are still this tool's and still someone's
        work. A manifest with no frame done (a bake stopped or failed before its first frame:
        a signal, a full disk) holds nothing to lose, so a plain bake may start over on it.
        """
        if any(self.root.glob("particles/particles_*.ply")):
            return True
        if not self.exists():
            return False
        try:
            return bool(self.read_manifest()["frames_done"])
        except InputError:
            return True  # unreadable: not ours to judge empty, and not ours to overwrite unasked

    def read_manifest(self) -> dict[str, Any]:
        """The manifest, checked (``cache_checks.check_manifest``); InputError naming the file if it
        is missing, not ours or damaged."""
        try:
            text = self.manifest_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(str(self.root), "not a bake cache (no manifest.json)") from None
        except (OSError, ValueError) as exc:  # ValueError: not UTF-8 text
            raise InputError(str(self.manifest_path), f"unreadable manifest ({exc})") from None
        try:
            data = parse_json_text(text, str(self.manifest_path), "manifest")
        except InputError as exc:
            raise InputError(exc.where, f"unreadable manifest ({exc.message})") from None
        return check_manifest(data, self.manifest_path, MANIFEST_FORMAT)

    def summary(self) -> CacheSummary:
        """The cache's state, read safely: ``baked=False`` when there is no bake here (never raises then).

        Raises
        ------
        InputError : the manifest exists but cannot be read, is not ours, or is damaged
            (the message names the file).
        """
        if not self.exists():
            return CacheSummary(baked=False)
        m = self.read_manifest()
        done, checkpoint, complete = m["frames_done"], m.get("checkpoint"), m.get("complete", False)
        surfaces = self.root / "surface"
        meshed = sum(1 for _ in surfaces.glob("surface_*.ply")) if surfaces.is_dir() else 0
        whitewater = self.root / "whitewater"
        foamed = sum(1 for _ in whitewater.glob("whitewater_*.ply")) if whitewater.is_dir() else 0
        return CacheSummary(baked=True, complete=complete, first_frame=min(done) if done else None,
                            last_frame=max(done) if done else None, frames_done=len(done),
                            checkpoint=checkpoint, frames_meshed=meshed, frames_whitewater=foamed)

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
        """The frame's particle records (PARTICLE_DTYPE fields and extras), checked before use."""
        path = self.particles_path(frame)
        try:
            vertices = read_ply(path, exact=True).vertices
        except PlyError as exc:
            raise InputError(str(path), str(exc).split(": ", 1)[-1]) from None
        check_particle_records(vertices, path)
        return vertices

    # checkpoints
    def write_checkpoint(self, frame: int, arrays: dict[str, np.ndarray], meta: dict) -> None:
        buf = io.BytesIO()
        payload = {f"a_{k}": v for k, v in arrays.items()}
        payload["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
        np.savez(buf, **payload)
        with atomic_open(self.checkpoint_path(frame), "wb") as fh:
            fh.write(buf.getvalue())

    def read_checkpoint(self, frame: int, max_bytes: int = 2**40) -> tuple[dict[str, np.ndarray], dict]:
        """A checkpoint's arrays and state record, read without pickle and with every header checked
        (``cache_checks.read_npz``); ``cache_checks.check_checkpoint`` checks them against a scene."""
        path = self.checkpoint_path(frame)
        members = read_npz(path, max_bytes)
        meta = members.pop("meta", None)
        if meta is None or meta.dtype != np.uint8 or meta.ndim != 1:
            raise InputError(str(path), "damaged checkpoint: no state record; bake again with --force")
        try:
            text = meta.tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(str(path), "damaged checkpoint: the state record is not UTF-8") from None
        arrays = {k[2:]: v for k, v in members.items() if k.startswith("a_")}
        return arrays, parse_json_text(text, str(path), "checkpoint's state record")

    def _own_folders(self) -> list[Path]:
        """The cache's subfolders that are real folders inside it: a symlinked ``particles`` (pointing
        anywhere) is not ours to clean (deletion never follows a link out of the cache root)."""
        return [self.root / f for f in CACHE_FOLDERS if (self.root / f).is_dir() and not (self.root / f).is_symlink()]

    def remove_stale_temps(self) -> int:
        """Delete temporary files a killed writer left (``.name.XXXX.tmp``, see atomic.py)."""
        n = 0
        for folder in ((self.root,) if self.root.is_dir() else ()) + tuple(self._own_folders()):
            for p in folder.glob(".*.tmp"):
                if p.is_file() and not p.is_symlink():
                    p.unlink(missing_ok=True)
                    n += 1
        return n

    def owned_files(self) -> list[Path]:
        """Every file a bake or meshing run writes here (what ``free`` deletes): regular files with
        the writers' exact names, in real folders of the cache; never a symlink or what it points to."""
        def regular(p: Path) -> bool:
            return p.is_file() and not p.is_symlink()

        files = [p for p in (self.manifest_path, self.scene_path) if regular(p)]
        files += [p for p in self.root.glob(".*.tmp") if regular(p)] if self.root.is_dir() else []
        for d in self._own_folders():
            files += [p for p in d.iterdir() if _OWN_NAMES[d.name].fullmatch(p.name) and regular(p)]
        return sorted(files)

    def free(self) -> int:
        """Delete the files this tool wrote (and their folders if left empty); return how many."""
        files = self.owned_files()
        for p in files:
            p.unlink(missing_ok=True)
        for d in self._own_folders():
            if not any(d.iterdir()):
                d.rmdir()
        return len(files)


def free_cache(root: str | os.PathLike) -> int:
    """Delete the files a bake and its meshing wrote in ``root``, under the cache's lock; return how many.

    The entry point for front ends (``free`` of the Blender operators and commands): a cache
    another process is baking or meshing is refused (``cache_lock.CacheBusy``), never emptied.
    """
    from .lock import lock_cache

    cache = CacheDir(root)
    if not cache.root.is_dir():
        return 0
    with lock_cache(cache.root, "free"):
        return cache.free()

