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

Every pair sum runs over the rest partners by stable id (``partner``, -1 for an empty slot), so the
same kernel serves positions and, with ``increment`` set, velocity fields (the linearisation about the
current state, rotations held: the implicit solve's operator).
"""

from __future__ import annotations

import math

import numpy as np

from .. import config
from ..kernel_cache import njit, prange
from ..small_matrices import (
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
from .elasticity_becker2009_gradient import (
    grad_weight,
    gradient_weight,
    kernel_weight,
    quadratic_fit,
    rest_partner,
)

RANK_TOLERANCE = 1e-3  # an eigenvalue of Σ ω d dᵀ under this share of the largest: a sheet's or rod's null space
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
def deformation(y, rest, partner, index_of_id, mat, solid, mu, lam, green, hourglass, h, increment,
                rot, corr, wsum, f_now, f_out, p_out, q_out):
    """Per solid particle: F_i, the stress P_i and the hourglass moment Q_i = Σ_j κ_ij e_ij d_ijᵀ into
    ``f_out``, ``p_out``, ``q_out`` (n,9).

    ``increment`` false: ``y`` are positions; the correction L_i (``corr``), the normalisation Σ_j Ŵ
    (``wsum``) and the rotation R_i (``rot``: the last one in, the new one out) are computed first.
    ``increment`` true: ``y`` is a velocity field w and the outputs are the changes δF_i, δP_i, δQ_i
    for a displacement w (linear in w: rotations held, about the current F_i in ``f_now``).
    """
    for i in prange(y.shape[0]):
        if solid[mat[i]] and partner[i, 0] >= 0:
            _deform_one(i, y, rest, partner, index_of_id, mat, mu, lam, green, hourglass, h, increment, rot, corr,
                        wsum, f_now, f_out, p_out, q_out)


@njit(**config.NJIT)
def _deform_one(i, y, rest, partner, index_of_id, mat, mu, lam, green, hourglass, h, increment, rot, corr, wsum,
                f_now, f_out, p_out, q_out):
    """:func:`deformation` for particle i."""
    m = mat[i]
    null = (0.0,) * 9
    if not increment:
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
        ell, null = pseudo_inverse_sym(mm, a, v, RANK_TOLERANCE)
        if null[0] + null[4] + null[8] > 0.5 or not quadratic_fit(i, rest, partner, index_of_id, h, corr):
            for c in range(27):
                corr[i, c] = 0.0
            for r3 in range(3):
                for c in range(3):
                    corr[i, 9 * r3 + c] = ell[3 * r3 + c]
        wsum[i] = ws
    f = (0.0,) * 9
    for kk in range(partner.shape[1]):
        j, dx, dy, dz = rest_partner(rest, partner, index_of_id, i, kk)
        if j == -1:
            break
        if j < 0:
            continue
        gx, gy, gz = gradient_weight(corr, i, dx, dy, dz, h)
        f = outer_add(f, 1.0, y[j, 0] - y[i, 0], y[j, 1] - y[i, 1], y[j, 2] - y[i, 2], gx, gy, gz)
    if increment:
        p = _stress_increment(f, load(f_now, i), load(rot, i), mu[m], lam[m], green[m])
    else:
        r0 = load(rot, i)
        r = polar_rotation(f, r0, ROTATION_TOLERANCE, ROTATION_ITERATIONS, null[0] + null[4] + null[8])
        store(rot, i, r)
        f = mat_add(f, mat_mul(r, null), 1.0)
        p = _stress(f, r, mu[m], lam[m], green[m])
    q = (0.0,) * 9
    if hourglass[m] > 0.0 and wsum[i] > 0.0:
        for kk in range(partner.shape[1]):
            j, dx, dy, dz = rest_partner(rest, partner, index_of_id, i, kk)
            if j == -1:
                break
            if j < 0:
                continue
            r2 = dx * dx + dy * dy + dz * dz
            kap = hourglass[m] * kernel_weight(math.sqrt(r2), h) / (wsum[i] * r2)
            fx, fy, fz = mat_vec(f, dx, dy, dz)
            q = outer_add(q, kap, y[j, 0] - y[i, 0] - fx, y[j, 1] - y[i, 1] - fy, y[j, 2] - y[i, 2] - fz,
                          dx, dy, dz)
    store(f_out, i, f)
    store(p_out, i, p)
    store(q_out, i, q)


@njit(**config.NJIT)
def _pair_term(y, rest, index_of_id, mat, hourglass, h, vol, corr, wsum, f, p, q, i, j):
    """b_ij: what particle i's energies push its partner j with, -b_ij on j and +b_ij on i:
    ṽ P_i g_ij + κ_ij e_ij - Q_i g_ij."""
    dx = rest[j, 0] - rest[i, 0]
    dy = rest[j, 1] - rest[i, 1]
    dz = rest[j, 2] - rest[i, 2]
    r2 = dx * dx + dy * dy + dz * dz
    r = math.sqrt(r2)
    gx, gy, gz = gradient_weight(corr, i, dx, dy, dz, h)
    px, py, pz = mat_vec(load(p, i), gx, gy, gz)
    bx = vol * px
    by = vol * py
    bz = vol * pz
    m = mat[i]
    if hourglass[m] > 0.0 and wsum[i] > 0.0:
        kap = hourglass[m] * kernel_weight(r, h) / (wsum[i] * r2)
        fx, fy, fz = mat_vec(load(f, i), dx, dy, dz)
        qx, qy, qz = mat_vec(load(q, i), gx, gy, gz)
        bx += kap * (y[j, 0] - y[i, 0] - fx) - qx
        by += kap * (y[j, 1] - y[i, 1] - fy) - qy
        bz += kap * (y[j, 2] - y[i, 2] - fz) - qz
    return bx, by, bz


@njit(**config.NJIT_PARALLEL)
def forces(y, rest, partner, index_of_id, mat, solid, hourglass, h, vol, scale, corr, wsum, f, p, q, out):
    """out_a = Σ over the energies the force they exert on a (the negative gradient), each energy's share
    times ``scale`` of its particle's material: a's own (+Σ_j b_aj) and its partners' (-b_ia). With the
    outputs of :func:`deformation` for positions, the elastic forces, N; for a velocity field, their
    change (the operator of the implicit solve). Rows of other particles are left alone."""
    for a in prange(y.shape[0]):
        ma = mat[a]
        if not solid[ma] or partner[a, 0] < 0:
            continue
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for kk in range(partner.shape[1]):
            j, _, _, _ = rest_partner(rest, partner, index_of_id, a, kk)
            if j == -1:
                break
            if j < 0:
                continue
            bx, by, bz = _pair_term(y, rest, index_of_id, mat, hourglass, h, vol, corr, wsum, f, p, q, a, j)
            s = scale[ma]
            sx += s * bx
            sy += s * by
            sz += s * bz
            bx, by, bz = _pair_term(y, rest, index_of_id, mat, hourglass, h, vol, corr, wsum, f, p, q, j, a)
            s = scale[mat[j]]
            sx -= s * bx
            sy -= s * by
            sz -= s * bz
        out[a, 0] = sx
        out[a, 1] = sy
        out[a, 2] = sz


@njit(**config.NJIT_PARALLEL)
def preconditioner(rest, partner, index_of_id, mat, solid, mu, lam, hourglass, h, vol, mass, scale, corr, wsum,
                   rot, out):
    """Inverse of each solid particle's 3x3 diagonal block of m I + c H (H the energies' Hessian, c =
    ``scale``): from every energy that moves with it, ṽ (μ |c|² I + (μ + λ) (R c)(R c)ᵀ) for the
    gradient weight c of a in it, and κ I for each hourglass pair (block-Jacobi)."""
    for a in prange(rest.shape[0]):
        if solid[mat[a]] and partner[a, 0] >= 0:
            store(out, a, _block_one(a, rest, partner, index_of_id, mat, mu, lam, hourglass, h, vol, mass, scale,
                                     corr, wsum, rot))


@njit(**config.NJIT)
def _block_one(a, rest, partner, index_of_id, mat, mu, lam, hourglass, h, vol, mass, scale, corr, wsum, rot):
    """The inverse of particle a's diagonal block (:func:`preconditioner`)."""
    ma = mat[a]
    blk = (mass[ma], 0.0, 0.0, 0.0, mass[ma], 0.0, 0.0, 0.0, mass[ma])
    cx = 0.0
    cy = 0.0
    cz = 0.0
    for kk in range(partner.shape[1]):
        j, dx, dy, dz = rest_partner(rest, partner, index_of_id, a, kk)
        if j == -1:
            break
        if j < 0:
            continue
        r2 = dx * dx + dy * dy + dz * dz
        r = math.sqrt(r2)
        gx, gy, gz = gradient_weight(corr, a, dx, dy, dz, h)
        cx -= gx
        cy -= gy
        cz -= gz
        # a in j's energy: the weight g_ja of the offset -d.
        mj = mat[j]
        gx, gy, gz = gradient_weight(corr, j, -dx, -dy, -dz, h)
        rx, ry, rz = mat_vec(load(rot, j), gx, gy, gz)
        s = scale[mj] * vol
        g2 = gx * gx + gy * gy + gz * gz
        diag = s * mu[mj] * g2
        kap = 0.0
        w = kernel_weight(r, h)
        if wsum[j] > 0.0:
            kap += hourglass[mj] * w / (wsum[j] * r2)
        if wsum[a] > 0.0:
            kap += hourglass[ma] * w / (wsum[a] * r2)
        diag += scale[mj] * kap
        blk = outer_add(blk, s * (mu[mj] + lam[mj]), rx, ry, rz, rx, ry, rz)
        blk = (blk[0] + diag, blk[1], blk[2], blk[3], blk[4] + diag, blk[5], blk[6], blk[7], blk[8] + diag)
    rx, ry, rz = mat_vec(load(rot, a), cx, cy, cz)
    s = scale[ma] * vol
    diag = s * mu[ma] * (cx * cx + cy * cy + cz * cz)
    blk = outer_add(blk, s * (mu[ma] + lam[ma]), rx, ry, rz, rx, ry, rz)
    blk = (blk[0] + diag, blk[1], blk[2], blk[3], blk[4] + diag, blk[5], blk[6], blk[7], blk[8] + diag)
    return inverse(blk)


@njit(**config.NJIT_PARALLEL)
def apply_blocks(blocks, r, mat, solid, partner, out):
    """out_a = blocks_a r_a for solid particles (the preconditioner), 0 elsewhere."""
    for a in prange(r.shape[0]):
        if not solid[mat[a]] or partner[a, 0] < 0:
            out[a, 0] = 0.0
            out[a, 1] = 0.0
            out[a, 2] = 0.0
            continue
        x, y, z = _block_times(blocks, a, r)
        out[a, 0] = x
        out[a, 1] = y
        out[a, 2] = z


@njit(**config.NJIT)
def _block_times(blocks, a, r):
    return mat_vec(load(blocks, a), r[a, 0], r[a, 1], r[a, 2])


@njit(**config.NJIT)
def keep_momenta(x, dv, rows, body, free, mass):
    """Remove from the velocity change ``dv`` of each free body (``free[body]``) its net linear and angular
    impulse: dv_a -= u + ω × (x_a - c), with u = Σ m dv / Σ m and ω = I⁻¹ Σ m (x - c) × dv about the
    body's centre c (pseudo-inverse: a rod has no inertia about its axis, nor angular impulse about it).

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
