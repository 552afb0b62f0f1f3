"""Neighbour search: spatial hashing of cells of size h, counting sort, fixed-width lists.

Cells of edge h are keyed by a hash of their integer coordinates into a table
of 2^k buckets (Clavet 2005, thesis section 7.1: "cells of size h in a hash
table keyed by the 3D cell index", so the domain is unbounded). Particles are
counting-sorted by bucket and the caller reorders its arrays by the returned
order, so that particles close in space are close in memory.

Each particle gets every neighbour j != i with |x_j - x_i| < radius in a row of
a fixed-width (n, K) table. Full (both-direction) lists let every later kernel
gather into its own particle, which is race-free under ``prange`` and gives
the same floating-point result in every run (no atomics, no order dependence).

Two cells that hash to the same bucket are told apart by comparing the stored
integer cell coordinates, so a bucket visited twice never yields a neighbour
twice.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import config

_P1, _P2, _P3 = 73856093, 19349663, 83492791  # Teschner et al. 2003 hash primes


@njit(**config.NJIT)
def _hash(cx, cy, cz, mask):
    return ((cx * _P1) ^ (cy * _P2) ^ (cz * _P3)) & mask


@njit(**config.NJIT_PARALLEL)
def _cells(x, inv_cell, mask, cell, bucket):
    """Integer cell coordinates (n,3) int64 and bucket index (n,) int64 of each particle (mutates both)."""
    for i in prange(x.shape[0]):
        cx = np.int64(math.floor(x[i, 0] * inv_cell))
        cy = np.int64(math.floor(x[i, 1] * inv_cell))
        cz = np.int64(math.floor(x[i, 2] * inv_cell))
        cell[i, 0] = cx
        cell[i, 1] = cy
        cell[i, 2] = cz
        bucket[i] = _hash(cx, cy, cz, mask)


@njit(**config.NJIT)
def _counting_sort(bucket, nbuckets, start, order):
    """Stable counting sort of particles by bucket.

    Fills ``start`` (nbuckets+1,) with bucket offsets and ``order`` (n,) with
    the particle indices in bucket order (both mutated).
    """
    start[:] = 0
    for i in range(bucket.shape[0]):
        start[bucket[i] + 1] += 1
    for b in range(nbuckets):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    for i in range(bucket.shape[0]):
        b = bucket[i]
        order[fill[b]] = i
        fill[b] += 1


@njit(**config.NJIT_PARALLEL)
def _fill_lists(x, cell, start, mask, radius, nbr, count):
    """Fixed-width neighbour rows; rows longer than K are truncated and ``count`` says so.

    Parameters
    ----------
    x : (n,3) float64 positions, already in bucket order.
    cell : (n,3) int64 cell coordinates in the same order.
    start : (nbuckets+1,) bucket offsets into the sorted arrays.
    radius : search radius, m (<= cell size).
    nbr : (n,K) int32, mutated: neighbour indices of i in nbr[i, :count[i]].
    count : (n,) int32, mutated; may exceed K, in which case the caller grows K and calls again.
    """
    r2 = radius * radius
    width = nbr.shape[1]
    for i in prange(x.shape[0]):
        c = 0
        xi = x[i, 0]
        yi = x[i, 1]
        zi = x[i, 2]
        for dx in range(-1, 2):
            for dy in range(-1, 2):
                for dz in range(-1, 2):
                    cx = cell[i, 0] + dx
                    cy = cell[i, 1] + dy
                    cz = cell[i, 2] + dz
                    b = _hash(cx, cy, cz, mask)
                    for j in range(start[b], start[b + 1]):
                        if j == i or cell[j, 0] != cx or cell[j, 1] != cy or cell[j, 2] != cz:
                            continue
                        ex = x[j, 0] - xi
                        ey = x[j, 1] - yi
                        ez = x[j, 2] - zi
                        if ex * ex + ey * ey + ez * ez < r2:
                            if c < width:
                                nbr[i, c] = j
                            c += 1
        count[i] = c



@njit(**config.NJIT_PARALLEL)
def _dense_cells(x, inv_cell, lo, dims, cell, key):
    """Cell coordinates relative to ``lo`` (n,3) int64 and linear cell key (n,) int64 (both mutated).

    Keys run x fastest, so the three cells of a row along x are consecutive.
    """
    for i in prange(x.shape[0]):
        cx = np.int64(math.floor(x[i, 0] * inv_cell)) - lo[0]
        cy = np.int64(math.floor(x[i, 1] * inv_cell)) - lo[1]
        cz = np.int64(math.floor(x[i, 2] * inv_cell)) - lo[2]
        cell[i, 0] = cx
        cell[i, 1] = cy
        cell[i, 2] = cz
        key[i] = cx + dims[0] * (cy + dims[1] * cz)


@njit(**config.NJIT_PARALLEL)
def _fill_lists_dense(x, cell, start, dims, radius, nbr, count):
    """As :func:`_fill_lists` on a dense grid: 9 contiguous x-rows of 3 cells per particle.

    ``cell`` holds coordinates relative to the grid's lower corner, which has a
    one-cell margin, so every visited row exists.
    """
    r2 = radius * radius
    width = nbr.shape[1]
    for i in prange(x.shape[0]):
        c = 0
        xi = x[i, 0]
        yi = x[i, 1]
        zi = x[i, 2]
        for dz in range(-1, 2):
            for dy in range(-1, 2):
                row = (cell[i, 0] - 1) + dims[0] * ((cell[i, 1] + dy) + dims[1] * (cell[i, 2] + dz))
                for j in range(start[row], start[row + 3]):
                    if j == i:
                        continue
                    ex = x[j, 0] - xi
                    ey = x[j, 1] - yi
                    ez = x[j, 2] - zi
                    if ex * ex + ey * ey + ez * ez < r2:
                        if c < width:
                            nbr[i, c] = j
                        c += 1
        count[i] = c


class NeighborSearch:
    """Reusable hash grid; keeps its buffers between steps to avoid per-step allocation.

    Usage: ``order = ns.sort(x)`` (caller permutes its arrays by ``order``), then
    ``nbr, count = ns.lists(x_sorted, radius)``.
    """

    def __init__(self, cell_size: float, width: int = 48):
        if not (cell_size > 0 and math.isfinite(cell_size)):
            raise ValueError(f"cell_size must be positive, got {cell_size}")
        self.cell_size = float(cell_size)
        self.width = int(width)
        self._n = -1

    def _buffers(self, n: int) -> None:
        if n == self._n:
            return
        self._n = n
        nb = 1
        while nb < 2 * max(n, 1):
            nb *= 2
        self.nbuckets = nb
        self.mask = nb - 1
        self.start = np.zeros(nb + 1, np.int64)
        self.cell = np.zeros((n, 3), np.int64)
        self.bucket = np.zeros(n, np.int64)
        self.order = np.zeros(n, np.int64)
        self.nbr = np.zeros((n, self.width), np.int32)
        self.count = np.zeros(n, np.int32)

    def sort(self, x: np.ndarray) -> np.ndarray:
        """Bucket the particles; return the order that makes cells contiguous.

        A dense grid over the particles' bounding box (plus a one-cell margin) is
        used while it has at most ``8 n + 2^20`` cells, which keeps neighbouring
        cells close in memory; sparser scenes (a few far-flung droplets) fall back
        to the hash table, whose memory does not depend on the extent.
        """
        n = len(x)
        self._buffers(n)
        inv = 1.0 / self.cell_size
        self.dense = False
        if n:
            lo = np.floor(x.min(axis=0) * inv).astype(np.int64) - 1
            hi = np.floor(x.max(axis=0) * inv).astype(np.int64) + 1
            dims = hi - lo + 1
            ncell = int(np.prod(dims.astype(np.float64)))
            if ncell <= 8 * n + 2**20:
                self.dense = True
                self.dims = dims
                if len(self.start) < ncell + 3:
                    self.start = np.zeros(ncell + 3, np.int64)
                _dense_cells(x, inv, lo, dims, self.cell, self.bucket)
                # Two spare cells past the end so the last row's +3 never reads out of range.
                _counting_sort(self.bucket, ncell + 2, self.start[:ncell + 3], self.order)
                self.cell[:] = self.cell[self.order]
                return self.order
        if len(self.start) < self.nbuckets + 1:
            self.start = np.zeros(self.nbuckets + 1, np.int64)
        _cells(x, inv, self.mask, self.cell, self.bucket)
        _counting_sort(self.bucket, self.nbuckets, self.start[:self.nbuckets + 1], self.order)
        # Keep cell coordinates in the new particle order for the list pass.
        self.cell[:] = self.cell[self.order]
        return self.order

    def lists(self, x: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
        """Neighbour rows for positions ``x`` that are in the order returned by :meth:`sort`."""
        if radius > self.cell_size * (1 + 1e-12):
            raise ValueError("search radius exceeds the cell size")
        while True:
            if self.dense:
                _fill_lists_dense(x, self.cell, self.start, self.dims, radius, self.nbr, self.count)
            else:
                _fill_lists(x, self.cell, self.start, self.mask, radius, self.nbr, self.count)
            need = int(self.count.max()) if len(x) else 0
            if need <= self.width:
                return self.nbr, self.count
            self.width = int(need * 1.25) + 1
            self.nbr = np.zeros((len(x), self.width), np.int32)


def find_neighbors(x: np.ndarray, radius: float) -> list[np.ndarray]:
    """Neighbour index arrays of every particle of ``x`` (original order), for tests and tools."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError("x must be (n, 3)")
    if not np.isfinite(x).all():
        raise ValueError("x contains non-finite values")
    ns = NeighborSearch(radius)
    order = ns.sort(x)
    nbr, count = ns.lists(x[order], radius)
    out: list[np.ndarray] = [np.zeros(0, np.int64)] * len(x)
    for k in range(len(x)):
        out[order[k]] = np.sort(order[nbr[k, :count[k]]])
    return out
