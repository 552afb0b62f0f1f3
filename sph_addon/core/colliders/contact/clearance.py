"""Which particles a substep's collisions can touch; the others are left out of the contact kernel.

A collider changes a particle only when the particle's surface comes within the collider's
stickiness range, or when the continuous test cannot certify its last path clear
(``response._contact`` returns at once otherwise). At the start of a substep each particle's
clearance to the static colliders is measured, c_i = min_k (d_k(x_i) - r - d_stick,k). Since
|grad d| ≤ L (L = 2, the bound ``response.collide`` uses: a trilinear grid of a distance field
reaches √3), d_k(x) ≥ d_k(x_start) - L |x - x_start|; so while

    L (|x - x_start| + |x - x_prev|) ≤ c_i

the gap at x is at least both d_stick,k and the continuous test's L |x - x_prev|, and the contact
kernel would leave the particle exactly as it is: skipping it changes no result, bit for bit.

Why: the leapfrog scheme collides at each of its micro-steps, up to 2^10 in a substep, and in a
pool most particles are far from every wall; colliding them all was the largest cost the
individual time steps could not save (``integrators.Leapfrog``).

Colliders that move or deform make no clearance: then every particle is collided, as before.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics import config
from ...numerics.kernel_cache import njit
from .response import placed_distances

# The bound on |grad d| of ``response.collide``'s certificate.
LIPSCHITZ = 2.0


@njit(**config.NJIT)
def _in_reach(x, x_prev, x_start, clearance, lipschitz, rows, all_rows, out, out_x, out_prev):
    """The particles (``rows``, or every row when ``all_rows``) that may touch a collider: their world
    indices into ``out`` in order, their ``x`` and ``x_prev`` into ``out_x`` and ``out_prev``; returns
    how many. Rows past ``clearance`` (particles added during the substep) always may."""
    n = x.shape[0] if all_rows else rows.shape[0]
    known = clearance.shape[0]
    m = 0
    for r in range(n):
        i = r if all_rows else rows[r]
        if i < known:
            moved = math.sqrt((x[i, 0] - x_start[i, 0]) ** 2 + (x[i, 1] - x_start[i, 1]) ** 2
                              + (x[i, 2] - x_start[i, 2]) ** 2)
            step = math.sqrt((x[i, 0] - x_prev[i, 0]) ** 2 + (x[i, 1] - x_prev[i, 1]) ** 2
                             + (x[i, 2] - x_prev[i, 2]) ** 2)
            if lipschitz * (moved + step) <= clearance[i]:
                continue
        out[m] = i
        for a in range(3):
            out_x[m, a] = x[i, a]
            out_prev[m, a] = x_prev[i, a]
        m += 1
    return m


@njit(**config.NJIT)
def put_rows(a, rows, values):
    """a[rows[k]] = values[k] for (n,3) arrays."""
    for k in range(rows.shape[0]):
        for c in range(3):
            a[rows[k], c] = values[k, c]


class Clearance:
    """Each particle's distance to the static colliders at the start of a substep (``measure``), and
    from it the particles a contact pass must look at (``rows``)."""

    def __init__(self):
        self._start = np.zeros((0, 3))
        self._clearance: np.ndarray | None = None

    def measure(self, x: np.ndarray, colliders, frame: float, radius: float) -> None:
        """At the start of a substep: positions ``x`` (n,3) m, the colliders posed at ``frame``,
        particle radius m. With a moving or deforming collider, or none, nothing is measured."""
        if not colliders or any(c.moving or c.rebuild is not None for c in colliders):
            self._clearance = None
            return
        clearance = np.full(len(x), np.inf)
        d = np.empty(len(x))
        for c in colliders:
            rot, pos = c.transform(frame)
            placed_distances(c.shape.code, c.shape.params, c.shape.grid, rot, pos, x, d)
            np.minimum(clearance, d - radius - c.stick_distance, out=clearance)
        self._clearance = clearance
        self._start = x.copy()

    def rows(self, idx: np.ndarray | None, x: np.ndarray, x_prev: np.ndarray):
        """The particles of ``idx`` (None: all) that a contact pass must look at now, with their ``x`` and
        ``x_prev`` (copies); (``idx``, ``x``, ``x_prev``) as given when nothing was measured this substep."""
        if self._clearance is None:
            return (idx, x, x_prev) if idx is None else (idx, x[idx], x_prev[idx])
        k = len(x) if idx is None else len(idx)
        out, out_x, out_prev = np.empty(k, np.int64), np.empty((k, 3)), np.empty((k, 3))
        rows = out[:0] if idx is None else np.ascontiguousarray(idx, np.int64)
        m = _in_reach(x, x_prev, self._start, self._clearance, LIPSCHITZ, rows, idx is None, out, out_x, out_prev)
        return out[:m], out_x[:m], out_prev[:m]
