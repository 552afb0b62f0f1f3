"""Slow reference implementations the fast kernels are checked against.

Plain numpy and Python loops, written from the papers rather than from the numba
kernels: brute-force neighbours, direct-sum densities (Desbrun & Cani 1996 eq. 3;
Clavet 2005 eqs. 4.1, 4.3) and sequential transcriptions of Clavet's
Algorithms 3, 4 and 5 with eq. 5.2 (S. Clavet, *Animation de fluides
viscoélastiques à base de particules*, M.Sc. thesis, Université de Montréal,
2005), plus the viscoelastic model's Jacobi XSPH smoothing (Monaghan 1989); the
surface tension's reference is in tests/core/test_surface_tension.py. The
Gauss-Seidel references visit particles in the solver's order (colours, then
buckets, then particles, each neighbour row in order), so that they perform the
same operations in the same order and agree to round-off; the deviations from
the thesis that the solver documents (viscosity cap,
per-material constants, pair terms applied whole, one-sided pressures, collider
densities) are reproduced and named where they occur.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np


def brute_force_neighbors(x: np.ndarray, radius: float) -> list[np.ndarray]:
    """All j != i with |x_j - x_i| < radius, O(n^2), sorted per particle."""
    d2 = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    np.fill_diagonal(d2, np.inf)
    return [np.flatnonzero(row < radius * radius) for row in d2]


# -- densities ------------------------------------------------------------------------------


def clavet_densities(x: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Direct-sum density and near-density, Clavet 2005 eqs. 4.1 and 4.3, O(n^2).

    ρ_i = Σ_{j≠i, q<1} (1-q)², ρ_i^near = Σ_{j≠i, q<1} (1-q)³ with q = |x_j - x_i| / h
    (unnormalised, as the thesis uses them). A coincident pair (q = 0) counts 1 in both.

    Parameters
    ----------
    x : (n,3) float64 positions, m.
    h : interaction radius, m.

    Returns
    -------
    rho, rho_near : (n,) float64, dimensionless.
    """
    x = np.asarray(x, dtype=np.float64)
    r = np.sqrt(np.sum((x[None, :, :] - x[:, None, :]) ** 2, axis=-1))
    q = r / h
    inside = q < 1.0
    np.fill_diagonal(inside, False)
    a = np.where(inside, 1.0 - q, 0.0)
    return np.sum(a * a, axis=1), np.sum(a * a * a, axis=1)


def direct_sum_density(x: np.ndarray, h: float, kernel, m: np.ndarray | None = None,
                       include_self: bool = True) -> np.ndarray:
    """SPH density ρ_i = Σ_j m_j W(|x_i - x_j|, h) by direct summation (Desbrun & Cani 1996 eq. 3), O(n^2).

    Parameters
    ----------
    x : (n,3) float64 positions, m.
    h : kernel radius parameter, m (the support is ``kernel.support * h``).
    kernel : a ``sph_addon.core.numerics.kernels.Kernel`` (any ``KERNELS`` entry); only ``w`` and ``support`` are used.
    m : (n,) float64 masses, kg; ones if omitted (then ρ is a number density, 1/m³).
    include_self : whether the j = i term m_i W(0, h) is in the sum (it is in SPH, not in Clavet's sums).

    Returns
    -------
    (n,) float64 densities, kg/m³ (1/m³ without masses).
    """
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    m = np.ones(n) if m is None else np.asarray(m, dtype=np.float64)
    r = np.sqrt(np.sum((x[None, :, :] - x[:, None, :]) ** 2, axis=-1))
    rho = np.zeros(n)
    reach = kernel.support * h
    for i in range(n):
        for j in np.flatnonzero(r[i] < reach):
            if j == i and not include_self:
                continue
            rho[i] += m[j] * kernel.w(float(r[i, j]), float(h))
    return rho


# -- the solver's visiting order ------------------------------------------------------------


def visiting_order(bucket_start: np.ndarray, colour: np.ndarray, backward: bool = False) -> Iterator[int]:
    """Particle indices in the order the coloured Gauss-Seidel kernels visit them.

    Colours in increasing order; within a colour the buckets (supercells, or hash buckets
    of supercells) in increasing order; within a bucket its particles in index order,
    keeping those of the current colour. This is the serial order the parallel kernels
    are equivalent to (supercells of one colour have disjoint neighbourhoods, so the
    order of the buckets within a colour does not change the result).

    Parameters
    ----------
    bucket_start : (nb+1,) int64 particle offsets of each bucket, ``NeighborSearch.bucket_start``.
    colour : (n,) uint8 colour of each particle, ``NeighborSearch.colour``.
    backward : the same sequence reversed: colours in decreasing order and each bucket's
        particles in reverse (a kernel's ``backward`` sweep; its buckets run in parallel, and
        reversing them too, which changes nothing, makes this exactly the forward order reversed).
    """
    order = [i for c in np.unique(colour)
             for b in range(len(bucket_start) - 1)
             for i in range(int(bucket_start[b]), int(bucket_start[b + 1]))
             if colour[i] == c]
    yield from (reversed(order) if backward else order)


def _pair(x: np.ndarray, i: int, j: int, h: float) -> tuple[float, float, np.ndarray]:
    """r_ij = |x_j - x_i| (m), q = r_ij / h and the unit vector r̂_ij from i to j (zero when r = 0)."""
    e = x[j] - x[i]
    r = math.sqrt(float(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]))
    return r, r / h, (e / r if r > 0.0 else np.zeros(3))


# -- Clavet 2005, sequential references -----------------------------------------------------


def _reflect(p: np.ndarray, planes: np.ndarray, rows, sub: int, linear: bool = False) -> np.ndarray:
    """p reflected in the planes rows[b] whose bit b is set in ``sub`` (n·x = c), in that order; with
    ``linear``, a vector, in the reverse order (a move of the image taken back to the point)."""
    p = np.array(p, dtype=np.float64, copy=True)
    bits = [b for b in range(len(rows)) if (sub >> b) & 1]
    for b in (reversed(bits) if linear else bits):
        n, c = planes[rows[b], :3], planes[rows[b], 3]
        p -= 2.0 * (float(np.dot(n, p)) - (0.0 if linear else c)) * n
    return p


def double_density_relaxation(x, nbr, count, mat, gain, gain_near, rho0, rho0_near, h, bucket_start, colour,
                              x_ref, wall_rho, wall_rho_near, wall_g, wall_g_near, planes=None, plane_of=None,
                              cap=math.inf, backward=False):
    """One pass of double density relaxation, Clavet 2005 Algorithm 3 (eqs. 4.1-4.6), transcribed line by line.

    The thesis' algorithm, for each particle i in :func:`visiting_order` (forward, or reversed
    with ``backward``: the kernel's sweep for alternating passes, a symmetric Gauss-Seidel):

    * lines 2-9: ρ = Σ (1-q)², ρ^near = Σ (1-q)³ over the neighbours with q < 1 (eqs. 4.1, 4.3);
    * lines 10-12: P = k(ρ - ρ0), P^near = k^near ρ^near (eqs. 4.2, 4.4);
    * lines 13-21: every neighbour with q < 1 moves by D_ij = Δt² (P(1-q) + P^near(1-q)²) r̂_ij at
      once, and i by the sum of -D_ij after the loop (eq. 4.6; pair terms whole, as in the thesis).

    The solver's documented deviations, reproduced here where they occur:

    * **gains**: the constants enter as gain = k Δt² and gain_near = k^near Δt² (m per unit
      density error), per material, with i's material (``terms.relaxation_clavet2005.relaxation_gains``);
    * **one-sided pressures**: P Δt² = gain (ρ - ρ0)⁺, P^near Δt² = gain_near (ρ^near - ρ0^near)⁺,
      with a rest near-density ρ0^near (the thesis has none): a particle below its rest
      densities exerts nothing;
    * **collider densities**: where ``wall_rho[i] > 0`` the fluid missing behind the colliders
      adds ρ_w + (2/h) g·δ and ρ^near_w + (3/h) g^near·δ, each clipped at 0, δ = x_i - x_ref_i
      (the terms of ``boundary.lattice_fill.wall_terms``, linearised about where they were sampled);
      i is pushed by -(P Δt² g + P^near Δt² g^near) besides -Σ D_ij: eq. 4.6 with partners
      that do not move;
    * **coincident neighbours** (r = 0) have no direction: they are neither displaced nor
      counted in the densities (the thesis' line 7 would count them with q = 0);
    * **mirror walls** (``planes`` (P,4) as n·x = c, ``plane_of`` (n,3) the planes of each particle,
      -1 for none): i also counts the images of its neighbours and of itself in every non-empty
      subset of its planes (reflections in subset order), and pushes each as a neighbour; the
      image's displacement, reflected back in reverse order, moves the particle it mirrors, and
      i takes -D as from any neighbour (``boundary.mirror``);
    * **a cap** on each pair's displacement: |D_ij| <= ``cap`` (m).

    Parameters
    ----------
    x : (n,3) float64 predicted positions, m (not mutated).
    nbr, count : (n,K) int neighbour rows and (n,) lengths; each row is visited in order.
    mat : (n,) material ids; gain, gain_near (m), rho0, rho0_near (lattice units) : per-material arrays.
    h : interaction radius, m.
    bucket_start, colour : from ``NeighborSearch.sort`` (see :func:`visiting_order`).
    x_ref : (n,3) float64 positions where the collider terms were sampled, m.
    wall_rho, wall_rho_near : (n,) collider densities; wall_g, wall_g_near : (n,3) their gradients.
    backward : visit the particles in the reverse order.

    Returns
    -------
    x_new : (n,3) float64 relaxed positions, m.
    rho, rho_near : (n,) float64 each particle's densities when it was visited.
    """
    x = np.array(x, dtype=np.float64, copy=True)
    n = len(x)
    rho = np.zeros(n)
    rho_near = np.zeros(n)
    for i in visiting_order(bucket_start, colour, backward):
        row = nbr[i, :count[i]]
        m = mat[i]
        # Lines 2-9: densities from the positions the particles before i left.
        d = 0.0
        dn = 0.0
        for j in row:
            r, q, _ = _pair(x, i, j, h)
            if q < 1.0 and r > 0.0:  # deviation: a coincident neighbour is left out
                d += (1.0 - q) ** 2
                dn += (1.0 - q) ** 3
        # Deviation: the colliders' densities at x_i, to first order about x_ref_i.
        if wall_rho[i] > 0.0:
            delta = x[i] - x_ref[i]
            d += max(wall_rho[i] + 2.0 / h * float(np.dot(wall_g[i], delta)), 0.0)
            dn += max(wall_rho_near[i] + 3.0 / h * float(np.dot(wall_g_near[i], delta)), 0.0)
        # Deviation: the images in the mirror walls, from the positions the particles before i left.
        rows = [] if plane_of is None else [int(a) for a in plane_of[i] if a >= 0]
        images = []
        for j in (*row, i) if rows else ():
            for sub in range(1, 1 << len(rows)):
                e = _reflect(x[j], planes, rows, sub) - x[i]
                r = math.sqrt(float(np.dot(e, e)))
                if 0.0 < r < h:
                    images.append((j, sub, r / h, e / r))
                    d += (1.0 - r / h) ** 2
                    dn += (1.0 - r / h) ** 3
        rho[i] = d
        rho_near[i] = dn
        # Lines 10-12, one-sided and times Δt² (deviations): P Δt², P^near Δt² in metres.
        p = gain[m] * max(d - rho0[m], 0.0)
        p_near = gain_near[m] * max(dn - rho0_near[m], 0.0)
        # Lines 13-21: displace the neighbours at once, i after the loop (the images' first; every
        # direction as the densities saw it).
        pairs = [(j, *_pair(x, i, j, h)[1:]) for j in row]
        dx = np.zeros(3)
        for j, sub, q, rhat in images:
            big_d = min(p * (1.0 - q) + p_near * (1.0 - q) ** 2, cap) * rhat
            back = _reflect(big_d, planes, rows, sub, linear=True)
            if j == i:
                dx += back
            else:
                x[j] += back
            dx -= big_d
        for j, q, rhat in pairs:
            if q < 1.0 and q > 0.0:
                big_d = min(p * (1.0 - q) + p_near * (1.0 - q) ** 2, cap) * rhat
                x[j] += big_d
                dx -= big_d
        # Deviation: the colliders as partners that do not move (their share of eq. 4.6).
        dx -= p * wall_g[i] + p_near * wall_g_near[i]
        x[i] += dx
    return x, rho, rho_near


def viscosity_impulses(x, v, nbr, count, mat, beta, h, dt, bucket_start, colour):
    """Quadratic viscosity impulses, Clavet 2005 Algorithm 4 with σ = 0, pair after pair (Gauss-Seidel).

    Each pair is taken once, from its lower-index particle i as i comes up in
    :func:`visiting_order`, j in i's row order. For q < 1 (and r > 0, for a direction):
    u = (v_i - v_j)·r̂_ij (line 5); the thesis acts when u > 0 (line 6) with
    I = Δt(1-q)βu² r̂_ij, v_i -= I, v_j += I (lines 8-10). The solver's documented
    deviations, reproduced here: β of a pair is the mean of the two materials' values;
    the magnitude is capped at u/2, the impulse that stops the pair's radial motion
    without reversing it. (σ's linear term is the implicit viscosity now:
    :func:`viscous_operator`.)

    Parameters
    ----------
    x : (n,3) float64 positions, m. v : (n,3) float64 velocities, m/s (not mutated).
    nbr, count : neighbour rows and lengths. mat : (n,) material ids.
    beta (1/m) : per-material array.
    h : interaction radius, m; dt : step, s. bucket_start, colour : see :func:`visiting_order`.

    Returns
    -------
    v_new : (n,3) float64 velocities after all impulses, m/s.
    """
    x = np.asarray(x, dtype=np.float64)
    v = np.array(v, dtype=np.float64, copy=True)
    for i in visiting_order(bucket_start, colour):
        for j in nbr[i, :count[i]]:
            if j < i:
                continue  # the pair was (or will be) taken from j
            r, q, rhat = _pair(x, i, j, h)
            if not (q < 1.0 and r > 0.0):
                continue
            u = float(np.dot(v[i] - v[j], rhat))
            if u <= 0.0:
                continue
            b = 0.5 * (beta[mat[i]] + beta[mat[j]])
            impulse = min(dt * (1.0 - q) * b * u * u, 0.5 * u) * rhat
            v[i] -= impulse
            v[j] += impulse
    return v


def viscous_operator(x, v, rho, eta, dt_k, h, wall_b):
    """A v of the implicit viscosity (``viscosity_weiler2018_kernels``), by brute force over all pairs.

    (A v)_i = ρ_i v_i + Δt K [Σ_j η_ij (1-q) ((v_i - v_j)·r̂) r̂ + η_i B_i v_i], η_ij the mean,
    pairs with q < 1 and r > 0; B_i from ``wall_b`` (xx, yy, zz, xy, xz, yz).
    """
    x = np.asarray(x, dtype=np.float64)
    out = rho[:, None] * v
    for i in range(len(x)):
        for j in range(len(x)):
            r, q, rhat = _pair(x, i, j, h) if i != j else (0.0, 0.0, None)
            if i == j or not (q < 1.0 and r > 0.0):
                continue
            out[i] += dt_k * 0.5 * (eta[i] + eta[j]) * (1.0 - q) * np.dot(v[i] - v[j], rhat) * rhat
        b = wall_b[i]
        block = np.array([[b[0], b[3], b[4]], [b[3], b[1], b[5]], [b[4], b[5], b[2]]])
        out[i] += dt_k * eta[i] * block @ v[i]
    return out


def spring_plasticity(x, mat, index_of_id, partner, rest, alpha, gamma, relax, h, dt):
    """Maxwell relaxation, spring plasticity (Clavet 2005 eq. 5.2) and removal, Jacobi form.

    Springs are stored in both endpoints' rows (partner ids, rest lengths L); every row is
    updated from the same positions. Per spring of particle i, with i's material constants
    (springs join particles of one material):

    * partner id gone (no current index, or beyond ``index_of_id``): the spring is removed;
    * L += (r - L) c, c = ``relax`` (Maxwell: 1 - exp(-Δt/τ)), then
    * ΔL = Δt α sign(r - L) max(0, |r - L| - γL) (eq. 5.2);
    * L >= h: removed (SCA 2005: the factor 1 - L/h would reverse the force).

    Parameters
    ----------
    x : (n,3) float64 predicted positions, m. mat : (n,) material ids.
    index_of_id : (m,) int64 current index of each stable id, -1 if removed.
    partner : (n,S) int64 partner ids, -1 for a free slot. rest : (n,S) float64 rest lengths, m.
    alpha (1/s), gamma, relax : per-material arrays.
    h : interaction radius, m; dt : step, s. Nothing is mutated.

    Returns
    -------
    partner_new : (n,S) int64; rest_new : (n,S) float64, m.
    """
    x = np.asarray(x, dtype=np.float64)
    partner = np.array(partner, copy=True)
    rest = np.array(rest, dtype=np.float64, copy=True)
    for i in range(len(x)):
        m = mat[i]
        for s in range(partner.shape[1]):
            pid = partner[i, s]
            if pid < 0:
                continue
            j = index_of_id[pid] if pid < len(index_of_id) else -1
            if j < 0:
                partner[i, s] = -1
                continue
            r, _, rhat = _pair(x, i, j, h)
            L = rest[i, s] + (r - rest[i, s]) * relax[m]
            L += dt * alpha[m] * np.sign(r - L) * max(0.0, abs(r - L) - gamma[m] * L)
            rest[i, s] = L
            if L >= h:
                partner[i, s] = -1
    return partner, rest


def spring_system(x, mat, index_of_id, partner, rest, k_spring, h, dt):
    """The springs' dense backward-Euler terms (Clavet 2005 Algorithm 5, linearised), by brute force.

    Per live spring of particle i (partner index j >= 0, L < h, r > 0), with κ = k_spring (1 - L/h):
    the impulse Δt κ (r - L) r̂_ij on i (Algorithm 5's displacement D over Δt, as a velocity), and the
    3x3 blocks Δt² J at (i, i) and -Δt² J at (i, j) of the 3n x 3n stiffness matrix, J = κ r̂ r̂ᵀ +
    κ max(0, 1 - L/r) (I - r̂ r̂ᵀ) (axial, and transverse for stretched springs only; j's own row
    gives (j, j) and (j, i)).

    Returns
    -------
    dv : (n,3) float64, m/s; stiffness : (3n,3n) float64, dimensionless (Δt² K).
    """
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    dv = np.zeros((n, 3))
    stiffness = np.zeros((3 * n, 3 * n))
    for i in range(n):
        for s in range(partner.shape[1]):
            pid = partner[i, s]
            j = index_of_id[pid] if 0 <= pid < len(index_of_id) else -1
            L = rest[i, s]
            if j < 0 or L >= h:
                continue
            r, _, rhat = _pair(x, i, j, h)
            if r == 0.0:
                continue
            kappa = k_spring[mat[i]] * (1.0 - L / h)
            dv[i] += dt * kappa * (r - L) * rhat
            axial = np.outer(rhat, rhat)
            block = dt * dt * kappa * (axial + max(0.0, 1.0 - L / r) * (np.eye(3) - axial))
            stiffness[3 * i:3 * i + 3, 3 * i:3 * i + 3] += block
            stiffness[3 * i:3 * i + 3, 3 * j:3 * j + 3] -= block
    return dv, stiffness


# -- velocity terms of the viscoelastic model (Jacobi) --------------------------------------


def smooth_velocities(x, v, nbr, count, mat, coef, h, rho0):
    """XSPH velocity smoothing (Monaghan 1989), Jacobi: every particle from the same velocities.

    v_i += Σ_j c (1-q)² (v_j - v_i) / ρ0 over the neighbours with q < 1, c = (coef_i + coef_j)/2
    and ρ0 one lattice density for all (so each pair term is equal and opposite). A coincident
    neighbour counts with q = 0: a velocity difference needs no direction.

    Parameters
    ----------
    x : (n,3) float64 positions, m. v : (n,3) float64 velocities, m/s (not mutated).
    nbr, count : neighbour rows and lengths. mat : (n,) material ids; coef : per-material c (dimensionless).
    h : interaction radius, m; rho0 : lattice density Σ (1-q)².

    Returns
    -------
    v_new : (n,3) float64 velocities, m/s.
    """
    x = np.asarray(x, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    v_new = v.copy()
    for i in range(len(x)):
        for j in nbr[i, :count[i]]:
            c = 0.5 * (coef[mat[i]] + coef[mat[j]])
            _, q, _ = _pair(x, i, j, h)
            if c == 0.0 or q >= 1.0:
                continue
            v_new[i] += c * (1.0 - q) ** 2 / rho0 * (v[j] - v[i])
    return v_new


def smoothed_particle_accelerations(x, v, mat, mass, rho0, c, alpha, nu, tension, owned, h, spacing, lattice_sum):
    """Desbrun & Cani 1996 for every particle, brute force, written from the paper: the density by
    kernel sum (eq. 3, cubic spline of support h, divided by the lattice's sum), the state equation
    P = c² (ρ - ρ0) kept above -tension (eq. 6), and the pair accelerations
    -Σ m_j (P_i/ρ_i² + P_j/ρ_j² + Π_ij) ∇W_ij (eqs. 4, 5, 7; ∇W of the anti-clustering kernel with
    support h) with Monaghan 2000's artificial pressure under tension, plus Morris' viscous Laplacian. A
    neighbour whose material is not ``owned`` (here: a solid's) is taken at
    the particle's own density, pressure and mass (a boundary particle: its volume at the particle's rest
    density, Akinci et al. 2012). Returns (ρ, P, a) for all particles (walls aside)."""
    n = len(x)
    eps = 0.5 * h

    def spline(r):
        q = r / h
        if q >= 1.0:
            return 0.0
        w = 6.0 * (q**3 - q**2) + 1.0 if q <= 0.5 else 2.0 * (1.0 - q) ** 3
        return 8.0 / (math.pi * h**3) * w

    def grad_spiky(r):  # dW/dr / r of 15/(π h⁶) (h - r)³
        return -45.0 / (math.pi * h**6) * (h - r) ** 2 / r

    rho = np.empty(n)
    for i in range(n):
        rho[i] = sum(mass[mat[j] if owned[mat[j]] else mat[i]] * spline(float(np.linalg.norm(x[i] - x[j])))
                     for j in range(n)) / lattice_sum
    p = np.maximum(c[mat] ** 2 * (rho - rho0[mat]), -tension[mat])
    acc = np.zeros((n, 3))
    for i in range(n):
        for j in range(n):
            xij = x[i] - x[j]
            r = float(np.linalg.norm(xij))
            if j == i or r >= h:
                continue
            mi, mj = mat[i], mat[j]
            if owned[mj]:
                rj, pj, etaj = rho[j], p[j], rho[j] * nu[mj]
                cb, ab = 0.5 * (c[mi] + c[mj]), 0.5 * (alpha[mi] + alpha[mj])
            else:
                rj, pj, cb, ab, etaj = rho[i], p[i], c[mi], alpha[mi], rho[i] * nu[mi]
            # Monaghan 2000's artificial pressure: 0.2 |P|/ρ² of each particle under tension, times f⁴,
            # f = W(r)/W(s) of the density kernel.
            art = 0.2 * (max(0.0, -p[i]) / rho[i] ** 2 + max(0.0, -pj) / rj**2) * (spline(r) / spline(spacing)) ** 4
            vij = v[i] - v[j]
            vr = float(vij @ xij)
            big_pi = 0.0
            if vr < 0.0:
                mu = eps * vr / (r * r + 0.01 * eps * eps)
                big_pi = ab * (-cb * mu + 2.0 * mu * mu) / (0.5 * (rho[i] + rj))
            g = grad_spiky(r)
            m_j = mass[mj] if owned[mj] else mass[mi]
            acc[i] -= m_j * (p[i] / rho[i] ** 2 + pj / rj**2 + art + big_pi) * g * xij
            acc[i] += (m_j * (rho[i] * nu[mi] + etaj) / (rho[i] * rj) * g * r * r
                       / (r * r + 0.01 * eps * eps) * vij)
    return rho, p, acc
