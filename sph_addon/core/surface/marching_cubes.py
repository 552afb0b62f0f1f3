"""Sparse marching cubes over the particles' support, polygonised by tetrahedra.

References
----------
Clavet, S. (2005). M.Sc. thesis, section 7.2: marching cubes on cells kept in a
hash table, only where some particle contributes; the cube size is independent
of the support radius.

Lorensen, W. and Cline, H. (1987). Marching cubes. SIGGRAPH.

Doi, A. and Koide, A. (1991). An efficient method of triangulating
equi-valued surfaces by using tetrahedral cells. IEICE Trans. E74(1).

How it differs from the textbook algorithm, and why
---------------------------------------------------
*Ambiguity.* The classic 256-case table leaves faces and cube interiors
ambiguous; its naive form makes holes, and the consistent fixes (asymptotic
decider, marching cubes 33) are large tables that are easy to get subtly wrong.
We split every cube into six tetrahedra around its main diagonal (the Kuhn /
Freudenthal decomposition, the same for every cube, so each face diagonal is
shared by the two cubes on either side) and polygonise each tetrahedron.
Inside a tetrahedron the linearly interpolated field has no ambiguity, so the
result is the exact level set of a continuous piecewise-linear function on a
conforming mesh: closed, 2-manifold (corner values equal to ``iso`` count as
inside, which is a consistent symbolic perturbation) and consistently oriented
(the per-tetrahedron table is oriented by construction, see
:func:`_build_tet_table`). The price is about twice the triangles of classic
marching cubes, many of them thin; Taubin smoothing evens them out.

*Sparsity.* Space is cut into blocks of ``BLOCK`` cubes per axis; only blocks
that some particle's support touches exist (their keys are sorted, not a dense
box over the bounding box). Within a block the field is a dense little array,
filled by splatting each overlapping particle, and stored for the two passes
(count, then emit). A grid point outside every support has field 0 < iso, so
cubes at the border of the sparse region see the field drop below ``iso`` and
the surface closes.

*Welding.* Every vertex lies on a lattice edge (axis edge, face diagonal or
cube diagonal). It is keyed by ``8 * point_key + direction`` of that edge and
all triangles referring to the same key share one vertex. Shared grid points
get bit-identical values in every block that contains them: each block sums
the same particles in the same (input) order, and particles that do not reach
a point add exactly zero.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from .fields import field_finish, field_weight

# Cubes per block edge. 16 keeps a block's field (17^3 float32 = 19 kB) in L2
# while making the per-(particle, block) overhead small (a support of 4 cubes
# overlaps ~1.6 blocks per axis).
BLOCK = 16

# Lattice points per axis above which keys could overflow int64 (8 * NX^3 < 2^63).
MAX_POINTS_PER_AXIS = 1 << 20

# Vertices are kept at least this fraction of an edge away from its ends. A
# crossing next to a grid point would otherwise make several nearly coincident
# vertices (one per tetrahedron edge at that point) and needle triangles that
# smoothing folds over. Moves the surface by at most T_EPS of an edge.
T_EPS = 0.1


def _build_tet_table():
    """Marching-tetrahedra table for a positively oriented tetrahedron.

    Built once in Python from geometry rather than typed in by hand: for each
    of the 16 inside/outside patterns of the corners (bit k = corner k inside)
    the surface crosses the edges between inside and outside corners; each
    triangle is oriented so that its normal points from the inside corners to
    the outside ones (outward, the field decreasing). Orientation is a
    topological property for any crossing parameter in (0, 1) and is kept by
    any affine map of positive determinant, so the table holds for every
    positively oriented tetrahedron.

    Returns
    -------
    edges : (6, 2) int64, the tetrahedron's edges as corner pairs (i < j).
    ntri : (16,) int64, triangles per case (0, 1 or 2).
    tris : (16, 2, 3) int64, edge indices of each triangle's corners.
    """
    ref = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    edges = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    eidx = {e: k for k, e in enumerate(edges)}

    def edge(a, b):
        return eidx[(min(a, b), max(a, b))]

    def mid(e):
        a, b = edges[e]
        return 0.5 * (ref[a] + ref[b])

    ntri = np.zeros(16, np.int64)
    tris = np.zeros((16, 2, 3), np.int64)
    for case in range(16):
        inside = [k for k in range(4) if case >> k & 1]
        outside = [k for k in range(4) if not case >> k & 1]
        if len(inside) in (0, 4):
            continue
        if len(inside) == 1 or len(outside) == 1:
            (lone,) = inside if len(inside) == 1 else outside
            others = [k for k in range(4) if k != lone]
            polys = [[edge(lone, k) for k in others]]
        else:
            a, b = inside
            c, d = outside
            quad = [edge(a, c), edge(b, c), edge(b, d), edge(a, d)]
            polys = [[quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]]
        out_dir = ref[outside].mean(0) - ref[inside].mean(0)
        for t, poly in enumerate(polys):
            p = [mid(e) for e in poly]
            n = np.cross(p[1] - p[0], p[2] - p[0])
            if n @ out_dir < 0:
                poly = [poly[0], poly[2], poly[1]]
            tris[case, t] = poly
        ntri[case] = len(polys)
    return np.array(edges, np.int64), ntri, tris


def _build_cube_tables():
    """The six Kuhn tetrahedra of the unit cube, as cube-corner edges.

    Cube corner ``k`` sits at ``(k & 1, k >> 1 & 1, k >> 2 & 1)``. Tetrahedron
    ``(a, b, c)`` (a permutation of the axes) is 0, e_a, e_a + e_b, (1,1,1);
    odd permutations are reordered to positive orientation. Every tetrahedron
    edge joins corners ``lo`` and ``hi`` with the bits of ``lo`` a subset of
    those of ``hi``, so it is the lattice edge from ``lo`` in direction
    ``hi ^ lo`` (1..7); that is what keys the welded vertex.

    Returns
    -------
    tet_corners : (6, 4) int64 cube corners of each tetrahedron.
    tet_edge_lo, tet_edge_hi : (6, 6) int64 lower / upper cube corner of each
        tetrahedron edge (edge order as in :func:`_build_tet_table`).
    ntri, tris : the tetrahedron table.
    """
    edges, ntri, tris = _build_tet_table()

    def pos(k):
        return np.array([k & 1, k >> 1 & 1, k >> 2 & 1], float)

    tets = []
    for a, b, _c in itertools.permutations(range(3)):
        v1 = 1 << a
        v2 = v1 | 1 << b
        t = [0, v1, v2, 7]
        if np.linalg.det(np.array([pos(t[1]) - pos(t[0]), pos(t[2]) - pos(t[0]),
                                   pos(t[3]) - pos(t[0])])) < 0:
            t = [0, v2, v1, 7]
        tets.append(t)
    tets = np.array(tets, np.int64)
    lo = np.zeros((6, 6), np.int64)
    hi = np.zeros((6, 6), np.int64)
    for t in range(6):
        for e, (i, j) in enumerate(edges):
            ci, cj = tets[t, i], tets[t, j]
            a, b = min(ci, cj), max(ci, cj)
            assert a & b == a, "Kuhn edges join a corner to one whose bits contain it"
            lo[t, e], hi[t, e] = a, b
    return tets, lo, hi, ntri, tris


TET_CORNERS, TET_EDGE_LO, TET_EDGE_HI, TET_NTRI, TET_TRIS = _build_cube_tables()


@njit(**config.NJIT_PARALLEL)
def _count_pairs(xs, hc, block):
    """Number of blocks each particle's support overlaps.

    Parameters
    ----------
    xs : (N, 3) float64 particle positions in lattice units, relative to the
        padded grid origin (so every support lies at index >= 1).
    hc : float, support radius in lattice units (support / cube size).
    block : int, cubes per block edge.

    Returns
    -------
    (N,) int64 counts; the point range of particle i along an axis is
    [ceil(x - hc), floor(x + hc)], and block b holds points [b B, b B + B].
    """
    n = xs.shape[0]
    out = np.empty(n, np.int64)
    for i in prange(n):
        c = 1
        for d in range(3):
            plo = int(np.ceil(xs[i, d] - hc))
            phi = int(np.floor(xs[i, d] + hc))
            c *= phi // block - (plo - 1) // block + 1
        out[i] = c
    return out


@njit(**config.NJIT_PARALLEL)
def _fill_pairs(xs, hc, block, nby, nbz, offsets, pair_block, pair_particle):
    """Write the (block key, particle) pairs; mutates ``pair_block`` and ``pair_particle``.

    Parameters
    ----------
    xs, hc, block : as in :func:`_count_pairs`.
    nby, nbz : int, blocks along y and z (block key = (bx nby + by) nbz + bz).
    offsets : (N + 1,) int64 exclusive prefix sum of the counts.
    pair_block : (P,) int64, out.
    pair_particle : (P,) int64, out.
    """
    n = xs.shape[0]
    for i in prange(n):
        lo = np.empty(3, np.int64)
        hi = np.empty(3, np.int64)
        for d in range(3):
            plo = int(np.ceil(xs[i, d] - hc))
            phi = int(np.floor(xs[i, d] + hc))
            lo[d] = (plo - 1) // block
            hi[d] = phi // block
        k = offsets[i]
        for bx in range(lo[0], hi[0] + 1):
            for by in range(lo[1], hi[1] + 1):
                for bz in range(lo[2], hi[2] + 1):
                    pair_block[k] = (bx * nby + by) * nbz + bz
                    pair_particle[k] = i
                    k += 1


@njit(**config.NJIT)
def _block_field(b, block_keys, starts, order_particle, xs, hc, block, nby, nbz,
                 kind, iso, q_min, out):
    """Field at the (B+1)^3 lattice points of one block; mutates ``out``.

    phi = finish(sum_j weight(|x - x_j| / support)) (Clavet eq. 7.1 or the
    Desbrun-Cani density, see :mod:`.fields`); with ``q_min > 0`` the thin-
    feature floor max(phi, iso (1 - q) / (1 - q_min)) per particle, which
    equals ``iso`` at r = q_min * support, so every particle is at least a
    sphere of that radius (our addition, not in either paper).

    Parameters
    ----------
    b : int, block index into ``block_keys``.
    block_keys : (K,) int64 sorted unique block keys.
    starts : (K + 1,) int64, particles of block b are order_particle[starts[b]:starts[b+1]].
    order_particle : (P,) int64 particle indices, in increasing order within a block.
    xs : (N, 3) float64 positions in lattice units.
    hc : float, support in lattice units.
    block, nby, nbz : block layout.
    kind : int, field id (:data:`.fields.FIELDS` ``kind``).
    iso : float, iso-value.
    q_min : float, thin-feature radius / support (0 disables).
    out : (B+1, B+1, B+1) float32, out.
    """
    key = block_keys[b]
    bz = key % nbz
    by = (key // nbz) % nby
    bx = key // (nbz * nby)
    ox, oy, oz = bx * block, by * block, bz * block
    m = block + 1
    acc = np.zeros((m, m, m))
    floor_ = np.zeros((m, m, m))
    hc2 = hc * hc
    inv_hc = 1.0 / hc
    use_floor = q_min > 0.0
    scale = iso / (1.0 - q_min)
    for s in range(starts[b], starts[b + 1]):
        i = order_particle[s]
        px = xs[i, 0] - ox
        py = xs[i, 1] - oy
        pz = xs[i, 2] - oz
        x0 = max(0, int(np.ceil(px - hc)))
        x1 = min(block, int(np.floor(px + hc)))
        y0 = max(0, int(np.ceil(py - hc)))
        y1 = min(block, int(np.floor(py + hc)))
        z0 = max(0, int(np.ceil(pz - hc)))
        z1 = min(block, int(np.floor(pz + hc)))
        for ix in range(x0, x1 + 1):
            dx2 = (ix - px) * (ix - px)
            for iy in range(y0, y1 + 1):
                dxy2 = dx2 + (iy - py) * (iy - py)
                if dxy2 >= hc2:
                    continue
                for iz in range(z0, z1 + 1):
                    r2 = dxy2 + (iz - pz) * (iz - pz)
                    if r2 < hc2:
                        q = np.sqrt(r2) * inv_hc
                        acc[ix, iy, iz] += field_weight(kind, q)
                        if use_floor:
                            g = scale * (1.0 - q)
                            if g > floor_[ix, iy, iz]:
                                floor_[ix, iy, iz] = g
    for ix in range(m):
        for iy in range(m):
            for iz in range(m):
                a = acc[ix, iy, iz]
                f = field_finish(kind, a) if a > 0.0 else 0.0
                if floor_[ix, iy, iz] > f:
                    f = floor_[ix, iy, iz]
                out[ix, iy, iz] = f


@njit(**config.NJIT)
def _cell_case(f, ix, iy, iz, iso, inside):
    """Inside flags of the 8 corners of cube (ix, iy, iz); mutates ``inside``.

    Returns the number of inside corners (0 or 8: nothing to polygonise).
    Corners with f >= iso count as inside (the consistent tie rule).
    """
    cnt = 0
    for k in range(8):
        v = f[ix + (k & 1), iy + (k >> 1 & 1), iz + (k >> 2 & 1)]
        inside[k] = v >= iso
        cnt += inside[k]
    return cnt


@njit(**config.NJIT_PARALLEL)
def _fields_and_counts(block_keys, starts, order_particle, xs, hc, block, nby, nbz,
                       kind, iso, q_min, tet_corners, tet_ntri, fields, counts):
    """Pass 1 over blocks (parallel): fill each block's field, count its triangles.

    Mutates ``fields`` ((K, B+1, B+1, B+1) float32) and ``counts`` ((K,) int64).
    Other parameters as in :func:`_block_field`; ``tet_corners`` (6, 4) and
    ``tet_ntri`` (16,) are the tables of this module.
    """
    for b in prange(block_keys.shape[0]):
        _block_field(b, block_keys, starts, order_particle, xs, hc, block, nby, nbz,
                     kind, iso, q_min, fields[b])
        f = fields[b]
        inside = np.empty(8, np.bool_)
        c = 0
        for ix in range(block):
            for iy in range(block):
                for iz in range(block):
                    n_in = _cell_case(f, ix, iy, iz, iso, inside)
                    if n_in == 0 or n_in == 8:
                        continue
                    for t in range(6):
                        case = 0
                        for v in range(4):
                            if inside[tet_corners[t, v]]:
                                case |= 1 << v
                        c += tet_ntri[case]
        counts[b] = c


@njit(**config.NJIT_PARALLEL)
def _emit(block_keys, block, nby, nbz, ny, nz, origin, cube, iso, t_eps, fields, tri_start,
          tet_corners, tet_edge_lo, tet_edge_hi, tet_ntri, tet_tris, keys, pos):
    """Pass 2 over blocks (parallel): write each triangle's corner keys and positions.

    Parameters
    ----------
    block_keys, block, nby, nbz : block layout (see :func:`_fill_pairs`).
    ny, nz : int64 lattice points along y and z (point key = (px ny + py) nz + pz).
    origin : (3,) int64 lattice index of local point 0 (world = (origin + p) * cube).
    cube : float, cube size (m).
    iso : float.
    fields : (K, B+1, B+1, B+1) float32 from pass 1.
    tri_start : (K + 1,) int64 first triangle of each block.
    tet_* : tables of this module.
    keys : (T, 3) int64, out: 8 * point_key(lower end) + direction of the edge.
    pos : (T, 3, 3) float64, out: vertex positions (m), linear interpolation
        from the lower to the upper end of the edge (same in every block).
    """
    for b in prange(block_keys.shape[0]):
        if tri_start[b] == tri_start[b + 1]:
            continue
        key = block_keys[b]
        bz = key % nbz
        by = (key // nbz) % nby
        bx = key // (nbz * nby)
        ox, oy, oz = bx * block, by * block, bz * block
        f = fields[b]
        inside = np.empty(8, np.bool_)
        t_out = tri_start[b]
        for ix in range(block):
            for iy in range(block):
                for iz in range(block):
                    n_in = _cell_case(f, ix, iy, iz, iso, inside)
                    if n_in == 0 or n_in == 8:
                        continue
                    for t in range(6):
                        case = 0
                        for v in range(4):
                            if inside[tet_corners[t, v]]:
                                case |= 1 << v
                        for k in range(tet_ntri[case]):
                            for m in range(3):
                                e = tet_tris[case, k, m]
                                lo = tet_edge_lo[t, e]
                                hi = tet_edge_hi[t, e]
                                lx = ix + (lo & 1)
                                ly = iy + (lo >> 1 & 1)
                                lz = iz + (lo >> 2 & 1)
                                hx = ix + (hi & 1)
                                hy = iy + (hi >> 1 & 1)
                                hz = iz + (hi >> 2 & 1)
                                flo = np.float64(f[lx, ly, lz])
                                fhi = np.float64(f[hx, hy, hz])
                                s = min(max((iso - flo) / (fhi - flo), t_eps), 1.0 - t_eps)
                                gx = ox + lx
                                gy = oy + ly
                                gz = oz + lz
                                keys[t_out, m] = ((gx * ny + gy) * nz + gz) * 8 + (hi ^ lo)
                                pos[t_out, m, 0] = (origin[0] + gx + s * (hx - lx)) * cube
                                pos[t_out, m, 1] = (origin[1] + gy + s * (hy - ly)) * cube
                                pos[t_out, m, 2] = (origin[2] + gz + s * (hz - lz)) * cube
                            t_out += 1


@njit(**config.NJIT_PARALLEL)
def _gather_vertices(pos_flat, first, out):
    """out[v] = pos_flat[first[v]]; mutates ``out`` ((V, 3) float64)."""
    for v in prange(first.shape[0]):
        for d in range(3):
            out[v, d] = pos_flat[first[v], d]


def extract(x: np.ndarray, support: float, cube_size: float, iso: float, kind: int,
            min_radius: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Polygonise ``field == iso`` around particles ``x``; welded, closed, outward.

    Parameters
    ----------
    x : (N, 3) float array, particle positions (m). Not mutated.
    support : support radius of the field (m), > 0.
    cube_size : marching-cubes cell edge (m), > 0.
    iso : iso-value (dimensionless, > 0).
    kind : field id (``FIELDS[name].kind``, see :mod:`.fields`).
    min_radius : thin-feature radius (m), 0 disables; must be < support.

    Returns
    -------
    vertices : (V, 3) float64 (m).
    faces : (F, 3) int32, counter-clockwise seen from outside.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    empty = (np.zeros((0, 3)), np.zeros((0, 3), np.int32))
    if x.shape[0] == 0:
        return empty
    if not iso > 0.0:
        raise ValueError("iso must be > 0 (points outside every support have field 0)")
    if not 0.0 <= min_radius < support:
        raise ValueError("min_radius must be in [0, support)")
    hc = support / cube_size
    # In float before any cast: 1e30 m (a damaged cache) would wrap the int64 lattice indices below.
    lo, hi = x.min(0) / cube_size, x.max(0) / cube_size
    span = float(np.max(hi - lo)) + 2 * hc + 4
    if not (np.abs(np.concatenate([lo, hi])).max() < 2.0**52 and span < MAX_POINTS_PER_AXIS):
        raise ValueError(f"particles span {span:.3g} cubes along an axis (max {MAX_POINTS_PER_AXIS}); "
                         "increase the cube size")
    # Lattice-aligned origin two points beyond the lowest support, so every
    # block index is >= 0 and the grid is the same for any particle subset.
    origin = np.floor(x.min(0) / cube_size - hc).astype(np.int64) - 2
    xs = x / cube_size - origin
    top = np.floor(xs.max(0) + hc).astype(np.int64) + 2
    if top.max() >= MAX_POINTS_PER_AXIS:
        raise ValueError(f"particles span {top.max()} cubes along an axis "
                         f"(max {MAX_POINTS_PER_AXIS}); increase the cube size")
    nb = top // BLOCK + 1
    npts = nb * BLOCK + 1

    counts = _count_pairs(xs, hc, BLOCK)
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    pair_block = np.empty(offsets[-1], np.int64)
    pair_particle = np.empty(offsets[-1], np.int64)
    _fill_pairs(xs, hc, BLOCK, nb[1], nb[2], offsets, pair_block, pair_particle)
    # Stable sort: within a block particles stay in input order, so every block
    # sums a shared point's contributions in the same order (bit-identical).
    order = np.argsort(pair_block, kind="stable")
    sorted_blocks = pair_block[order]
    order_particle = pair_particle[order]
    change = np.flatnonzero(np.diff(sorted_blocks)) + 1
    starts = np.concatenate(([0], change, [len(sorted_blocks)])).astype(np.int64)
    block_keys = sorted_blocks[starts[:-1]]

    nblk = len(block_keys)
    fields = np.empty((nblk, BLOCK + 1, BLOCK + 1, BLOCK + 1), np.float32)
    tri_counts = np.empty(nblk, np.int64)
    q_min = min_radius / support
    _fields_and_counts(block_keys, starts, order_particle, xs, hc, BLOCK, nb[1], nb[2],
                       int(kind), float(iso), q_min, TET_CORNERS, TET_NTRI, fields, tri_counts)
    tri_start = np.zeros(nblk + 1, np.int64)
    np.cumsum(tri_counts, out=tri_start[1:])
    ntri = int(tri_start[-1])
    if ntri == 0:
        return empty
    keys = np.empty((ntri, 3), np.int64)
    pos = np.empty((ntri, 3, 3), np.float64)
    _emit(block_keys, BLOCK, nb[1], nb[2], npts[1], npts[2], origin, float(cube_size), float(iso), T_EPS,
          fields, tri_start, TET_CORNERS, TET_EDGE_LO, TET_EDGE_HI, TET_NTRI, TET_TRIS, keys, pos)
    uniq, first, inverse = np.unique(keys.ravel(), return_index=True, return_inverse=True)
    vertices = np.empty((len(uniq), 3))
    _gather_vertices(pos.reshape(-1, 3), first, vertices)
    faces = inverse.reshape(-1, 3).astype(np.int32)
    return vertices, faces
