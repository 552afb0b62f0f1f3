"""The fluid missing behind the colliders, as the boundary terms of the density relaxation see it.

``lattice_fill.wall_terms`` continues each particle's lattice into the solids; these kernels give
each lattice point its share inside a collider (:func:`solid_share`) and sum the shares against the
lattice's weights (:func:`boundary_sums`). They avoid numpy's matrix product: numpy hands it to the
BLAS library, whose worker threads then spin on the cores numba's threads need
(``response.placed_distances``). Summing each centre's shares as they are made, without the array
of shares, saved 0.03 of 0.79 ms a substep on the bench's dam break: not kept.
"""

from __future__ import annotations

from ..colliders.contact.response import _to_local
from ..colliders.shapes.sdf_dispatch import sdf_eval
from ..numerics import config
from ..numerics.kernel_cache import njit, prange


@njit(**config.NJIT_PARALLEL)
def weighted_rows(a, w, out):
    """out = a @ w for a (k,m) and w (m,c), row by row in parallel, without BLAS (see
    the module docstring for why the boundary terms avoid it)."""
    for i in prange(a.shape[0]):
        for c in range(w.shape[1]):
            out[i, c] = 0.0
        # Row by row of w, each column's sum still in b's order (the same result as the dot products),
        # skipping the zeros that most rows of the boundary terms' shares are: 0.41 -> 0.1 ms a substep.
        for b in range(a.shape[1]):
            s = a[i, b]
            if s == 0.0:
                continue
            for c in range(w.shape[1]):
                out[i, c] += s * w[b, c]


@njit(**config.NJIT_PARALLEL)
def boundary_sums(share, w, rows, rho, rho_near, g, g_near):
    """The boundary terms' eight weighted sums (``lattice_fill.wall_terms``) of share row a written to
    particle rows[a]: rho, rho_near (n,) and g, g_near (n,3). The same sums in the same order as
    :func:`weighted_rows` (zero shares skipped), without its (k,8) result and numpy's four scatters
    (the boundary terms 0.99 -> 0.78 ms a substep on the bench's dam break). share (k,m), w (m,8), rows (k,) int64."""
    for a in prange(share.shape[0]):
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
        for b in range(share.shape[1]):
            s = share[a, b]
            if s == 0.0:
                continue
            s0 += s * w[b, 0]
            s1 += s * w[b, 1]
            s2 += s * w[b, 2]
            s3 += s * w[b, 3]
            s4 += s * w[b, 4]
            s5 += s * w[b, 5]
            s6 += s * w[b, 6]
            s7 += s * w[b, 7]
        i = rows[a]
        rho[i] = s0
        rho_near[i] = s1
        g[i, 0] = s2
        g[i, 1] = s3
        g[i, 2] = s4
        g_near[i, 0] = s5
        g_near[i, 1] = s6
        g_near[i, 2] = s7


@njit(**config.NJIT_PARALLEL)
def solid_share(code, params, grid, rot, pos, centres, offsets, radii, lipschitz, spacing, share):
    """Share of the lattice cell at each centre + offset that lies inside this collider's solid.

    The share is clamp(1/2 - d/s, 0, 1) for the signed distance d of the cell's centre
    (a cell of size s centred on the surface is half inside); ``share`` keeps the
    largest over the colliders it is called for, so overlapping solids count once.
    A point whose distance is bounded below by d(centre) - L |o| >= s/2 has no share and is
    not evaluated (L bounds how fast the field changes: 1 for exact distances), which leaves
    the result unchanged and skips most points of particles a layer or more from the wall.

    Parameters
    ----------
    code, params, grid : a collider's field (``Shape.code``). rot (3,3), pos (3,) : its placement (local -> world).
    centres : (k,3) world points, m. offsets : (m,3) lattice offsets, m; radii : (m,) their lengths, m.
    lipschitz : bound of |grad d| for this field. spacing : s, m.
    share : (k,m) float64, updated in place.
    """
    inv_s = 1.0 / spacing
    for a in prange(centres.shape[0]):
        cx, cy, cz = centres[a, 0], centres[a, 1], centres[a, 2]
        px, py, pz = _to_local(rot, pos, cx, cy, cz)
        d0 = sdf_eval(code, params, grid, px, py, pz)[0]
        for b in range(offsets.shape[0]):
            if d0 - lipschitz * radii[b] >= 0.5 * spacing:
                continue
            px, py, pz = _to_local(rot, pos, cx + offsets[b, 0], cy + offsets[b, 1], cz + offsets[b, 2])
            d = sdf_eval(code, params, grid, px, py, pz)[0]
            f = min(max(0.5 - d * inv_s, 0.0), 1.0)
            if f > share[a, b]:
                share[a, b] = f


@njit(**config.NJIT_PARALLEL)
def no_slip_sums(share, normal, off, d_i, cap, w, rows, out):
    """The no-slip term's blocks (``lattice_fill.wall_viscosity_blocks``) of share row a into particle
    rows[a] of ``out`` (n,6), zeroed beforehand: Σ_b s_ab f_ab w_b with f = clip(1 + (ô_a·off_b - d_a)
    / d_a, 1, cap). The same arithmetic, in the same order, as the numpy statements with
    :func:`weighted_rows` it replaced, without their (k,m) temporaries (with them the no-slip blocks took
    0.08 s a substep of the million-particle dam break, numpy on one thread)."""
    for a in prange(share.shape[0]):
        i = rows[a]
        for b in range(share.shape[1]):
            depth = 0.0
            for c in range(3):
                s = normal[a, c]
                if s == 0.0:
                    continue
                depth += s * off[b, c]
            depth -= d_i[a]
            f = min(max(1.0 + depth / d_i[a], 1.0), cap)
            sf = share[a, b] * f
            if sf == 0.0:
                continue
            for c in range(w.shape[1]):
                out[i, c] += sf * w[b, c]
