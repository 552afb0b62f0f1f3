"""Neighbour search: cells of size h grouped in supercells, counting sort, fixed-width lists.

Cells of edge h (Clavet 2005, thesis section 7.1) are grouped in supercells of
2 x 2 x 2 cells. Each particle gets the key ``supercell * 8 + subcell`` and the
particles are counting-sorted by it, so that every cell, and every supercell,
is a contiguous range (the caller reorders its arrays by the returned order:
particles close in space end up close in memory).

Supercells are indexed on a dense grid over the particles' bounding box while
that grid is small, and through a hash of their integer coordinates otherwise
(a few far-flung droplets must not allocate a huge grid; the domain is
unbounded). Cells that share a hash bucket are told apart by comparing exact
integer cell coordinates, so a bucket visited twice never yields a neighbour
twice.

Each particle gets every neighbour j != i with |x_j - x_i| < radius in a row of
a fixed-width (n, K) table. Full (both-direction) lists let later kernels
gather into their own particle, race-free under ``prange``.

**Colours.** A supercell's colour is the parity of its coordinates (8 colours).
Two particles of one colour in different supercells are at least 2h apart, so
their neighbourhoods are disjoint: a Gauss-Seidel stage can visit the colours
in turn and, within a colour, the supercells in parallel, each supercell's
particles in order, with no races and a deterministic result. 8 colours means
8 parallel launches per sweep (27 with single cells), which matters on a busy
machine where every launch waits for the slowest thread.

**Balanced units.** ``prange`` gives each thread one equal block of the
iterations. Over the supercells or cells of the bounding box that leaves one
thread with most of the particles as soon as they fill one side of it (a dam
break's water on the floor), so the parallel loops over cells and supercells run
over units of about equal particle counts instead, a few per thread (``key_units``;
``colour_buckets`` and ``colour_units`` for each colour's supercells). Which thread
takes a unit does not change the result.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..numerics import config
from ..numerics.array_kernels import bounds, take_rows
from ..numerics.kernel_cache import njit, prange

_P1, _P2, _P3 = 73856093, 19349663, 83492791  # Teschner et al. 2003 hash primes
N_COLOURS = 8
# Parallel work units per thread in the balanced loops (NeighborSearch.sort).
UNITS_PER_THREAD = 4
# Candidates (particles of a cell's 27 neighbour cells) the lists' work arrays hold at first; grown if short.
CANDIDATES = 512


@njit(**config.NJIT)
def _super_index(sx, sy, sz, dense, sdims, mask):
    """Index of a supercell: linear on the dense grid, hashed otherwise."""
    if dense:
        return sx + sdims[0] * (sy + sdims[1] * sz)
    return ((sx * _P1) ^ (sy * _P2) ^ (sz * _P3)) & mask


@njit(**config.NJIT)
def _cell_key(cx, cy, cz, dense, sdims, mask):
    """Sort key of cell (cx, cy, cz): its supercell's index times 8 plus its place in the supercell."""
    return _super_index(cx >> 1, cy >> 1, cz >> 1, dense, sdims, mask) * 8 + (cx & 1) + 2 * (cy & 1) + 4 * (cz & 1)


@njit(**config.NJIT_PARALLEL)
def _keys(x, inv_cell, lo, dense, sdims, mask, cell, key, colour):
    """Cell coordinates (n,3) int64 (relative to ``lo``), sort key (n,) and colour (n,) of each particle."""
    for i in prange(x.shape[0]):
        cx = np.int64(math.floor(x[i, 0] * inv_cell)) - lo[0]
        cy = np.int64(math.floor(x[i, 1] * inv_cell)) - lo[1]
        cz = np.int64(math.floor(x[i, 2] * inv_cell)) - lo[2]
        cell[i, 0] = cx
        cell[i, 1] = cy
        cell[i, 2] = cz
        key[i] = _cell_key(cx, cy, cz, dense, sdims, mask)
        colour[i] = ((cx >> 1) & 1) + 2 * ((cy >> 1) & 1) + 4 * ((cz >> 1) & 1)


@njit(**config.NJIT)
def _counting_sort(key, nkeys, start, order):
    """Stable counting sort of particles by key.

    Fills ``start`` (nkeys+1,) with key offsets and ``order`` (n,) with the
    particle indices in key order (both mutated).
    """
    start[:] = 0
    for i in range(key.shape[0]):
        start[key[i] + 1] += 1
    for b in range(nkeys):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    for i in range(key.shape[0]):
        b = key[i]
        order[fill[b]] = i
        fill[b] += 1


@njit(**config.NJIT)
def _colour_schedule(bucket_start, colour, n_colours, buckets, units):
    """Each colour's buckets, split into runs of about equal particle counts, for balanced sweeps.

    Fills ``buckets`` with the non-empty buckets of colour 0, then of colour 1, ... (ascending
    within a colour; a hashed bucket holding particles of several colours is listed under each)
    and ``units`` (n_colours, U+1) with offsets into it: unit u of colour c is
    buckets[units[c, u]:units[c, u+1]], and each unit holds about 1/U of the colour's particles.
    """
    nb = bucket_start.shape[0] - 1
    n_units = units.shape[1] - 1
    first = np.zeros(n_colours + 1, np.int64)
    weight = np.zeros(n_colours, np.int64)
    mask = np.zeros(nb, np.int64)
    for b in range(nb):
        m = 0
        for i in range(bucket_start[b], bucket_start[b + 1]):
            m |= 1 << colour[i]
        mask[b] = m
        if m == 0:
            continue
        for c in range(n_colours):
            if (m >> c) & 1:
                first[c + 1] += 1
                weight[c] += bucket_start[b + 1] - bucket_start[b]
    for c in range(n_colours):
        first[c + 1] += first[c]
    fill = first[:-1].copy()
    for b in range(nb):
        if mask[b] == 0:
            continue
        for c in range(n_colours):
            if (mask[b] >> c) & 1:
                buckets[fill[c]] = b
                fill[c] += 1
    for c in range(n_colours):
        units[c, 0] = first[c]
        u = 1
        held = 0
        for t in range(first[c], first[c + 1]):
            b = buckets[t]
            held += bucket_start[b + 1] - bucket_start[b]
            while u < n_units and held * n_units >= u * weight[c]:
                units[c, u] = t + 1
                u += 1
        while u <= n_units:
            units[c, u] = first[c + 1]
            u += 1


@njit(**config.NJIT_PARALLEL)
def _fill_lists(x, cell, start, dense, sdims, mask, radius, nbr, count):
    """Fixed-width neighbour rows; rows longer than K are truncated and ``count`` says so.

    Parameters
    ----------
    x : (n,3) float64 positions, already in key order.
    cell : (n,3) int64 cell coordinates in the same order.
    start : (nkeys+1,) key offsets into the sorted arrays.
    dense, sdims, mask : supercell indexing (see ``_super_index``).
    radius : search radius, m (<= cell size).
    nbr : (n,K) int32, mutated: neighbour indices of i in nbr[i, :count[i]].
    count : (n,) int32, mutated; may exceed K, then the caller grows K and calls again.
    """
    r2 = radius * radius
    width = nbr.shape[1]
    for i in prange(x.shape[0]):
        c = 0
        xi = x[i, 0]
        yi = x[i, 1]
        zi = x[i, 2]
        for dz in range(-1, 2):
            cz = cell[i, 2] + dz
            for dy in range(-1, 2):
                cy = cell[i, 1] + dy
                for dx in range(-1, 2):
                    cx = cell[i, 0] + dx
                    b = _cell_key(cx, cy, cz, dense, sdims, mask)
                    for j in range(start[b], start[b + 1]):
                        if j == i:
                            continue
                        # A dense key is one cell; a hashed one may hold other cells too.
                        if not dense and (cell[j, 0] != cx or cell[j, 1] != cy or cell[j, 2] != cz):
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
def _fill_lists_by_cell(x, cell, start, sdims, radius, key_units, nbr, count):
    """Dense-grid version of :func:`_fill_lists` that works cell by cell.

    A cell's ~8 particles share their 27 neighbour cells: the candidates are
    gathered once per cell into contiguous local arrays, then every particle of
    the cell is tested against them. Same rows, same order, as the per-particle
    kernel (tested against brute force), at a fraction of the key computations
    and scattered reads. ``key_units`` (U+1,) splits the keys into runs of about
    equal particle counts, one parallel iteration each (see :meth:`NeighborSearch.sort`).
    """
    r2 = radius * radius
    width = nbr.shape[1]
    for u in prange(key_units.shape[0] - 1):
        # Work arrays per unit, grown when a neighbourhood holds more candidates: allocated per cell,
        # their ~20,000 allocations a substep took the lists from 2.4 to 2.7 ms on the bench's dam break.
        keys = np.empty(27, np.int64)
        cand = np.empty(CANDIDATES, np.int64)
        pos = np.empty((3, CANDIDATES))
        d2 = np.empty(CANDIDATES)
        row = np.empty(CANDIDATES, np.int32)
        for key in range(key_units[u], key_units[u + 1]):
            a = start[key]
            if a == start[key + 1]:
                continue
            total = 0
            for t in range(27):
                k = _cell_key(cell[a, 0] + t % 3 - 1, cell[a, 1] + (t // 3) % 3 - 1, cell[a, 2] + t // 9 - 1, True,
                              sdims, 0)
                keys[t] = k
                total += start[k + 1] - start[k]
            if total > cand.shape[0]:
                cand = np.empty(2 * total, np.int64)
                pos = np.empty((3, 2 * total))
                d2 = np.empty(2 * total)
                row = np.empty(2 * total, np.int32)
            _fill_cell(x, start, r2, width, a, start[key + 1], keys, total, cand, pos, d2, row, nbr, count)


@njit(**config.NJIT)
def _fill_cell(x, start, r2, width, a, b, keys, total, cand, pos, d2, row, nbr, count):
    """The rows of particles a..b-1, one cell, whose 27 neighbour cells are ``keys`` holding ``total``
    particles (see :func:`_fill_lists_by_cell`; the other arrays are its work arrays)."""
    # The cell's particles' bounding box: a candidate at least the radius from it is no particle's
    # neighbour (its distance to any of them is no smaller, in floating point too, rounding being
    # monotonic), so it is left out: 38 % of the candidates on the bench's dam break (the box of a
    # cell's particles is narrower than the cell), and their tests below (lists 2.4 -> 2.0 ms), the
    # same rows.
    lo0 = hi0 = x[a, 0]
    lo1 = hi1 = x[a, 1]
    lo2 = hi2 = x[a, 2]
    for i in range(a + 1, b):
        lo0 = min(lo0, x[i, 0])
        hi0 = max(hi0, x[i, 0])
        lo1 = min(lo1, x[i, 1])
        hi1 = max(hi1, x[i, 1])
        lo2 = min(lo2, x[i, 2])
        hi2 = max(hi2, x[i, 2])
    # The neighbour cells' particles near that box gathered in one contiguous list.
    m = 0
    for t in range(27):
        k = keys[t]
        for j in range(start[k], start[k + 1]):
            px = x[j, 0]
            py = x[j, 1]
            pz = x[j, 2]
            ex = max(lo0 - px, 0.0, px - hi0)
            ey = max(lo1 - py, 0.0, py - hi1)
            ez = max(lo2 - pz, 0.0, pz - hi2)
            cand[m] = j
            pos[0, m] = px
            pos[1, m] = py
            pos[2, m] = pz
            m += ex * ex + ey * ey + ez * ez < r2
    total = m
    # Distances first, in a loop of their own that the compiler vectorises, then the rows:
    # the same rows in the same order, 9.4 -> 6.9 ms for the dam break's 24,000 particles.
    for i in range(a, b):
        c = 0
        xi = x[i, 0]
        yi = x[i, 1]
        zi = x[i, 2]
        for t in range(total):
            ex = pos[0, t] - xi
            ey = pos[1, t] - yi
            ez = pos[2, t] - zi
            d2[t] = ex * ex + ey * ey + ez * ez
        # Every candidate is written and the count advances by the test: no branch to mispredict
        # (a sixth of the candidates are neighbours).
        for t in range(total):
            j = cand[t]
            row[c] = j
            c += (d2[t] < r2) & (j != i)
        for t in range(min(c, width)):
            nbr[i, t] = row[t]
        count[i] = c


class NeighborSearch:
    """Reusable search structure; keeps its buffers between steps to avoid per-step allocation.

    Usage: ``order = ns.sort(x)`` (caller permutes its arrays by ``order``), then
    ``nbr, count = ns.lists(x_sorted, radius)``. After ``sort``, ``bucket_start``
    holds the offsets of each supercell's (or supercell bucket's) particles in
    the new order and ``colour`` each particle's colour, for Gauss-Seidel stages;
    ``colour_buckets`` and ``colour_units`` list each colour's non-empty buckets in
    units of about equal particle counts (see the module docstring), and ``key_units``
    does the same for the cells of :meth:`lists`.
    """

    def __init__(self, cell_size: float, width: int = 48):
        if not (cell_size > 0 and math.isfinite(cell_size)):
            raise ValueError(f"cell_size must be positive, got {cell_size}")
        self.cell_size = float(cell_size)
        self.width = int(width)
        self._n = -1
        self.start = np.zeros(1, np.int64)

    def _buffers(self, n: int) -> None:
        if n == self._n:
            return
        self._n = n
        self.cell = np.zeros((n, 3), np.int64)
        self.key = np.zeros(n, np.int64)
        self.order = np.zeros(n, np.int64)
        self.colour = np.zeros(n, np.uint8)
        self.colour_buckets = np.zeros(max(n, 1), np.int64)  # (bucket, colour) pairs: at most one per particle
        self.nbr = np.zeros((n, self.width), np.int32)
        self.count = np.zeros(n, np.int32)

    def sort(self, x: np.ndarray) -> np.ndarray:
        """Key the particles; return the order that makes cells and supercells contiguous.

        The dense supercell grid (with a one-cell margin, so every visited cell
        has non-negative coordinates) is used while it has at most ``n + 2^17``
        supercells; otherwise supercells are hashed into ~n buckets.
        """
        n = len(x)
        self._buffers(n)
        inv = 1.0 / self.cell_size
        if n:
            lo, hi = np.empty(3), np.empty(3)
            bounds(x, lo, hi)
            lo = np.floor(lo * inv).astype(np.int64) - 1
            hi = np.floor(hi * inv).astype(np.int64) + 1
        else:
            lo = hi = np.zeros(3, np.int64)
        sdims = (hi - lo) // 2 + 1
        nsuper = float(np.prod(sdims.astype(np.float64)))
        self.dense = nsuper <= n + 2**17
        if self.dense:
            nb = int(nsuper)
            self.mask = 0
        else:
            nb = 1
            while nb < max(n, 1):
                nb *= 2
            self.mask = nb - 1
        self.sdims = sdims
        self.lo = lo
        nkeys = 8 * nb
        if len(self.start) < nkeys + 1:
            self.start = np.zeros(nkeys + 1, np.int64)
        start = self.start[:nkeys + 1]
        _keys(x, inv, lo, self.dense, sdims, self.mask, self.cell, self.key, self.colour)
        _counting_sort(self.key, nkeys, start, self.order)
        # numpy's cell[order] took 0.17 ms, the parallel gather 0.03; a new array, as numpy's was (a
        # second kept one would add 24 bytes a particle to the bake's peak).
        cell = np.empty_like(self.cell)
        take_rows(self.cell, self.order, cell)
        self.cell = cell
        self.colour[:] = self.colour[self.order]
        self.cell_start = start
        self.bucket_start = np.ascontiguousarray(start[::8])
        # prange hands each thread an equal share of the iterations, in one block: over the keys or
        # buckets of the bounding box that is one thread's work and an idle other as soon as the
        # particles fill one side of it (a dam break's spread water at 1 s: 1.97x the mean on one of
        # two threads). So every parallel loop over cells or supercells runs over units of about equal
        # particle counts instead, a few per thread.
        n_units = UNITS_PER_THREAD * numba.get_num_threads()
        self.key_units = np.searchsorted(start, np.arange(n_units + 1) * (n / n_units), "left")
        self.key_units[0], self.key_units[-1] = 0, nkeys
        self.colour_units = np.empty((N_COLOURS, n_units + 1), np.int64)
        _colour_schedule(self.bucket_start, self.colour, N_COLOURS, self.colour_buckets, self.colour_units)
        return self.order

    def lists(self, x: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
        """Neighbour rows for positions ``x`` that are in the order returned by :meth:`sort`."""
        if radius > self.cell_size * (1 + 1e-12):
            raise ValueError("search radius exceeds the cell size")
        while True:
            if self.dense:
                _fill_lists_by_cell(x, self.cell, self.cell_start, self.sdims, radius, self.key_units, self.nbr,
                                    self.count)
            else:
                _fill_lists(x, self.cell, self.cell_start, self.dense, self.sdims, self.mask, radius, self.nbr,
                            self.count)
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
