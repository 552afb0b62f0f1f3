"""Particle ages for the cache's particle frames, from the id counter.

Ids are handed out in emission order and never reused (``state.ParticleState.append``),
so the frame a particle first appeared in is a step function of its id: a list of
``[frame, next_id]`` pairs, one per written frame where the counter moved, says that the
ids from the previous pair's ``next_id`` up to this ``next_id`` first appeared at
``frame``. The list lives in the manifest (``"births"``), so a resumed bake continues it
and writes the same ages as an uninterrupted one; nothing per particle is stored in the
state. Ages have the resolution of a frame: a particle emitted during a frame's substeps
is 0 s old at that frame.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

MANIFEST_KEY = "births"


class Births:
    """The first frame of every id, as the ``[frame, next_id]`` pairs of the manifest."""

    def __init__(self, pairs: list[list[int]] | None = None):
        self.pairs: list[list[int]] = [list(p) for p in pairs or ()]

    @classmethod
    def from_manifest(cls, manifest: dict, where: str) -> Births | None:
        """The manifest's list; None for a bake started by a version that wrote no ages.

        Raises InputError (naming ``where``, the manifest) when the list is malformed.
        """
        pairs = manifest.get(MANIFEST_KEY)
        if pairs is None:
            return None
        ok = isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(k, int) and not isinstance(k, bool) for k in p)
            for p in pairs)
        if not ok or any(b[1] < a[1] or b[0] <= a[0] for a, b in zip(pairs, pairs[1:])):
            raise InputError(where, f"malformed manifest: {MANIFEST_KEY} must be increasing [frame, next_id] pairs")
        return cls(pairs)

    def truncate(self, frame: int) -> None:
        """Forget frames after ``frame`` (a resume rewrites them)."""
        self.pairs = [p for p in self.pairs if p[0] <= frame]

    def record(self, frame: int, next_id: int) -> None:
        """Note the id counter after ``frame`` was simulated (ids below it exist by then)."""
        if not self.pairs or next_id > self.pairs[-1][1]:
            self.pairs.append([int(frame), int(next_id)])

    def ages(self, ids: np.ndarray, frame: int, fps: float) -> np.ndarray:
        """Seconds since each id first appeared, at ``frame`` (float32, >= 0)."""
        if not self.pairs:
            return np.zeros(len(ids), np.float32)
        frames = np.array([p[0] for p in self.pairs], np.int64)
        next_ids = np.array([p[1] for p in self.pairs], np.int64)
        first = frames[np.minimum(np.searchsorted(next_ids, ids, side="right"), len(frames) - 1)]
        return np.maximum(frame - first, 0).astype(np.float32) / np.float32(fps)
