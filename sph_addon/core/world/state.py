"""The particle world: structure-of-arrays state shared by every material.

One :class:`ParticleState` holds every particle of the scene, whatever its
material model, so liquid, goo and solids interact in one step (DESIGN.md
section 3). Arrays are reordered by the neighbour search for memory locality;
anything that must survive a reorder or a removal is either a per-particle
array in :attr:`ParticleState.arrays` (permuted together) or refers to other
particles by their stable ``id`` (never by index).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..numerics import config

# Per-particle arrays and their (trailing shape, dtype). Models may register more
# with ParticleState.add_array; all arrays are permuted and filtered together.
BASE_ARRAYS: dict[str, tuple[tuple[int, ...], np.dtype]] = {
    "x": ((3,), np.dtype(config.REAL)),        # position, m
    "v": ((3,), np.dtype(config.REAL)),        # velocity, m/s
    "x_prev": ((3,), np.dtype(config.REAL)),   # position at the start of the step, m
    "id": ((), np.dtype(np.int64)),            # stable id, unique for the life of the bake
    "material": ((), np.dtype(np.uint8)),      # index into the scene's materials
    "source": ((), np.dtype(np.int16)),        # index of the source that emitted it (bonding groups)
}


class ArrayAccess:
    """Named views of the per-particle arrays every stage uses (``self.arrays`` holds them)."""

    arrays: dict[str, np.ndarray]

    @property
    def n(self) -> int:
        return len(self.arrays["id"])

    @property
    def x(self) -> np.ndarray:
        return self.arrays["x"]

    @property
    def v(self) -> np.ndarray:
        return self.arrays["v"]

    @property
    def ids(self) -> np.ndarray:
        return self.arrays["id"]

    @property
    def material(self) -> np.ndarray:
        return self.arrays["material"]


@dataclass
class ParticleState(ArrayAccess):
    """All particles, as parallel arrays of equal length ``n``.

    Attributes
    ----------
    arrays : name -> array of shape (n, ...) (see ``BASE_ARRAYS``).
    next_id : the id the next emitted particle gets; ids are never reused.
    time : simulated time, s.
    removed : particles removed so far (left the domain), per material.
    """

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    next_id: int = 0
    time: float = 0.0
    removed: dict[int, int] = field(default_factory=dict)
    _specs: dict[str, tuple[tuple[int, ...], np.dtype]] = field(default_factory=lambda: dict(BASE_ARRAYS))
    _fill: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, (shape, dtype) in self._specs.items():
            if name not in self.arrays:
                self.arrays[name] = np.zeros((0, *shape), dtype)

    def add_array(self, name: str, trailing: tuple[int, ...], dtype, fill=0) -> np.ndarray:
        """Register a per-particle array (a model's extra state); existing particles get ``fill``."""
        if name in self._specs:
            return self.arrays[name]
        self._specs[name] = (tuple(trailing), np.dtype(dtype))
        self._fill[name] = fill
        arr = np.full((self.n, *trailing), fill, dtype)
        self.arrays[name] = arr
        return arr

    def append(self, x: np.ndarray, v: np.ndarray, material: int, source: int, **extra) -> np.ndarray:
        """Add particles at positions ``x`` (k,3) with velocities ``v`` (k,3); return their ids."""
        k = len(x)
        ids = np.arange(self.next_id, self.next_id + k, dtype=np.int64)
        self.next_id += k
        new = {
            "x": np.asarray(x, config.REAL), "v": np.asarray(v, config.REAL),
            "x_prev": np.asarray(x, config.REAL), "id": ids,
            "material": np.full(k, material, np.uint8), "source": np.full(k, source, np.int16),
        }
        new.update(extra)
        for name, (shape, dtype) in self._specs.items():
            part = new.get(name)
            if part is None:
                # New particles get the array's declared fill (e.g. -1 = "no spring"), not zero.
                part = np.full((k, *shape), self._fill.get(name, 0), dtype)
            self.arrays[name] = np.concatenate([self.arrays[name], np.asarray(part, dtype).reshape(k, *shape)])
        return ids

    def resize_trailing(self, name: str, width: int) -> np.ndarray:
        """Widen a (n, w) per-particle array to (n, width), new columns at the declared fill."""
        arr = self.arrays[name]
        grow = width - arr.shape[1]
        if grow > 0:
            arr = np.pad(arr, ((0, 0), (0, grow)), constant_values=self._fill.get(name, 0))
            self.arrays[name] = arr
            self._specs[name] = ((width,), arr.dtype)
        return arr

    def permute(self, order: np.ndarray) -> None:
        """Reorder every per-particle array into a new one: new[i] = old[order[i]] (in parallel: numpy's
        fancy indexing took 0.15 ms for each (n,3) array of the bench's dam break, every substep)."""
        from ..numerics.array_kernels import take_rows

        for name, arr in self.arrays.items():
            out = np.empty(arr.shape, arr.dtype)
            width = int(np.prod(arr.shape[1:]))
            take_rows(arr.reshape(len(arr), width), order, out.reshape(len(arr), width))
            self.arrays[name] = out

    def keep(self, mask: np.ndarray) -> None:
        """Remove particles where ``mask`` is False, counting removals per material."""
        if mask.all():
            return
        gone = self.material[~mask]
        for m, c in zip(*np.unique(gone, return_counts=True)):
            self.removed[int(m)] = self.removed.get(int(m), 0) + int(c)
        for name, arr in self.arrays.items():
            self.arrays[name] = arr[mask]

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())


def bytes_per_particle(extra: dict[str, tuple[tuple[int, ...], np.dtype]] | None = None) -> int:
    """Bytes one particle costs in the base arrays (and ``extra``), for memory estimates."""
    total = 0
    for shape, dtype in {**BASE_ARRAYS, **(extra or {})}.values():
        total += int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return total
