"""Numba kernels of the coarse grid projection (``pressure_projection_zhu2005``): particles to cells and faces,
the pressure Poisson solve over the fluid cells, and the faces' velocity change back to particles.

Grid conventions: cell (a, b, c) spans origin + [a, a+1) x [b, b+1) x [c, c+1) cell widths, stored
flat at (a ny + b) nz + c. The component along axis k lives on the faces normal to k: its array has
one more entry along k, face m lying at cell m's lower side. Cell kinds: FLUID (holds particles),
AIR (empty: pressure 0), SOLID (empty with its centre inside a static collider: no flow through its
faces).
"""

from __future__ import annotations

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange

FLUID = 0
AIR = 1
SOLID = 2


@njit(**config.NJIT_PARALLEL)
def particle_cells(x, sel, origin, inv_d, nx, ny, nz, cell):
    """Each selected particle's cell, flat (see the module), into ``cell``; -1 for the others."""
    for p in prange(x.shape[0]):
        cell[p] = -1
        if not sel[p]:
            continue
        a = int((x[p, 0] - origin[0]) * inv_d)
        b = int((x[p, 1] - origin[1]) * inv_d)
        c = int((x[p, 2] - origin[2]) * inv_d)
        if 0 <= a < nx and 0 <= b < ny and 0 <= c < nz:
            cell[p] = (a * ny + b) * nz + c


@njit(**config.NJIT)
def cell_sums(cell, pressure_at, counts, carried):
    """Each cell's particles and the sum of their carried pressures, over the particles in order
    (numpy's ``bincount`` without and with weights: the same sums, one pass, no temporaries)."""
    for p in range(cell.shape[0]):
        c = cell[p]
        if c >= 0:
            counts[c] += 1
            carried[c] += pressure_at[p]


@njit(**config.NJIT_PARALLEL)
def pressures_at_particles(cell, pressure, out):
    """Each particle's cell's pressure (0 outside the grid), in parallel."""
    for p in prange(cell.shape[0]):
        out[p] = pressure[cell[p]] if cell[p] >= 0 else 0.0


@njit(**config.NJIT)
def _step(cell, k, nx, ny, nz):
    """The flat index of ``cell``'s neighbour k (0-5: -x, +x, -y, +y, -z, +z), -1 outside the grid."""
    c = cell % nz
    b = (cell // nz) % ny
    a = cell // (ny * nz)
    if k == 0:
        return cell - ny * nz if a > 0 else -1
    if k == 1:
        return cell + ny * nz if a < nx - 1 else -1
    if k == 2:
        return cell - nz if b > 0 else -1
    if k == 3:
        return cell + nz if b < ny - 1 else -1
    if k == 4:
        return cell - 1 if c > 0 else -1
    return cell + 1 if c < nz - 1 else -1


@njit(**config.NJIT)
def _reach(kind, nx, ny, nz, seed, reached, stack):
    """Mark in ``reached`` (zeroed here) the fluid cells connected through fluid to a fluid cell beside
    a ``seed`` cell (the grid's outside counts as AIR)."""
    reached[:] = 0
    top = 0
    for cell in range(kind.shape[0]):
        if kind[cell] != FLUID:
            continue
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if (o < 0 and seed == AIR) or (o >= 0 and kind[o] == seed):
                reached[cell] = 1
                stack[top] = cell
                top += 1
                break
    while top > 0:
        top -= 1
        cell = stack[top]
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o >= 0 and kind[o] == FLUID and not reached[o]:
                reached[o] = 1
                stack[top] = o
                top += 1


@njit(**config.NJIT)
def fluid_rows(kind, nx, ny, nz, row, nbr):
    """Number the fluid cells of the bodies that rest on a solid and reach air (``row``: their row in
    the solve, -1 for every other cell) and give each its six neighbours in ``nbr`` (m,6): a row, -1
    for air (or outside the grid), -2 for solid. Returns m.

    In ``kind``, fluid that touches no solid through fluid (a drop, a splash, a falling thread: it
    carries no weight, and the relaxation alone holds it together) is turned AIR, and fluid sealed
    off from air by solid (a pocket that cannot give way: its pressure is undetermined) SOLID."""
    n = kind.shape[0]
    reached = np.empty(n, np.uint8)
    stack = np.empty(n, np.int64)
    _reach(kind, nx, ny, nz, SOLID, reached, stack)
    for cell in range(n):
        if kind[cell] == FLUID and not reached[cell]:
            kind[cell] = AIR
    _reach(kind, nx, ny, nz, AIR, reached, stack)
    m = 0
    for cell in range(n):
        row[cell] = -1
        if kind[cell] != FLUID:
            continue
        if not reached[cell]:
            kind[cell] = SOLID
        else:
            row[cell] = m
            m += 1
    for cell in range(n):
        r = row[cell]
        if r < 0:
            continue
        for k in range(6):
            o = _step(cell, k, nx, ny, nz)
            if o < 0 or kind[o] == AIR:
                nbr[r, k] = -1
            elif kind[o] == SOLID:
                nbr[r, k] = -2
            else:
                nbr[r, k] = row[o]
    return m


# Fluid rows from which the solve's row loops run in parallel. Below, a parallel loop's start costs
# as much as the loop (the bench's dam break: a few thousand rows); the million-particle dam break's
# solve took 0.35 s a substep on one thread. The sums are the same either way.
PARALLEL_ROWS = 20_000


@njit(**config.NJIT_INLINE)
def _laplacian_row(nbr, surface, p, r):
    """Row r of -L p (Σ c (p_r - p_j) over fluid neighbours, plus c p_r / θ towards air, ``surface[r, k]``
    = c / θ, c the face's inverse density relative to the liquid's: 1 where no solid is in it)."""
    s = 0.0
    pr = p[r]
    for k in range(6):
        j = nbr[r, k]
        if j == -2:
            continue
        s += (pr - p[j]) * surface[r, k] if j >= 0 else pr * surface[r, k]
    return s


@njit(**config.NJIT_PARALLEL)
def _laplacian_parallel(nbr, surface, m, p, out):
    for r in prange(m):
        out[r] = _laplacian_row(nbr, surface, p, r)


@njit(**config.NJIT)
def _laplacian(nbr, surface, m, p, out):
    """out = -L p over the m fluid rows; returns p·out, summed in row order."""
    if m >= PARALLEL_ROWS:
        _laplacian_parallel(nbr, surface, m, p, out)
    else:
        for r in range(m):
            out[r] = _laplacian_row(nbr, surface, p, r)
    pq = 0.0
    for r in range(m):
        pq += p[r] * out[r]
    return pq


@njit(**config.NJIT_PARALLEL)
def _step_parallel(alpha, p, d, r, q, m):
    for i in prange(m):
        p[i] += alpha * d[i]
        r[i] -= alpha * q[i]


@njit(**config.NJIT_PARALLEL)
def _direction_parallel(r, inv, beta, d, m):
    for i in prange(m):
        d[i] = r[i] * inv[i] + beta * d[i]


@njit(**config.NJIT)
def solve(nbr, surface, m, rhs, p, tol, max_iterations, r, d, q):
    """Conjugate gradients on -L p = rhs over the m fluid rows, preconditioned by -L's diagonal, from
    the guess in ``p``, until |r| <= tol |rhs|; ``surface`` (m,6): 1 / θ towards each air neighbour
    (``_laplacian``). -L is symmetric positive definite: every row's cell reaches air through fluid
    (``fluid_rows``), so every diagonal is at least 1. The diagonal varies with the ghost fluid's
    1 / θ (up to 100 beside the surface), which Jacobi's scaling takes out: on the bench's dam break
    plain CG took 113 iterations a substep on average, this 58 (``bench.py``'s
    ``grid_iterations_per_step``). The row loops run in parallel from ``PARALLEL_ROWS`` rows; the
    dot products are summed in row order on one thread, so the result is the same bytes at any
    thread count.
    r, d, q : (m,) work arrays. Returns (iterations, residual relative to |rhs|)."""
    inv = np.empty(m)
    for i in range(m):
        s = 0.0
        for k in range(6):
            j = nbr[i, k]
            if j != -2:
                s += surface[i, k]
        inv[i] = 1.0 / s
    _laplacian(nbr, surface, m, p, q)
    rr = 0.0
    rz = 0.0
    b2 = 0.0
    for i in range(m):
        r[i] = rhs[i] - q[i]
        d[i] = r[i] * inv[i]
        rr += r[i] * r[i]
        rz += r[i] * d[i]
        b2 += rhs[i] * rhs[i]
    if b2 == 0.0:
        for i in range(m):
            p[i] = 0.0
        return 0, 0.0
    goal = tol * tol * b2
    it = 0
    big = m >= PARALLEL_ROWS
    while rr > goal and it < max_iterations:
        alpha = rz / _laplacian(nbr, surface, m, d, q)
        if big:
            _step_parallel(alpha, p, d, r, q, m)
        else:
            for i in range(m):
                p[i] += alpha * d[i]
                r[i] -= alpha * q[i]
        rr = 0.0
        for i in range(m):
            rr += r[i] * r[i]
        it += 1
        if rr > goal:
            rzn = 0.0
            for i in range(m):
                rzn += r[i] * r[i] * inv[i]
            beta = rzn / rz
            rz = rzn
            if big:
                _direction_parallel(r, inv, beta, d, m)
            else:
                for i in range(m):
                    d[i] = r[i] * inv[i] + beta * d[i]
    return it, np.sqrt(rr / b2)


@njit(**config.NJIT)
def _corner(f):
    """The lower of the two grid nodes around coordinate f (in node units) and the weight of the upper."""
    a = int(np.floor(f))
    return a, f - a


@njit(**config.NJIT_INLINE)
def _node(q, a0, b0, c0, t0, t1, t2, nx, ny, nz):
    """Corner q (0-7) of the trilinear stencil from the lower node (a0, b0, c0) with upper weights
    (t0, t1, t2): its node and weight, the weight -1 when the node lies outside the (nx, ny, nz) grid."""
    da, db, dc = q >> 2, (q >> 1) & 1, q & 1
    a, b, c = a0 + da, b0 + db, c0 + dc
    if a < 0 or a >= nx or b < 0 or b >= ny or c < 0 or c >= nz:
        return a, b, c, -1.0
    return a, b, c, (t0 if da else 1.0 - t0) * (t1 if db else 1.0 - t1) * (t2 if dc else 1.0 - t2)


@njit(**config.NJIT)
def _splat(x, v, rows, a_lo, a_hi, origin, inv_d, u0, u1, u2, w0, w1, w2, fill):
    """Each particle of ``rows``' velocity to the faces around it, trilinear weights (the component
    along axis k on the faces normal to k: u_k, weights summed in w_k), and its weights on the cell
    centres around it into ``fill``: the cells' particle content, smooth in the positions. Only the
    nodes of x index a_lo to a_hi - 1 are written; the arrays are added to."""
    for r in range(rows.shape[0]):
        p = rows[r]
        for axis in range(4):
            if axis == 0:
                u, w = u0, w0
            elif axis == 1:
                u, w = u1, w1
            elif axis == 2:
                u, w = u2, w2
            else:
                u, w = fill, fill
            nx, ny, nz = w.shape
            a0, t0 = _corner((x[p, 0] - origin[0]) * inv_d - (0.0 if axis == 0 else 0.5))
            b0, t1 = _corner((x[p, 1] - origin[1]) * inv_d - (0.0 if axis == 1 else 0.5))
            c0, t2 = _corner((x[p, 2] - origin[2]) * inv_d - (0.0 if axis == 2 else 0.5))
            vp = v[p, axis] if axis < 3 else 0.0
            for da in range(2):
                if a0 + da < a_lo or a0 + da >= a_hi:
                    continue  # another task's slab (each node takes one term from a row: order-free)
                for q in range(4 * da, 4 * da + 4):
                    a, b, c, ww = _node(q, a0, b0, c0, t0, t1, t2, nx, ny, nz)
                    if ww < 0.0:
                        continue
                    w[a, b, c] += ww
                    if axis < 3:
                        u[a, b, c] += ww * vp


@njit(**config.NJIT)
def _slab_rows(x, sel, origin, inv_d, half, slabs, width, start, rows):
    """The selected particles of each (half, slab of ``width`` x nodes) pair whose stencils reach the
    slab, in increasing index: task t = half * slabs + slab holds rows[start[t]:start[t + 1]]. Returns
    the number of rows."""
    n = x.shape[0]
    count = np.zeros(2 * slabs, np.int64)
    for sweep in range(2):
        for p in range(n):
            if not sel[p]:
                continue
            g = (x[p, 0] - origin[0]) * inv_d
            first = max(int(np.floor(g - 0.5)), 0) // width  # the cell-centred stencils start half a node lower
            last = min(int(np.floor(g)) + 1, slabs * width - 1) // width
            h = 0 if p < half else 1
            for s in range(first, last + 1):
                t = h * slabs + s
                if sweep == 1:
                    rows[start[t] + count[t]] = p
                count[t] += 1
        if sweep == 0:
            start[0] = 0
            for t in range(2 * slabs):
                start[t + 1] = start[t] + count[t]
                count[t] = 0
    return start[2 * slabs]


@njit(**config.NJIT_PARALLEL)
def splat(x, v, sel, origin, inv_d, u0, u1, u2, w0, w1, w2, fill, threads):
    """``_splat`` over all rows into the arrays (zeroed here; u_k is divided by w_k by the caller);
    ``threads``: numba's thread count (the work is cut in about one task a thread).

    Every node's sum is the same whatever the thread count: the rows are split in two halves, each
    summed into arrays of its own (rows in increasing index) and the halves added at the end; within
    a half the grid is cut into slabs across x, one parallel task each, every task visiting the rows
    that reach its slab in increasing index and writing only its slab's nodes. So each node adds the
    same terms in the same order as one thread visiting every row would."""
    n = x.shape[0]
    half = n // 2
    # x nodes per slab: a task per thread (two halves of a slab each), at least two nodes (a stencil
    # spans at most three, so a row reaches at most two slabs). A row whose stencil straddles two slabs
    # is visited by both (on the dam break's column, 2 nodes a slab, three rows in four), so there are
    # no more slabs than the threads need; on two threads one slab, as many visits as rows. The sums
    # do not depend on it.
    nodes = u0.shape[0]  # the x faces are the grid's widest along x
    width = max(2, -(-nodes // max(1, (threads + 1) // 2)))
    slabs = (nodes + width - 1) // width
    start = np.empty(2 * slabs + 1, np.int64)
    rows = np.empty(2 * n, np.int64)
    _slab_rows(x, sel, origin, inv_d, half, slabs, width, start, rows)
    extra = [(np.zeros_like(u0), np.zeros_like(u1), np.zeros_like(u2), np.zeros_like(w0), np.zeros_like(w1),
              np.zeros_like(w2), np.zeros_like(fill)) for _ in range(2)]
    for t in prange(2 * slabs):
        # Both halves of a slab side by side: prange hands each thread one block of tasks, and the
        # halves (rows sorted in space) each fill one side of the grid.
        s = t // 2
        task = (t % 2) * slabs + s
        a, b, c, d, e, f, g = extra[t % 2]
        _splat(x, v, rows[start[task]:start[task + 1]], s * width, (s + 1) * width, origin, inv_d,
               a, b, c, d, e, f, g)
    for k, out in enumerate((u0, u1, u2, w0, w1, w2, fill)):
        _add(extra[0][k].reshape(-1), extra[1][k].reshape(-1), out.reshape(-1))


@njit(**config.NJIT_PARALLEL)
def _add(a, b, out):
    for i in prange(out.shape[0]):
        out[i] = a[i] + b[i]


@njit(**config.NJIT)
def _interpolate(f, g, x0, x1, x2, known, s0, s1, s2):
    """Trilinear interpolation of the node arrays ``f`` and ``g`` at node coordinates (x0 - s0, x1 - s1,
    x2 - s2), over the nodes where ``known`` (all when it is empty), weights renormalised; 0 with none."""
    nx, ny, nz = f.shape
    a0, t0 = _corner(x0 - s0)
    b0, t1 = _corner(x1 - s1)
    c0, t2 = _corner(x2 - s2)
    sf = 0.0
    sg = 0.0
    ws = 0.0
    every = known.shape[0] == 0
    for q in range(8):
        a, b, c, ww = _node(q, a0, b0, c0, t0, t1, t2, nx, ny, nz)
        if ww < 0.0 or not (every or known[a, b, c]):
            continue
        sf += ww * f[a, b, c]
        sg += ww * g[a, b, c]
        ws += ww
    if ws == 0.0:
        return 0.0, 0.0
    return sf / ws, sg / ws


@njit(**config.NJIT_PARALLEL)
def velocity_changes(x, v, sel, origin, inv_d, du0, du1, du2, un0, un1, un2, k0, k1, k2, fill, ramp, pic, dv):
    """Each selected particle's velocity change into ``dv`` (n,3), 0 for the others:

    w (FLIP Δu + pic (u_new - (v + FLIP Δu))), the faces' change Δu and new velocity u_new
    interpolated over the faces whose value is known (k0-k2, see ``_interpolate``), and the weight
    w = (f - ramp[0]) / (ramp[1] - ramp[0]) clipped to [0, 1], f the cells' ``fill`` at the particle."""
    empty = np.zeros((0, 0, 0), np.bool_)
    for p in prange(x.shape[0]):
        dv[p, 0] = 0.0
        dv[p, 1] = 0.0
        dv[p, 2] = 0.0
        if not sel[p]:
            continue
        g0 = (x[p, 0] - origin[0]) * inv_d
        g1 = (x[p, 1] - origin[1]) * inv_d
        g2 = (x[p, 2] - origin[2]) * inv_d
        f = _interpolate(fill, fill, g0, g1, g2, empty, 0.5, 0.5, 0.5)[0]
        w = min(max((f - ramp[0]) / (ramp[1] - ramp[0]), 0.0), 1.0)
        if w == 0.0:
            continue
        for axis in range(3):
            if axis == 0:
                du, un, kn = du0, un0, k0
            elif axis == 1:
                du, un, kn = du1, un1, k1
            else:
                du, un, kn = du2, un2, k2
            s0 = 0.0 if axis == 0 else 0.5
            s1 = 0.0 if axis == 1 else 0.5
            s2 = 0.0 if axis == 2 else 0.5
            flip, grid = _interpolate(du, un, g0, g1, g2, kn, s0, s1, s2)
            dv[p, axis] = w * (flip + pic * (grid - (v[p, axis] + flip)))


@njit(**config.NJIT)
def selected_bounds(x, sel, out):
    """The lowest (out[0]) and highest (out[1]) coordinates of the selected rows of x; False if none."""
    found = False
    for p in range(x.shape[0]):
        if not sel[p]:
            continue
        for a in range(3):
            if not found or x[p, a] < out[0, a]:
                out[0, a] = x[p, a]
            if not found or x[p, a] > out[1, a]:
                out[1, a] = x[p, a]
        found = True
    return found
