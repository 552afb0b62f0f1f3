"""Implicit viscosity and springs: a matrix-free, block-Jacobi preconditioned conjugate gradient solve (numba).

In the spirit of Weiler, Koschier, Brand, Bender, "A Physically Consistent
Implicit Viscosity Solver for SPH Fluids", Computer Graphics Forum 37(2), 2018:
backward Euler on the viscous term, ρ (v - v*) = Δt ∇·(η ∇v), solved by CG
without assembling the matrix. The discrete operator is their Laplacian (a
pair term along x_ij, which conserves linear and angular momentum) with our own
kernel weight and a lattice calibration instead of the kernel's normalisation
(``lattice.viscosity_lattice_constant``):

    (L v)_i = K Σ_j η_ij φ_ij ((v_j - v_i)·r̂_ij) r̂_ij + K η_i B_i (v_w - v_i),

φ_ij = (1 - q_ij), η_ij = (η_i + η_j)/2 the pair's dynamic viscosity (Pa s), and
B_i = Σ_w s_w φ_w r̂_w r̂_wᵀ the same sum over the lattice points continued
behind the colliders, weighted by their share inside the solid (no slip: the
fluid the wall stands for moves with it, here at rest). The system

    A v = (M + Δt L⁺) v = M v*,    M = diag(ρ_i),  L⁺ = -L (symmetric positive semi-definite),

is symmetric positive definite. Deviations from Weiler: the weight φ = 1 - q
and its calibration replace ∇W/(r² + 0.01 h²) (no regularisation is needed: φ
stays finite at r = 0, where the pair is skipped); the preconditioner is the
3x3 block diagonal of A (Weiler's choice), inverted once per solve.

Springs (Clavet 2005, Algorithm 5) are solved in the same system: where Clavet
moves each particle explicitly by D = Δt² k_spring (1 - L/h)(L - r) r̂ per spring,
which is stable only for Δt below ~0.7/sqrt(15 k_spring), we take the springs'
force per unit mass a_s = k_spring (1 - L/h)(r - L) r̂ at the positions the
substep predicts, linearised about the current ones (backward Euler, as Baraff &
Witkin, "Large steps in cloth simulation", SIGGRAPH 1998):

    (I + Δt K_ν + θ Δt² K_s) v = v* + Δt a_s(x),

K_s the springs' stiffness (:func:`spring_terms`: axial κ = k_spring (1 - L/h)
along r̂ r̂ᵀ, and the geometric term κ (1 - L/r)(I - r̂ r̂ᵀ) of stretched springs
only, so K_s is positive semi-definite and A stays SPD; the compressed springs'
negative geometric term stays explicit, Choi & Ko 2002). θ = 1 is
backward Euler; the springs term chooses (``springs_clavet2005.THETA``).
The springs come from the particles' spring rows (partners by id), not from the
neighbour list: a stretched spring may be longer than h.

Vectors are (n,3) arrays; every kernel is nogil and parallel over particles
(each writes only its own row), so the result does not depend on the thread
count except through the order of the dot products' reductions, which numba
performs per thread; to keep bakes bit-identical across thread counts the dot
products here are summed in a fixed order (serial over particles).
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.array_kernels import axpy_rows, dot_rows, xpby_rows
from ..numerics.kernel_cache import njit, prange
from ..numerics.pair_kernels import pair_direction


@njit(**config.NJIT)
def _pair(x, eta, i, j, inv_h):
    """(η_ij φ_ij, r̂_ij) of a pair; a weight of 0 where the pair adds nothing (beyond h, coincident,
    or neither particle viscous)."""
    a, ex, ey, ez = pair_direction(x, i, j, inv_h)
    return 0.5 * (eta[i] + eta[j]) * a, ex, ey, ez


@njit(**config.NJIT)
def _spring_row(i, vin, sj, sw, se):
    """Σ_s [a_is ê ê ᵀ + g_is (I - ê ê ᵀ)] (vin_i - vin_j) over particle i's live springs (j = sj[i, s] >= 0),
    a_is = sw[i, s, 0] (axial), g_is = sw[i, s, 1] (transverse), ê = se[i, s]."""
    ax = 0.0
    ay = 0.0
    az = 0.0
    for s in range(sj.shape[1]):
        j = sj[i, s]
        if j < 0:
            continue
        ex = se[i, s, 0]
        ey = se[i, s, 1]
        ez = se[i, s, 2]
        dx = vin[i, 0] - vin[j, 0]
        dy = vin[i, 1] - vin[j, 1]
        dz = vin[i, 2] - vin[j, 2]
        g = sw[i, s, 1]
        f = (sw[i, s, 0] - g) * (dx * ex + dy * ey + dz * ez)
        ax += f * ex + g * dx
        ay += f * ey + g * dy
        az += f * ez + g * dz
    return ax, ay, az


@njit(**config.NJIT_PARALLEL)
def apply_operator(x, vin, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, out):
    """out = A vin = ρ_i vin_i + coeff Σ_j η_ij φ_ij ((vin_i - vin_j)·r̂) r̂ + coeff η_i B_i vin_i
    + θ Σ_s [a_is ê ê ᵀ + g_is (I - ê ê ᵀ)] (vin_i - vin_j).

    Parameters
    ----------
    x : (n,3) positions, m. vin : (n,3) velocities, m/s. nbr, count : neighbour rows.
    rho : (n,) density of each particle's material, kg/m³. eta : (n,) dynamic viscosity, Pa s.
    coeff : (3,) (Δt K, 1/h, θ): K (1/m², ``lattice.viscosity_lattice_constant``) makes
        Δt K η φ a density (kg/m³), so A is in momentum per volume; 1/h in 1/m; θ the springs'
        implicitness (their stiffness enters A as θ w).
    wall_b : (n,6) the walls' block B_i as (xx, yy, zz, xy, xz, yz), dimensionless.
    sj, sw, se : the springs (:func:`spring_terms`): partner index (n,S), axial and transverse Δt² κ
        (n,S,2) in the units of ρ (unit masses: dimensionless), direction (n,S,3); S may be 0.
    out : (n,3), written.
    """
    n = x.shape[0]
    theta = coeff[2]
    for i in prange(n):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for kk in range(count[i]):
            j = nbr[i, kk]
            wa, ex, ey, ez = _pair(x, eta, i, j, coeff[1])
            if wa == 0.0:
                continue
            u = (vin[i, 0] - vin[j, 0]) * ex + (vin[i, 1] - vin[j, 1]) * ey + (vin[i, 2] - vin[j, 2]) * ez
            f = wa * u
            ax += f * ex
            ay += f * ey
            az += f * ez
        c = coeff[0]
        b = wall_b[i]
        e = eta[i]
        vx = vin[i, 0]
        vy = vin[i, 1]
        vz = vin[i, 2]
        kx, ky, kz = _spring_row(i, vin, sj, sw, se)
        out[i, 0] = rho[i] * vx + c * (ax + e * (b[0] * vx + b[3] * vy + b[4] * vz)) + theta * kx
        out[i, 1] = rho[i] * vy + c * (ay + e * (b[3] * vx + b[1] * vy + b[5] * vz)) + theta * ky
        out[i, 2] = rho[i] * vz + c * (az + e * (b[4] * vx + b[5] * vy + b[2] * vz)) + theta * kz


@njit(**config.NJIT_PARALLEL)
def block_jacobi(x, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, inv):
    """inv[i] = the inverse of A's 3x3 diagonal block of particle i (the preconditioner): the
    viscous pairs' and walls' blocks and θ Σ_s [a_is ê ê ᵀ + g_is (I - ê ê ᵀ)] of its springs."""
    n = x.shape[0]
    for i in prange(n):
        m = np.zeros((3, 3))
        for kk in range(count[i]):
            wa, ex, ey, ez = _pair(x, eta, i, nbr[i, kk], coeff[1])
            if wa == 0.0:
                continue
            m[0, 0] += wa * ex * ex
            m[1, 1] += wa * ey * ey
            m[2, 2] += wa * ez * ez
            m[0, 1] += wa * ex * ey
            m[0, 2] += wa * ex * ez
            m[1, 2] += wa * ey * ez
        k = np.zeros((3, 3))
        for s in range(sj.shape[1]):
            if sj[i, s] < 0:
                continue
            g = sw[i, s, 1]
            w = sw[i, s, 0] - g
            ex = se[i, s, 0]
            ey = se[i, s, 1]
            ez = se[i, s, 2]
            k[0, 0] += w * ex * ex + g
            k[1, 1] += w * ey * ey + g
            k[2, 2] += w * ez * ez + g
            k[0, 1] += w * ex * ey
            k[0, 2] += w * ex * ez
            k[1, 2] += w * ey * ez
        b = wall_b[i]
        e_i = eta[i]
        c = coeff[0]
        t = coeff[2]
        xx = rho[i] + c * (m[0, 0] + e_i * b[0]) + t * k[0, 0]
        yy = rho[i] + c * (m[1, 1] + e_i * b[1]) + t * k[1, 1]
        zz = rho[i] + c * (m[2, 2] + e_i * b[2]) + t * k[2, 2]
        xy = c * (m[0, 1] + e_i * b[3]) + t * k[0, 1]
        xz = c * (m[0, 2] + e_i * b[4]) + t * k[0, 2]
        yz = c * (m[1, 2] + e_i * b[5]) + t * k[1, 2]
        # Inverse of the symmetric block by its adjugate (numba's np.linalg needs scipy); the block
        # is ρ I plus a positive semi-definite part, so its determinant is at least ρ³.
        a00 = yy * zz - yz * yz
        a01 = xz * yz - xy * zz
        a02 = xy * yz - xz * yy
        a11 = xx * zz - xz * xz
        a12 = xy * xz - xx * yz
        a22 = xx * yy - xy * xy
        inv_det = 1.0 / (xx * a00 + xy * a01 + xz * a02)
        inv[i, 0, 0] = a00 * inv_det
        inv[i, 1, 1] = a11 * inv_det
        inv[i, 2, 2] = a22 * inv_det
        inv[i, 0, 1] = inv[i, 1, 0] = a01 * inv_det
        inv[i, 0, 2] = inv[i, 2, 0] = a02 * inv_det
        inv[i, 1, 2] = inv[i, 2, 1] = a12 * inv_det


@njit(**config.NJIT_PARALLEL)
def _precondition(inv, r, z):
    for i in prange(r.shape[0]):
        for p in range(3):
            z[i, p] = inv[i, p, 0] * r[i, 0] + inv[i, p, 1] * r[i, 1] + inv[i, p, 2] * r[i, 2]


@njit(**config.NJIT)
def solve(x, v, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, rhs, tol, max_iter, inv, r, z, p, ap):
    """Preconditioned CG for A v = rhs, from the guess in ``v`` (mutated to the solution).

    Stops when ||r|| <= tol ||rhs|| or after ``max_iter`` iterations. Returns
    (iterations, ||r|| / ||rhs||). r, z, p, ap : (n,3) scratch; inv : (n,3,3) scratch.
    """
    block_jacobi(x, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, inv)
    apply_operator(x, v, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, ap)
    for i in range(v.shape[0]):
        for c in range(3):
            r[i, c] = rhs[i, c] - ap[i, c]
    norm_b = math.sqrt(dot_rows(rhs, rhs))
    if norm_b == 0.0:
        return 0, 0.0
    res = math.sqrt(dot_rows(r, r))
    it = 0
    if res <= tol * norm_b:
        return it, res / norm_b
    _precondition(inv, r, z)
    p[:] = z
    rz = dot_rows(r, z)
    while it < max_iter:
        apply_operator(x, p, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, ap)
        pap = dot_rows(p, ap)
        if pap <= 0.0:
            break
        alpha = rz / pap
        axpy_rows(alpha, p, v)
        axpy_rows(-alpha, ap, r)
        it += 1
        res = math.sqrt(dot_rows(r, r))
        if res <= tol * norm_b:
            break
        _precondition(inv, r, z)
        rz_new = dot_rows(r, z)
        xpby_rows(z, rz_new / rz, p)
        rz = rz_new
    return it, res / norm_b
