"""Numba kernels of the corotated SPH solid (Becker, Ihmsen & Teschner 2009): rest neighbourhoods, the
deformation gradient and its rotation, the first Piola stress, the elastic forces as the gradient of
an energy, and their linearisation for the implicit solve.

Notation (per solid particle i, its rest partners j; d_ij = x⁰_j - x⁰_i the rest offset):

* g_ij = ω(|d_ij|) C_i p(d_ij), with ω(r) = -W'(r)/r of the cubic spline of support h (∇W(x⁰_ij) = -ω d_ij,
  eq. 14) and C_i the first three rows of (Σ_j ω p pᵀ)⁻¹ for the basis p(d) = (d, its quadratic monomials):
  F_i = Σ_j (x_j - x_i) g_ijᵀ is the linear part of a weighted least-squares quadratic fit of the
  neighbours (``elasticity_becker2009_gradient``), exact for any affine motion (Σ_j d_ij g_ijᵀ = I, eq. 14-15 with the
  kernel-gradient correction of Bonet & Lok 1999 carried to second order) and for the curved fields
  of bending. Inside the body the quadratic moments vanish by symmetry and this is the linear
  correction L_i = (Σ_j ω d dᵀ)⁻¹; at a surface the linear fit gave a one-sided neighbourhood the
  strain of its centroid (0.82 of the bending strain three particles across: a cantilever sagged 1.5
  times Euler-Bernoulli's deflection, 1.17 with the fit). The rest volumes ṽ_j = s³ cancel in it.
  A coplanar (sheet) or collinear (rod) neighbourhood makes the linear moments singular: L_i is the
  pseudo-inverse and N_i the projector on its null space, on which F_i is completed by the rotation,
  F_i + R_i N_i (the rank-deficient case that the paper's SVD fallback handles).
* R_i is the rotation of F_i's polar decomposition (``small_matrices.polar_rotation``). Deviation: the
  paper takes R_i from the moment matrix A_pq (eq. 12-13); for an affine motion the two agree, and
  R_i taken from F_i makes RᵢᵀFᵢ symmetric, so P Fᵀ is symmetric and the forces exert no torque:
  angular momentum is conserved exactly (with A_pq it is not).
* Strain and stress: linear, ε = sym(RᵀF) - I, P = R (2μ ε + λ tr ε I) (the corotated linear stress of
  eq. 14-16); Green, E = ½(FᵀF - I), P = F (2μ E + λ tr E I) (Saint-Venant-Kirchhoff). μ, λ are Lamé's
  constants from E and ν.
* Forces. The energy Σ_i ṽ Ψ(F_i) is differentiated exactly: particle i's stress pushes every partner
  j by -ṽ P_i g_ij and itself by +ṽ Σ_j P_i g_ij (eq. 16's pair forces, taken from the energy rather
  than symmetrised by hand, so the sum of forces and of torques vanishes).
* Zero-energy modes: particles moving non-affinely inside a neighbourhood (hourglass modes) leave F_i
  unchanged; the energy ½ Σ_j κ_ij |e_ij|², e_ij = (x_j - x_i) - F_i d_ij, resists them (Ganzenmüller
  2015, "An hourglass control algorithm for Lagrangian SPH", in energy form so the Hessian stays
  symmetric), κ_ij = c 2μ ṽ Ŵ_ij / |d_ij|², Ŵ_ij the normalised kernel weights: c ≈ the ratio of its
  stiffness to the shear stiffness.

The rest state is read once (:func:`rest_fit`, :func:`pair_weights`: each pair's partner index, g_ij,
g_ji, κ_ij, κ_ji), and every pass runs over those pairs: the same kernel serves positions and, with
``increment`` set, velocity fields (the linearisation about the current state, rotations held: the
implicit solve's operator, :func:`solve`). Before, each pass computed every g_ij from the 3x9 fit, and
the solve cost 5 ms an iteration for 1,000 particles; 0.4 ms now.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.array_kernels import axpy_rows, dot_rows, xpby_rows
from ..numerics.kernel_cache import njit, prange
from ..numerics.small_matrices import (
    inverse,
    load,
    mat_add,
    mat_mul,
    mat_t,
    mat_vec,
    outer_add,
    polar_rotation,
    pseudo_inverse_sym,
    store,
)
from .elasticity_becker2009_gradient import grad_weight, gradient_weight, kernel_weight, quadratic_fit, rest_partner

RANK_TOLERANCE = 1e-3  # an eigenvalue of a body's inertia under this share of the largest: a rod's null space
# An eigenvalue of Σ ω d dᵀ under this share of the largest: the neighbourhood is a sheet or a rod, and its
# thin direction is left to the rotation. A lattice's neighbourhoods stay at 0 or above 0.29 (one to three
# layers, h of 2 to 3 spacings); a liquid that froze can leave a sheet with a particle a third of a spacing
# above it (a lava crust's corner), whose share of about 1e-2 made the solve's stiffness 1,500 times the
# sheet's and the conjugate gradients stop at 400 iterations short of the tolerance.
SHEET_TOLERANCE = 0.05
ROTATION_TOLERANCE = 1e-12  # rad, Müller's iteration stops when its update turns less
ROTATION_ITERATIONS = 100


@njit(**config.NJIT_PARALLEL)
def bond(x, ids, mat, source, bonded, solid, nbr, count, h, partner, used_out):
    """Rest neighbourhoods of the particles not bonded yet (eq. 5: fixed in the rest configuration): each
    gets as partners its neighbours within h of the same material and source that are not bonded
    either (one body per source). Rows of bonded particles are left alone; ``used_out`` gets each
    row's need, and a row that does not fit is left for the caller to widen and call again."""
    width = partner.shape[1]
    for i in prange(x.shape[0]):
        used_out[i] = 0
        if bonded[i] or not solid[mat[i]]:
            continue
        k = 0
        for kk in range(count[i]):
            j = nbr[i, kk]
            if j == i or bonded[j] or mat[j] != mat[i] or source[j] != source[i]:
                continue
            dx = x[j, 0] - x[i, 0]
            dy = x[j, 1] - x[i, 1]
            dz = x[j, 2] - x[i, 2]
            if dx * dx + dy * dy + dz * dz >= h * h:
                continue
            if k < width:
                partner[i, k] = ids[j]
            k += 1
        used_out[i] = k
        for kk in range(k, width):
            partner[i, kk] = -1


@njit(**config.NJIT)
def _stress(f, r, mu, lam, green):
    """First Piola stress of F = ``f`` (R = ``r`` its rotation)."""
    if green:
        ftf = mat_mul(mat_t(f), f)
        e = (ftf[0] - 1.0, ftf[1], ftf[2], ftf[3], ftf[4] - 1.0, ftf[5], ftf[6], ftf[7], ftf[8] - 1.0)
        tr = 0.5 * (e[0] + e[4] + e[8])
        s = mat_add((lam * tr, 0.0, 0.0, 0.0, lam * tr, 0.0, 0.0, 0.0, lam * tr), e, mu)  # 2μ E, E = e / 2
        return mat_mul(f, s)
    rtf = mat_mul(mat_t(r), f)
    tr = rtf[0] + rtf[4] + rtf[8] - 3.0
    s = (2.0 * mu * (rtf[0] - 1.0) + lam * tr, mu * (rtf[1] + rtf[3]), mu * (rtf[2] + rtf[6]),
         mu * (rtf[1] + rtf[3]), 2.0 * mu * (rtf[4] - 1.0) + lam * tr, mu * (rtf[5] + rtf[7]),
         mu * (rtf[2] + rtf[6]), mu * (rtf[5] + rtf[7]), 2.0 * mu * (rtf[8] - 1.0) + lam * tr)
    return mat_mul(r, s)


@njit(**config.NJIT)
def _stress_increment(df, f, r, mu, lam, green):
    """The stress's change for a change ``df`` of F, rotation held (linear), or its Gauss-Newton part
    F (2μ δE + λ tr δE I), δE = sym(Fᵀ δF) (Green: the part that keeps the operator positive)."""
    a = mat_mul(mat_t(f if green else r), df)
    tr = a[0] + a[4] + a[8]
    s = (2.0 * mu * a[0] + lam * tr, mu * (a[1] + a[3]), mu * (a[2] + a[6]),
         mu * (a[1] + a[3]), 2.0 * mu * a[4] + lam * tr, mu * (a[5] + a[7]),
         mu * (a[2] + a[6]), mu * (a[5] + a[7]), 2.0 * mu * a[8] + lam * tr)
    return mat_mul(f if green else r, s)


@njit(**config.NJIT_PARALLEL)
def rest_fit(rest, partner, index_of_id, mat, solid, h, corr, wsum, null_out):
    """Per solid particle, from its rest neighbourhood: the fit C_i (``corr``, 3x9), the kernel sum Σ_j Ŵ
    (``wsum``) and the projector N_i on the null space of its linear moments (``null_out``, 9; zero for a
    neighbourhood that spans three dimensions)."""
    for i in prange(rest.shape[0]):
        if not solid[mat[i]] or partner[i, 0] < 0:
            continue
        a = np.empty((3, 3))
        v = np.empty((3, 3))
        mm = (0.0,) * 9
        ws = 0.0
        for kk in range(partner.shape[1]):
            j, dx, dy, dz = rest_partner(rest, partner, index_of_id, i, kk)
            if j == -1:
                break
            if j < 0:
                continue
            r = math.sqrt(dx * dx + dy * dy + dz * dz)
            mm = outer_add(mm, grad_weight(r, h), dx, dy, dz, dx, dy, dz)
            ws += kernel_weight(r, h)
        ell, null = pseudo_inverse_sym(mm, a, v, SHEET_TOLERANCE)
        if null[0] + null[4] + null[8] > 0.5 or not quadratic_fit(i, rest, partner, index_of_id, h, corr):
            for c in range(27):
                corr[i, c] = 0.0
            for r3 in range(3):
                for c in range(3):
                    corr[i, 9 * r3 + c] = ell[3 * r3 + c]
        wsum[i] = ws
        store(null_out, i, null)


@njit(**config.NJIT_PARALLEL)
def pair_weights(rest, partner, index_of_id, mat, solid, hourglass, h, corr, wsum, nb, g, grev, kap, krev, kmom):
    """What every pass of a substep reads per rest pair (i, its kk-th partner j), computed once: the index
    j (``nb``: -1 past the row's end, -2 for a partner gone), the gradient weights g_ij and g_ji (``g``,
    ``grev``), the hourglass stiffnesses κ_ij of i's energy and κ_ji of j's (``kap``, ``krev``); per particle
    K_i = Σ_j κ_ij d_ij d_ijᵀ (``kmom``, 9), which turns the hourglass moment into one pass."""
    for i in prange(rest.shape[0]):
        if not solid[mat[i]] or partner[i, 0] < 0:
            continue
        mi = mat[i]
        kk_sum = (0.0,) * 9
        for kk in range(partner.shape[1]):
            j, dx, dy, dz = rest_partner(rest, partner, index_of_id, i, kk)
            nb[i, kk] = j
            if j == -1:
                break
            if j < 0:
                continue
            g[i, kk, 0], g[i, kk, 1], g[i, kk, 2] = gradient_weight(corr, i, dx, dy, dz, h)
            grev[i, kk, 0], grev[i, kk, 1], grev[i, kk, 2] = gradient_weight(corr, j, -dx, -dy, -dz, h)
            r2 = dx * dx + dy * dy + dz * dz
            w = kernel_weight(math.sqrt(r2), h)
            mj = mat[j]
            kap[i, kk] = hourglass[mi] * w / (wsum[i] * r2) if hourglass[mi] > 0.0 and wsum[i] > 0.0 else 0.0
            krev[i, kk] = hourglass[mj] * w / (wsum[j] * r2) if hourglass[mj] > 0.0 and wsum[j] > 0.0 else 0.0
            kk_sum = outer_add(kk_sum, kap[i, kk], dx, dy, dz, dx, dy, dz)
        store(kmom, i, kk_sum)


@njit(**config.NJIT_PARALLEL)
def deformation(y, rest, nb, g, kap, kmom, null, mat, solid, mu, lam, green, vol, increment, rot, f_now, f_out,
                m_out):
    """Per solid particle: F_i and M_i = ṽ P_i - Q_i (stress P_i, hourglass moment Q_i = Σ_j κ_ij e_ij d_ijᵀ
    = Σ_j κ_ij (y_j - y_i) d_ijᵀ - F_i K_i) into ``f_out``, ``m_out`` (n,9).

    ``increment`` false: ``y`` are positions, and the rotation R_i (``rot``: the last one in, the new one
    out) is found first. ``increment`` true: ``y`` is a velocity field w and the outputs are the changes
    δF_i, δM_i for a displacement w (linear in w: rotations held, about the current F_i in ``f_now``).
    """
    for i in prange(y.shape[0]):
        if not solid[mat[i]] or nb[i, 0] == -1:
            continue
        m = mat[i]
        f = (0.0,) * 9
        b = (0.0,) * 9
        for kk in range(nb.shape[1]):
            j = nb[i, kk]
            if j == -1:
                break
            if j < 0:
                continue
            ux = y[j, 0] - y[i, 0]
            uy = y[j, 1] - y[i, 1]
            uz = y[j, 2] - y[i, 2]
            f = outer_add(f, 1.0, ux, uy, uz, g[i, kk, 0], g[i, kk, 1], g[i, kk, 2])
            b = outer_add(b, kap[i, kk], ux, uy, uz, rest[j, 0] - rest[i, 0], rest[j, 1] - rest[i, 1],
                          rest[j, 2] - rest[i, 2])
        if increment:
            p = _stress_increment(f, load(f_now, i), load(rot, i), mu[m], lam[m], green[m])
        else:
            nl = load(null, i)
            r = polar_rotation(f, load(rot, i), ROTATION_TOLERANCE, ROTATION_ITERATIONS, nl[0] + nl[4] + nl[8])
            store(rot, i, r)
            f = mat_add(f, mat_mul(r, nl), 1.0)
            p = _stress(f, r, mu[m], lam[m], green[m])
        q = mat_add(b, mat_mul(f, load(kmom, i)), -1.0)
        store(f_out, i, f)
        store(m_out, i, mat_add(mat_add((0.0,) * 9, p, vol), q, -1.0))


@njit(**config.NJIT_PARALLEL)
def forces(y, rest, nb, g, grev, kap, krev, mat, solid, scale, f, m, mass, inertia, out):
    """out_a = Σ over the energies the force they exert on a (the negative gradient), each energy's share
    times ``scale`` of its particle (by row): a's own, +Σ_j b_aj, and its partners', -b_ja, with
    b_ij = M_i g_ij + κ_ij (y_j - y_i - F_i d_ij) what i's energy pushes its partner j with (eq. 16's pair
    forces). With the outputs of :func:`deformation` for positions, the elastic forces, N; for a velocity
    field, their change. ``inertia``: out_a = m_a y_a - (that), the implicit solve's operator (M + c H) y.
    Rows without partners get zero."""
    for a in prange(y.shape[0]):
        ma = mat[a]
        if not solid[ma] or nb[a, 0] == -1:
            out[a, 0] = 0.0
            out[a, 1] = 0.0
            out[a, 2] = 0.0
            continue
        fa = load(f, a)
        ma_ = load(m, a)
        sa = scale[a]
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for kk in range(nb.shape[1]):
            j = nb[a, kk]
            if j == -1:
                break
            if j < 0:
                continue
            dx = rest[j, 0] - rest[a, 0]
            dy = rest[j, 1] - rest[a, 1]
            dz = rest[j, 2] - rest[a, 2]
            ux = y[j, 0] - y[a, 0]
            uy = y[j, 1] - y[a, 1]
            uz = y[j, 2] - y[a, 2]
            k = kap[a, kk]
            gx, gy, gz = mat_vec(ma_, g[a, kk, 0], g[a, kk, 1], g[a, kk, 2])
            fx, fy, fz = mat_vec(fa, dx, dy, dz)
            sx += sa * (gx + k * (ux - fx))
            sy += sa * (gy + k * (uy - fy))
            sz += sa * (gz + k * (uz - fz))
            # j's energy on a: the offset and the displacement turned round.
            k = krev[a, kk]
            gx, gy, gz = mat_vec(load(m, j), grev[a, kk, 0], grev[a, kk, 1], grev[a, kk, 2])
            fx, fy, fz = mat_vec(load(f, j), dx, dy, dz)
            sj = scale[j]
            sx -= sj * (gx - k * (ux - fx))
            sy -= sj * (gy - k * (uy - fy))
            sz -= sj * (gz - k * (uz - fz))
        if inertia:
            out[a, 0] = mass[ma] * y[a, 0] - sx
            out[a, 1] = mass[ma] * y[a, 1] - sy
            out[a, 2] = mass[ma] * y[a, 2] - sz
        else:
            out[a, 0] = sx
            out[a, 1] = sy
            out[a, 2] = sz


@njit(**config.NJIT_PARALLEL)
def preconditioner(nb, g, grev, kap, krev, mat, solid, mu, lam, vol, mass, scale, rot, out):
    """Inverse of each solid particle's 3x3 diagonal block of m I + c H (H the energies' Hessian, c =
    ``scale``): from every energy that moves with it, ṽ (μ |c|² I + (μ + λ) (R c)(R c)ᵀ) for the
    gradient weight c of a in it, and κ I for each hourglass pair (block-Jacobi)."""
    for a in prange(nb.shape[0]):
        if solid[mat[a]] and nb[a, 0] != -1:
            store(out, a, _block_one(a, nb, g, grev, kap, krev, mat, mu, lam, vol, mass, scale, rot))


@njit(**config.NJIT)
def _block_one(a, nb, g, grev, kap, krev, mat, mu, lam, vol, mass, scale, rot):
    """The inverse of particle a's diagonal block (:func:`preconditioner`)."""
    ma = mat[a]
    blk = (mass[ma], 0.0, 0.0, 0.0, mass[ma], 0.0, 0.0, 0.0, mass[ma])
    cx = 0.0
    cy = 0.0
    cz = 0.0
    for kk in range(nb.shape[1]):
        j = nb[a, kk]
        if j == -1:
            break
        if j < 0:
            continue
        cx -= g[a, kk, 0]
        cy -= g[a, kk, 1]
        cz -= g[a, kk, 2]
        # a in j's energy: the weight g_ja of the offset -d.
        mj = mat[j]
        gx, gy, gz = grev[a, kk, 0], grev[a, kk, 1], grev[a, kk, 2]
        rx, ry, rz = mat_vec(load(rot, j), gx, gy, gz)
        s = scale[j] * vol
        diag = s * mu[mj] * (gx * gx + gy * gy + gz * gz) + scale[j] * (kap[a, kk] + krev[a, kk])
        blk = outer_add(blk, s * (mu[mj] + lam[mj]), rx, ry, rz, rx, ry, rz)
        blk = (blk[0] + diag, blk[1], blk[2], blk[3], blk[4] + diag, blk[5], blk[6], blk[7], blk[8] + diag)
    rx, ry, rz = mat_vec(load(rot, a), cx, cy, cz)
    s = scale[a] * vol
    diag = s * mu[ma] * (cx * cx + cy * cy + cz * cz)
    blk = outer_add(blk, s * (mu[ma] + lam[ma]), rx, ry, rz, rx, ry, rz)
    blk = (blk[0] + diag, blk[1], blk[2], blk[3], blk[4] + diag, blk[5], blk[6], blk[7], blk[8] + diag)
    return inverse(blk)


@njit(**config.NJIT_PARALLEL)
def apply_blocks(blocks, r, mat, solid, nb, out):
    """out_a = blocks_a r_a for solid particles with partners (``nb`` of :func:`pair_weights`; the
    preconditioner), 0 elsewhere."""
    for a in prange(r.shape[0]):
        if not solid[mat[a]] or nb[a, 0] == -1:
            out[a, 0] = 0.0
            out[a, 1] = 0.0
            out[a, 2] = 0.0
            continue
        x, y, z = _block_times(blocks, a, r)
        out[a, 0] = x
        out[a, 1] = y
        out[a, 2] = z


@njit(**config.NJIT)
def solve(rest, nb, g, grev, kap, krev, kmom, null, mat, solid, mu, lam, green, vol, mass, c, rot, f, b, dv, blocks,
          held, normal, tolerance, floor, max_iterations):
    """Preconditioned conjugate gradients on (M + c H) dv = b from the given ``dv`` (mutated), the
    operator that of :func:`deformation` and :func:`forces` for a velocity field, the preconditioner
    ``blocks``; the components of dv along ``normal`` of the ``held`` rows stay as given (Baraff & Witkin
    1998, section 5.3: the residual and the search directions filtered). Stops at a residual of
    ``tolerance`` times |b|, or ``floor`` where |b| is smaller; returns (iterations, relative residual)."""
    n = dv.shape[0]
    df, dm = np.empty((n, 9)), np.empty((n, 9))
    r, z, p, ap = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
    along = np.empty(held.shape[0])
    deformation(dv, rest, nb, g, kap, kmom, null, mat, solid, mu, lam, green, vol, True, rot, f, df, dm)
    forces(dv, rest, nb, g, grev, kap, krev, mat, solid, c, df, dm, mass, True, ap)
    for i in range(n):
        for k in range(3):
            r[i, k] = b[i, k] - ap[i, k]
    project_out(r, held, normal, along)
    b_norm = max(math.sqrt(dot_rows(b, b)), floor)
    apply_blocks(blocks, r, mat, solid, nb, z)
    p[:] = z
    project_out(p, held, normal, along)
    rz = dot_rows(r, p)
    res = math.sqrt(dot_rows(r, r)) / b_norm
    it = 0
    while res > tolerance and it < max_iterations:
        deformation(p, rest, nb, g, kap, kmom, null, mat, solid, mu, lam, green, vol, True, rot, f, df, dm)
        forces(p, rest, nb, g, grev, kap, krev, mat, solid, c, df, dm, mass, True, ap)
        project_out(ap, held, normal, along)
        pap = dot_rows(p, ap)
        if pap <= 0.0:
            break
        alpha = rz / pap
        axpy_rows(alpha, p, dv)
        axpy_rows(-alpha, ap, r)
        res = math.sqrt(dot_rows(r, r)) / b_norm
        it += 1
        apply_blocks(blocks, r, mat, solid, nb, z)
        rz_new = dot_rows(r, z)
        xpby_rows(z, rz_new / rz, p)
        project_out(p, held, normal, along)
        rz = rz_new
    return it, res


@njit(**config.NJIT)
def project_out(w, rows, normal, along):
    """w_a -= (w_a · n) n for each (row a, direction n) listed, every projection taken from w as given (one
    row may be listed once per direction, its directions orthonormal). ``along``: scratch, one a listing."""
    for k in range(rows.shape[0]):
        a = rows[k]
        along[k] = w[a, 0] * normal[k, 0] + w[a, 1] * normal[k, 1] + w[a, 2] * normal[k, 2]
    for k in range(rows.shape[0]):
        a = rows[k]
        for c in range(3):
            w[a, c] -= along[k] * normal[k, c]


@njit(**config.NJIT)
def _block_times(blocks, a, r):
    return mat_vec(load(blocks, a), r[a, 0], r[a, 1], r[a, 2])


@njit(**config.NJIT)
def keep_momenta(x, dv, rows, body, free, mass):
    """Remove from the velocity change ``dv`` of each free body (``free[body]``) its net linear and angular
    impulse: dv_a -= u + ω × (x_a - c), with u = Σ m dv / Σ m and ω = I⁻¹ Σ m (x - c) × dv about the
    body's centre c (pseudo-inverse: a rod has no inertia about its axis, nor angular impulse about it).

    Why: the elastic forces are internal and exert no net force or torque (eq. 16 as an energy's
    gradient), and x += Δt (v + Δv) keeps L = Σ m x × v exactly when Σ m x × Δv = 0. The solve's Δv
    breaks that by the CG residual and by the operator: with the rotations held, a rigid turn of a
    strained neighbourhood changes the linear stress R (2μ sym(RᵀδF) + λ tr(RᵀδF) I), so the implicit
    term exerts a torque (a spinning jelly cube lost 4.5e-4 of L in 0.5 s, 1e-5 with Green strain).
    Bodies with a particle held on a collider are not free and keep their Δv.

    ``rows`` the solid particles' indices, ``body`` their bodies (0 .. n-1), ``mass`` their masses."""
    nb = free.shape[0]
    acc = np.zeros((nb, 19))  # m, m x, m dv, m r × dv, m |r|², m r rᵀ (6)
    for k in range(rows.shape[0]):
        a, b, m = rows[k], body[k], mass[k]
        acc[b, 0] += m
        for c in range(3):
            acc[b, 1 + c] += m * x[a, c]
            acc[b, 4 + c] += m * dv[a, c]
    for b in range(nb):
        if acc[b, 0] > 0.0:
            for c in range(1, 7):
                acc[b, c] /= acc[b, 0]
    for k in range(rows.shape[0]):
        a, b, m = rows[k], body[k], mass[k]
        rx, ry, rz = x[a, 0] - acc[b, 1], x[a, 1] - acc[b, 2], x[a, 2] - acc[b, 3]
        acc[b, 7] += m * (ry * dv[a, 2] - rz * dv[a, 1])
        acc[b, 8] += m * (rz * dv[a, 0] - rx * dv[a, 2])
        acc[b, 9] += m * (rx * dv[a, 1] - ry * dv[a, 0])
        acc[b, 10] += m * (rx * rx + ry * ry + rz * rz)
        acc[b, 11] += m * rx * rx
        acc[b, 12] += m * rx * ry
        acc[b, 13] += m * rx * rz
        acc[b, 14] += m * ry * ry
        acc[b, 15] += m * ry * rz
        acc[b, 16] += m * rz * rz
    omega = np.zeros((nb, 3))
    sa = np.empty((3, 3))
    sv = np.empty((3, 3))
    for b in range(nb):
        if free[b] and acc[b, 0] > 0.0:
            s = acc[b, 10]
            inertia = (s - acc[b, 11], -acc[b, 12], -acc[b, 13], -acc[b, 12], s - acc[b, 14], -acc[b, 15],
                       -acc[b, 13], -acc[b, 15], s - acc[b, 16])
            inv, _ = pseudo_inverse_sym(inertia, sa, sv, RANK_TOLERANCE)
            omega[b, 0], omega[b, 1], omega[b, 2] = mat_vec(inv, acc[b, 7], acc[b, 8], acc[b, 9])
    for k in range(rows.shape[0]):
        a, b = rows[k], body[k]
        if not free[b]:
            continue
        rx, ry, rz = x[a, 0] - acc[b, 1], x[a, 1] - acc[b, 2], x[a, 2] - acc[b, 3]
        dv[a, 0] -= acc[b, 4] + omega[b, 1] * rz - omega[b, 2] * ry
        dv[a, 1] -= acc[b, 5] + omega[b, 2] * rx - omega[b, 0] * rz
        dv[a, 2] -= acc[b, 6] + omega[b, 0] * ry - omega[b, 1] * rx
