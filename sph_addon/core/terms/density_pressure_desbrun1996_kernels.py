"""Numba kernels of Desbrun & Cani's density and pressure (``density_pressure_desbrun1996``), with the pair
forces of the terms that share its loop over pairs.

One pass over a set of particles (``rows``, world indices) for the kernel-sum density (eq. 3), one
for the state equation (eq. 6), one for the pair forces, one for each particle's stable step (eq. 8).
Every kernel gathers into its own particle from full neighbour rows, so the rows run in parallel,
race-free, and the sums are in the same order at any thread count.

The pair forces are one loop: the symmetric pressure (eqs. 4, 7) with Monaghan 2000's artificial
pressure, Monaghan's artificial viscosity Π_ij (eq. 5, ``artificial_viscosity_monaghan1992_kernels``)
added to the same pair factor, and Morris' viscous Laplacian (``viscosity_morris1997_kernels``) added
to the same running sum, pair by pair. Three loops summed afterwards would add the same numbers in
another order, and the particles would move differently in the last bits (bakes would not keep their
bytes); the three terms keep their formulas in their own files and this loop calls them.

Kernels (``h`` is the support; Desbrun's smoothing length is h/2, as in his anti-clustering kernel):

* density: the cubic spline with support h (Monaghan 1992, SPlisHSPlasH's ``CubicKernel``;
  ``numerics.kernels.cubic_spline_shape``), divided by its sum over the particle lattice so that a
  lattice at rest is exactly at ρ0;
* pressure, cohesion and artificial viscosity: the anti-clustering kernel of section 3.2, whose
  gradient does not vanish at r = 0 (15/(π h³) (1 - r/h)³ with support h);
* viscous Laplacian: Morris, Fox & Zhu 1997 (J. Comput. Phys. 136, eq. 10), the form of Treuille's
  f = μ Σ m_j (v_j - v_i)/ρ_j ∇²W that holds the kinematic viscosity ν at any spacing (a kernel's
  own ∇²W does not).

The walls (a collider's fluid mirrored behind its flat faces) enter through :func:`_wall_share` and
:func:`_wall_gradient`, on the tables of ``density_pressure_desbrun1996_walls``.
"""

from __future__ import annotations

import math

from ..numerics import config
from ..numerics.kernel_cache import njit, prange
from ..numerics.kernels import cubic_spline_shape
from .artificial_viscosity_monaghan1992_kernels import approach_rate, viscous_pressure
from .viscosity_morris1997_kernels import pair_factor, viscous_step


@njit(**config.NJIT)
def _table(table, step, d):
    """``table`` (sampled every ``step`` m from 0) at ``d`` m, linearly interpolated, 0 beyond its end."""
    u = (d if d > 0.0 else 0.0) / step
    k = int(u)
    if k >= table.shape[0] - 1:
        return 0.0
    f = u - k
    return table[k] * (1.0 - f) + table[k + 1] * f


@njit(**config.NJIT)
def _table2(table, step, a, b):
    """``table`` (sampled every ``step`` m from 0 along both axes) at (a, b), bilinear, 0 beyond its end."""
    u = (a if a > 0.0 else 0.0) / step
    w = (b if b > 0.0 else 0.0) / step
    i = int(u)
    j = int(w)
    if i >= table.shape[0] - 1 or j >= table.shape[1] - 1:
        return 0.0
    f = u - i
    g = w - j
    return ((table[i, j] * (1.0 - g) + table[i, j + 1] * g) * (1.0 - f)
            + (table[i + 1, j] * (1.0 - g) + table[i + 1, j + 1] * g) * f)


@njit(**config.NJIT)
def _f4(q, inv_w_spacing):
    """Monaghan 2000's (W(r)/W(s))⁴ at q = r/h, of the cubic spline (its constant cancels)."""
    fw = cubic_spline_shape(q) * inv_w_spacing
    fw *= fw
    return fw * fw


@njit(**config.NJIT)
def _distance(planes, k, x, y, z):
    """Signed distance from (x, y, z) to plane ``k`` of ``planes`` (n·x = c), m, positive on the fluid's side."""
    return planes[k, 0] * x + planes[k, 1] * y + planes[k, 2] * z - planes[k, 3]


@njit(**config.NJIT)
def _wall_share(planes, edges, gamma, step, quarter, step2, h, x, y, z):
    """The share of the density kernel at (x, y, z) behind the flat walls ``planes``: Σ Γ(d) over the walls
    within h, less Γ₂(d₁, d₂) over the ``edges`` (the fluid behind two perpendicular walls, counted by
    each)."""
    out = 0.0
    for k in range(planes.shape[0]):
        d = _distance(planes, k, x, y, z)
        if d < h:
            out += _table(gamma, step, d)
    for e in range(edges.shape[0]):
        da = _distance(planes, edges[e, 0], x, y, z)
        db = _distance(planes, edges[e, 1], x, y, z)
        if da < h and db < h:
            out -= _table2(quarter, step2, da, db)
    return out


@njit(**config.NJIT)
def _wall_gradient(planes, edges, slope, step, quarter_slope, step2, h, x, y, z):
    """The gradient of :func:`_wall_share` at (x, y, z), 1/m: Σ Γ'(d) n less the edges' ∂Γ₂ terms."""
    gx = 0.0
    gy = 0.0
    gz = 0.0
    for k in range(planes.shape[0]):
        d = _distance(planes, k, x, y, z)
        if d < h:
            f = _table(slope, step, d)
            gx += f * planes[k, 0]
            gy += f * planes[k, 1]
            gz += f * planes[k, 2]
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        da = _distance(planes, a, x, y, z)
        db = _distance(planes, b, x, y, z)
        if da < h and db < h:
            fa = _table2(quarter_slope, step2, da, db)
            fb = _table2(quarter_slope, step2, db, da)  # Γ₂ is symmetric: ∂Γ₂/∂d_b is the transposed table
            gx -= fa * planes[a, 0] + fb * planes[b, 0]
            gy -= fa * planes[a, 1] + fb * planes[b, 1]
            gz -= fa * planes[a, 2] + fb * planes[b, 2]
    return gx, gy, gz


@njit(**config.NJIT)
def _wall_push(p_i, rho_i, w0, planes, edges, slope, step, quarter_slope, step2, h, x, y, z):
    """-P⁺/ρ² ρ0 ∇Γ at (x, y, z), m/s²: the flat walls' push on a particle of pressure ``p_i`` and density
    ``rho_i`` whose walls stand for fluid at ``w0`` (:func:`_wall_gradient`); 0 where ``w0`` is 0 or the
    pressure is not positive."""
    if w0 == 0.0 or not p_i > 0.0:
        return 0.0, 0.0, 0.0
    push = -p_i / (rho_i * rho_i) * w0
    gx, gy, gz = _wall_gradient(planes, edges, slope, step, quarter_slope, step2, h, x, y, z)
    return push * gx, push * gy, push * gz


@njit(**config.NJIT_PARALLEL)
def densities(x, mat, nbr, count, rows, mass, boundary, h, inv_lattice, planes, wall_rho0, gamma, step, edges,
              quarter, step2, rho):
    """ρ_i = Σ_j m_j W(r_ij) / S over the particle and its neighbours (Desbrun & Cani eq. 3), plus
    ρ0 Γ(d) for each flat wall within h (``planes``: the fluid mirrored behind it). A solid's particle
    (``boundary`` true for its material) counts as a boundary particle of its volume
    at this liquid's rest density, m_i (Akinci et al. 2012's Ψ = ρ0 V), not with its own mass: counted at
    its mass, a jelly of half the water's density thinned the water beside it, and floated 0.17 of its
    height deeper than a rigid box of its density.

    Parameters
    ----------
    x : (n,3) positions, m. mat : (n,) uint8 material ids. nbr, count : neighbour rows.
    rows : (k,) int64 particles to evaluate. mass : (n_materials,) particle mass, kg. boundary : per material,
    bool: a solid's (another model's liquid counts at its own mass). h : support, m.
    inv_lattice : 1/S, S the lattice sum of s³ W (dimensionless), so ρ = ρ0 at rest.
    planes : (w,4) walls n·x = c, n into the fluid. wall_rho0 : per material, the density a wall
    stands for, kg/m³. gamma, step : Γ sampled every ``step`` m from 0. edges : (e,2) pairs of
    perpendicular planes: the fluid behind both, counted by each, is taken once (``quarter``, its share
    Γ₂(d₁, d₂) sampled every ``step2`` m). rho : (n,) kg/m³, written at ``rows``.
    """
    k_w = 8.0 / (math.pi * h * h * h)
    inv_h = 1.0 / h
    h2 = h * h
    for r in prange(rows.shape[0]):
        i = rows[r]
        xi = x[i, 0]
        yi = x[i, 1]
        zi = x[i, 2]
        m_i = mass[mat[i]]
        s = m_i
        for kk in range(count[i]):
            j = nbr[i, kk]
            dx = xi - x[j, 0]
            dy = yi - x[j, 1]
            dz = zi - x[j, 2]
            d2 = dx * dx + dy * dy + dz * dz
            if d2 >= h2:
                continue
            s += (m_i if boundary[mat[j]] else mass[mat[j]]) * cubic_spline_shape(math.sqrt(d2) * inv_h)
        s *= k_w * inv_lattice
        w0 = wall_rho0[mat[i]]
        if w0 != 0.0:
            s += w0 * _wall_share(planes, edges, gamma, step, quarter, step2, h, xi, yi, zi)
        rho[i] = s


@njit(**config.NJIT_PARALLEL)
def pressures(rows, mat, rho, rho0, c2, tension, p):
    """P = c² (ρ - ρ0), kept above -``tension`` (Desbrun & Cani eq. 6: tension is cohesion).

    Parameters
    ----------
    rows : (k,) int64. mat : (n,) uint8. rho : (n,) kg/m³. rho0, c2, tension : per material,
    kg/m³, m²/s², Pa. p : (n,) Pa, written at ``rows``.
    """
    for r in prange(rows.shape[0]):
        i = rows[r]
        m = mat[i]
        pi = c2[m] * (rho[i] - rho0[m])
        p[i] = pi if pi > -tension[m] else -tension[m]


@njit(**config.NJIT)
def _pair_terms(pp, rr_sum, abar, cbar, visc, m_j, rhoi, rhoj, rr, r2, vr, h, eps, eps2, grad, inv_w_spacing):
    """One pair's pressure coefficient f (times x_ij), Morris' viscous coefficient fv (times v_ij) and its
    approach rate μ_ij (0 when receding), for :func:`pair_accelerations` and :func:`solid_reactions`.

    ``pp`` is P_i/ρ_i² + P_j/ρ_j², ``rr_sum`` the two particles' artificial pressures (Monaghan 2000,
    against clustering under tension), ``visc`` ρ_i ν_i + ρ_j ν_j; fv is meaningful only where visc ≠ 0.
    """
    f = pp
    if rr_sum != 0.0:
        f += rr_sum * _f4(rr / h, inv_w_spacing)
    mu = 0.0
    if vr < 0.0:
        mu = approach_rate(eps, vr, r2, eps2)
        if abar != 0.0:  # artificial_viscosity_monaghan1992
            f += viscous_pressure(abar, cbar, mu, rhoi, rhoj)
    f *= -m_j * grad
    fv = 0.0
    if visc != 0.0:  # viscosity_morris1997
        fv = pair_factor(m_j, visc, rhoi, rhoj, grad, r2, eps2)
    return f, fv, mu


@njit(**config.NJIT_PARALLEL)
def pair_accelerations(x, v, mat, nbr, count, rows, mass, rho, p, owned, boundary, c, alpha, nu, h, inv_w_spacing,
                       planes, wall_rho0, slope, step, edges, quarter_slope, step2, mu_max, out, wall_out):
    """Accelerations of ``rows`` from their neighbours, m/s², into ``out`` (k,3) (row r of ``rows``).

    a_i = -Σ_j m_j (P_i/ρ_i² + P_j/ρ_j² + Π_ij) ∇_i W_ij                      (eqs. 4, 5, 7)
        + Σ_j m_j (ρ_i ν_i + ρ_j ν_j)/(ρ_i ρ_j) (x_ij·∇_i W_ij)/(r_ij² + 0.01 ε²) v_ij  (Morris eq. 10)

    with Π_ij = ᾱ (-c̄ μ_ij + 2 μ_ij²)/ρ̄_ij when v_ij·x_ij < 0, μ_ij = ε v_ij·x_ij/(r_ij² + ε²/100),
    ε = h/2 (Desbrun's h), x_ij = x_i - x_j, and ∇W the anti-clustering kernel's. Each pair's term
    is equal and opposite, so momentum is conserved when both particles are evaluated together.
    A neighbour of another model (``owned`` false for its material) is taken at this particle's
    density and pressure, as a boundary particle (its own scheme moves it), and a solid's (``boundary``) at
    this particle's mass too (see :func:`densities`). A flat wall within h
    (``planes``) pushes with -P⁺/ρ² ρ0 Γ'(d) n, the gradient of the particle's own internal energy
    through the density the wall gives it; that push alone also goes to ``wall_out`` (what the walls
    receive equal and opposite). Each particle's largest approach rate max_j μ_ij (eq. 8's, 1/s · m)
    goes to ``mu_max`` for its next step's level.

    The three terms' shares are summed pair by pair in one running sum (Morris', then the pressure's
    and Π's, of each pair; the module docstring says why); α and ν are zero where the model does not
    list ``artificial_viscosity_monaghan1992`` or ``viscosity_morris1997``.

    Parameters
    ----------
    x, v : (n,3) m, m/s. mat : (n,) uint8. nbr, count : neighbour rows. rows : (k,) int64.
    mass : per material, kg. rho, p : (n,) kg/m³, Pa (current at ``rows`` and at the owned
    neighbours). owned, boundary : per material, bool. c, alpha, nu : per material, m/s, -, m²/s.
    h : support, m. inv_w_spacing : 1/W(s) of the spline, without its constant. planes, wall_rho0 :
    as for :func:`densities`; slope : Γ' sampled every ``step`` m; edges, quarter_slope, step2: the
    edges of :func:`densities` and ∂Γ₂/∂d₁ (∂Γ₂/∂d₂ is the same table transposed: Γ₂ is symmetric).
    mu_max : (n,), written at ``rows``.
    out : (k,3) m/s², overwritten. wall_out : (k,3) m/s², overwritten: the flat walls' push, part of ``out``.
    """
    eps = 0.5 * h
    eps2 = 0.01 * eps * eps
    h2 = h * h
    g = -45.0 / (math.pi * h2 * h2 * h2)  # dW/dr = g (h - r)² of 15/(π h⁶) (h - r)³
    for r in prange(rows.shape[0]):
        i = rows[r]
        mi = mat[i]
        xi = x[i, 0]
        yi = x[i, 1]
        zi = x[i, 2]
        vxi = v[i, 0]
        vyi = v[i, 1]
        vzi = v[i, 2]
        rhoi = rho[i]
        pi = p[i] / (rhoi * rhoi)
        ri = -0.2 * pi if pi < 0.0 else 0.0
        ci = c[mi]
        ai = alpha[mi]
        etai = rhoi * nu[mi]
        ax = ay = az = mu_i = 0.0
        for kk in range(count[i]):
            j = nbr[i, kk]
            dx = xi - x[j, 0]
            dy = yi - x[j, 1]
            dz = zi - x[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 >= h2 or r2 == 0.0:
                continue
            mj = mat[j]
            m_j = mass[mj]
            if owned[mj]:
                rhoj = rho[j]
                pj = p[j] / (rhoj * rhoj)
                rj = -0.2 * pj if pj < 0.0 else 0.0
                cbar = 0.5 * (ci + c[mj])
                abar = 0.5 * (ai + alpha[mj])
                etaj = rhoj * nu[mj]
            else:
                if boundary[mj]:
                    m_j = mass[mi]
                rhoj = rhoi
                pj = pi
                rj = ri
                cbar = ci
                abar = ai
                etaj = etai
            rr = math.sqrt(r2)
            d = h - rr
            grad = g * d * d / rr  # ∇_i W = grad · x_ij
            ux = vxi - v[j, 0]
            uy = vyi - v[j, 1]
            uz = vzi - v[j, 2]
            vr = ux * dx + uy * dy + uz * dz
            visc = etai + etaj
            f, fv, mu = _pair_terms(pi + pj, ri + rj, abar, cbar, visc, m_j, rhoi, rhoj, rr, r2, vr, h, eps, eps2,
                                    grad, inv_w_spacing)
            if -mu > mu_i:
                mu_i = -mu
            if visc != 0.0:
                ax += fv * ux
                ay += fv * uy
                az += fv * uz
            ax += f * dx
            ay += f * dy
            az += f * dz
        wx, wy, wz = _wall_push(p[i], rhoi, wall_rho0[mi], planes, edges, slope, step, quarter_slope, step2, h,
                                xi, yi, zi)
        wall_out[r, 0] = wx
        wall_out[r, 1] = wy
        wall_out[r, 2] = wz
        mu_max[i] = mu_i
        out[r, 0] = ax + wx
        out[r, 1] = ay + wy
        out[r, 2] = az + wz


@njit(**config.NJIT_PARALLEL)
def stable_steps(v, mat, rows, c, alpha, nu, h, mu_max, out):
    """Each particle's longest stable step, s, into ``out`` (k,) (Desbrun & Cani eq. 8).

    δt_i = 0.3 ε / (c + 0.6 α (c + 2 max_j μ_ij)), the paper's bound with the artificial viscosity's
    α (α = 1 gives eq. 8), and no longer than 0.3 ε/|v_i| (eq. 8's second bound) and 0.125 ε²/ν
    (Morris et al. 1997, eq. 14); ε = h/2. max_j μ_ij is the particle's at its last evaluation
    (``mu_max``, from :func:`pair_accelerations`). The bound from the acceleration is the scheme's
    (``integrators.Leapfrog``).
    """
    eps = 0.5 * h
    for r in prange(rows.shape[0]):
        i = rows[r]
        mi = mat[i]
        dt = 0.3 * eps / (c[mi] + 0.6 * alpha[mi] * (c[mi] + 2.0 * mu_max[i]))
        speed = math.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
        if speed * dt > 0.3 * eps:
            dt = 0.3 * eps / speed
        out[r] = viscous_step(dt, nu[mi], eps)


@njit(**config.NJIT_PARALLEL)
def solid_reactions(x, v, mat, nbr, count, rows, mass, rho, p, owned, c, alpha, nu, h, inv_w_spacing, dt, out):
    """What the liquid's pair forces on its solid neighbours give those solid particles back, equal and
    opposite, over ``dt`` s: added to ``out`` (n,3), m/s, at ``rows`` (the solid particles).

    :func:`pair_accelerations` takes a neighbour of another model (a solid's particle j) at the liquid
    particle i's density, pressure and mass: i receives a_ij = -m_i (2 P_i/ρ_i² + Π_ij) ∇_i W_ij plus Morris'
    viscous term with 2 ρ_i ν_i; j receives -m_i a_ij / m_j (Newton's third law), so the liquid's
    pressure carries the solid resting on it and its viscosity drags the solid as the solid drags it.
    Each solid particle gathers from its own row (race-free, the same sums at any thread count); a
    liquid particle not evaluated yet (its density NaN) gives nothing.

    Parameters
    ----------
    x, v : (n,3) m, m/s. mat : (n,) uint8. nbr, count : neighbour rows. rows : (k,) int64 solid particles.
    mass : per material, kg. rho, p : (n,) the liquid's density and pressure at its last evaluation, kg/m³,
    Pa. owned : per material, bool: the liquid's materials. c, alpha, nu : per material, m/s, -, m²/s.
    h : support, m. inv_w_spacing : as for :func:`pair_accelerations`. dt : s. out : (n,3) m/s, added to.
    """
    eps = 0.5 * h
    eps2 = 0.01 * eps * eps
    h2 = h * h
    g = -45.0 / (math.pi * h2 * h2 * h2)
    for r in prange(rows.shape[0]):
        j = rows[r]
        mj = mass[mat[j]]
        ax = ay = az = 0.0
        for kk in range(count[j]):
            i = nbr[j, kk]
            mi = mat[i]
            if not owned[mi]:
                continue
            rhoi = rho[i]
            if not rhoi > 0.0:
                continue
            dx = x[i, 0] - x[j, 0]
            dy = x[i, 1] - x[j, 1]
            dz = x[i, 2] - x[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            if r2 >= h2 or r2 == 0.0:
                continue
            pi = p[i] / (rhoi * rhoi)
            ri = -0.2 * pi if pi < 0.0 else 0.0
            rr = math.sqrt(r2)
            d = h - rr
            grad = g * d * d / rr
            ux = v[i, 0] - v[j, 0]
            uy = v[i, 1] - v[j, 1]
            uz = v[i, 2] - v[j, 2]
            vr = ux * dx + uy * dy + uz * dz
            visc = 2.0 * rhoi * nu[mi]
            f, fv, _ = _pair_terms(2.0 * pi, 2.0 * ri, alpha[mi], c[mi], visc, mass[mi], rhoi, rhoi, rr, r2, vr, h,
                                   eps, eps2, grad, inv_w_spacing)
            # a_ij (the liquid particle's share from j, j at its mass), then -m_i / m_j of it for j
            aix = f * dx
            aiy = f * dy
            aiz = f * dz
            if visc != 0.0:
                aix += fv * ux
                aiy += fv * uy
                aiz += fv * uz
            share = mass[mi] / mj
            ax -= share * aix
            ay -= share * aiy
            az -= share * aiz
        out[j, 0] += dt * ax
        out[j, 1] += dt * ay
        out[j, 2] += dt * az
