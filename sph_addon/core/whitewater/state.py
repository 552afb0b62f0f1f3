"""The whitewater particles of one frame, and their file ``DIR/whitewater/whitewater_####.ply``.

The file is the state a later frame continues from: per vertex ``x y z vx vy vz`` (float32), ``type``
(uint8: 0 spray, 1 foam, 2 bubble), ``age`` (float32, seconds spent as foam), ``lifetime`` (float32, the
foam seconds it has) and ``id`` (uint32, stable for the particle's life). The header's comments record
the stage's stamp (settings, sources, the previous frame's file), the frame, the next free id and the
count of each type (what ``info`` shows without reading the vertices).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..cache.plyio import PlyError, header_comments, read_ply, write_ply
from ..errors import InputError

WHITEWATER_DIR = "whitewater"
STAMP = "sph_addon.whitewater/1"
TYPE_NAMES = ("spray", "foam", "bubbles")
DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("vx", "<f4"), ("vy", "<f4"), ("vz", "<f4"),
                  ("type", "u1"), ("age", "<f4"), ("lifetime", "<f4"), ("id", "<u4")])


def whitewater_path(cache_dir: str | Path, frame: int) -> Path:
    """``DIR/whitewater/whitewater_####.ply`` (Blender frame, four digits at least)."""
    return Path(cache_dir) / WHITEWATER_DIR / f"whitewater_{frame:04d}.ply"


@dataclass
class WhitewaterState:
    """Whitewater particles: positions (m, 3) m, velocities (m, 3) m/s, kind (m,) uint8, age and lifetime
    (m,) s, ids (m,) uint32, and the next id to give."""

    x: np.ndarray
    v: np.ndarray
    kind: np.ndarray
    age: np.ndarray
    life: np.ndarray
    ids: np.ndarray
    next_id: int = 0

    @classmethod
    def empty(cls) -> WhitewaterState:
        return cls(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.uint8), np.zeros(0), np.zeros(0),
                   np.zeros(0, np.uint32), 0)

    def __len__(self) -> int:
        return len(self.x)

    def counts(self) -> tuple[int, int, int]:
        """(spray, foam, bubbles)."""
        return tuple(int(c) for c in np.bincount(self.kind, minlength=3)[:3])

    def take(self, keep: np.ndarray) -> WhitewaterState:
        """The particles where ``keep`` (a boolean mask) is true."""
        return WhitewaterState(self.x[keep], self.v[keep], self.kind[keep], self.age[keep], self.life[keep],
                               self.ids[keep], self.next_id)

    def records(self) -> np.ndarray:
        rec = np.empty(len(self), DTYPE)
        for a, n in enumerate("xyz"):
            rec[n] = self.x[:, a]
            rec["v" + n] = self.v[:, a]
        rec["type"], rec["age"], rec["lifetime"], rec["id"] = self.kind, self.age, self.life, self.ids
        return rec

    @classmethod
    def from_records(cls, rec: np.ndarray, next_id: int) -> WhitewaterState:
        return cls(np.column_stack([rec[n] for n in "xyz"]).astype(np.float64),
                   np.column_stack([rec["v" + n] for n in "xyz"]).astype(np.float64),
                   rec["type"].astype(np.uint8), rec["age"].astype(np.float64),
                   rec["lifetime"].astype(np.float64), rec["id"].astype(np.uint32), int(next_id))


def write_state(path: Path, state: WhitewaterState, comments: list[str]) -> WhitewaterState:
    """Write ``state`` atomically; return it as the file holds it (float32 values), which is what a run
    continuing from the file starts from, so that a split run equals an unsplit one byte for byte."""
    rec = state.records()
    counts = " ".join(f"{n} {c}" for n, c in zip(TYPE_NAMES, state.counts()))
    write_ply(path, rec, comments=[*comments, f"next_id {state.next_id}", f"counts {counts}"])
    return WhitewaterState.from_records(rec, state.next_id)


def comment_value(comments: list[str], key: str) -> str | None:
    """The text after ``key`` in the first comment that starts with it."""
    for c in comments:
        if c.startswith(key + " "):
            return c[len(key) + 1:]
    return None


def read_counts(path: Path) -> tuple[int, int, int] | None:
    """(spray, foam, bubbles) a whitewater file's header records, None when it records none."""
    text = comment_value(header_comments(path), "counts")
    try:
        words = text.split()
        return tuple(int(words[k]) for k in (1, 3, 5))
    except (AttributeError, IndexError, ValueError):
        return None


def read_state(path: Path) -> WhitewaterState:
    """The state a whitewater file holds, checked (InputError naming the file)."""
    try:
        data = read_ply(path, exact=True)
    except PlyError as exc:
        raise InputError(str(path), f"damaged whitewater file ({str(exc).split(': ', 1)[-1]}); run the "
                                    "whitewater stage with --force") from None
    rec = data.vertices
    names = set(rec.dtype.names or ())
    next_id = comment_value(data.comments, "next_id")
    if not set(DTYPE.names) <= names or next_id is None or not next_id.isdigit():
        raise InputError(str(path), "not a whitewater file of this version (fields or next_id missing); run the "
                                    "whitewater stage with --force")
    state = WhitewaterState.from_records(rec, int(next_id))
    if not (np.isfinite(state.x).all() and np.isfinite(state.v).all()) or (state.kind > 2).any():
        raise InputError(str(path), "damaged whitewater file (non-finite values or unknown types); run the "
                                    "whitewater stage with --force")
    return state


def file_digest(path: Path) -> str:
    """blake2b of a file's bytes (24 hex digits); a file read already, unchanged since (the same inode,
    size and modification time: every writer here replaces a file by a new one), is not read again."""
    st = os.stat(path)
    return _digest(str(path), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _digest(path: str, inode: int, size: int, mtime_ns: int) -> str:
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
