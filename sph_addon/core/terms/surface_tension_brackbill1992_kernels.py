"""Surface tension as the continuum surface force γ κ n̂ δ_s on a free surface of particles (numba kernels).

References: J. U. Brackbill, D. B. Kothe, C. Zemach, "A continuum method for
modeling surface tension", J. Comput. Phys. 100 (1992) 335-354 (CSF: the
volume force F_sv = γ κ ∇c / [c] with κ = -∇·n̂, n̂ = ∇c/|∇c|); J. P. Morris,
"Simulating surface tension with smoothed particle hydrodynamics", Int. J.
Numer. Meth. Fluids 33 (2000) 333-353 (CSF on particles, the curvature taken
only from particles whose normal is reliable); N. Akinci, G. Akinci,
M. Teschner, "Versatile Surface Tension and Adhesion for SPH Fluids", ACM TOG
32(6) 2013 (normals from the colour gradient scaled by h; cohesion and
curvature pair forces, discussed below). None of the three is among the
project's papers (../shared/papers/), so their equations are named here,
not numbered.

The liquid side (``lattice``: lattice constant K, thresholds, stable
step) turns γ (N/m) into the constants passed here; the viscoelastic model
calls :func:`surface_tension_impulses` in its velocity stage, after XSPH and
before the viscosity impulses. Passes, each a Jacobi sweep over the same
positions, the predicted x + Δt v (deterministic at any thread count):

1. :func:`colour_gradient`: g_i = ∇c_i, c_i = Σ_j (1-q_ij)² / ρ0 (Clavet's
   density kernel over its lattice sum ρ0, so c = 1 in the bulk); the surface
   weight a_i (0 in the bulk, 1 on the surface) and the outward normal
   n̂_i = -g_i/|g_i|;
2. :func:`surface_curvature`: the mean curvature κ_i = ∇·n̂ (Brackbill's -∇·(∇c/|∇c|)) at surface particles
   from the normals of their surface neighbours;
3. :func:`tension_field`: Π_i = (γ/K) κ̄_i, κ̄ a Shepard average of κ over the
   surface particles within h, so that every particle that sees the surface
   (g ≠ 0) has a curvature;
4. :func:`csf_impulses`: F_i = 2 s³ Π_i g_i, i.e. Brackbill's γ κ ∇c with
   the particle's share of the surface, 2 s³ |g_i| / K; the net force is
   removed afterwards (momentum, below).

Why CSF and not a pair force. Surface tension is a boundary condition: the
pressure jumps by γ κ across the surface (Young-Laplace) and nothing acts in
the bulk. Three pairwise forms were built and measured on a 2 cm water drop
set ringing in mode 2 (R = 6 spacings):

* a pair cohesion (Tartakovsky & Meakin 2005, Akinci's cohesion term) acts in
  the bulk too: on a particle lattice it has a shear modulus ~ γ/s, above the
  capillary stress γ/R of any drop wider than a few spacings: the drop froze
  prolate;
* the same CSF in symmetric pair form, s³ (Π_i + Π_j) ∇_i c_ij (Monaghan's
  pressure form with pressure -Π), is exactly a combination of the gradients
  of the particle densities, ∇(s³/ρ0 Σ_k Π_k ρ_k): the density relaxation
  absorbs it as pressure and it does no work on any density-preserving motion
  (the drop, again, did not oscillate);
* an energy γ Σ_k s² φ(|g_k|)/K (the colour-gradient area; its gradient is
  Σ_j H_ij (u_i - u_j), u = φ'(|g|) ĝ, H the kernel's Hessian: Akinci's
  curvature term -γ (n_i - n_j) with a scalar weight for H and φ = |g|²)
  measures the lattice, not the area: an affine mode-2 deformation of the
  lattice-cut drop lowered it by 1-2 times γ ΔA, and it has no cohesion
  (spread particles have g = 0), so the drop flew apart.

CSF has no tangential force and no stress in the bulk, so the drop keeps no
shear rigidity; it rang at 0.93-0.96 of Rayleigh's mode-2 frequency for
γ = 0.072 and 0.288 N/m at R = 6, 9 and 12 spacings, and a drop on a floor
at R = 12 spacings settled into the puddle of a non-wetting liquid (height
two capillary lengths, 5.4 mm: measured 5.7-6.0 mm, radius 15.8 mm against
15.7). The drop's frequencies and its Laplace pressure are tested in
tests/core/test_surface_tension.py.

Deviations, each for a reason:

* **Predicted positions.** The geometry is taken at x + Δt v, where Clavet's
  Algorithm 1 takes every constraint (and where the neighbour rows were
  found), not at x: evaluated at x, the non-symmetric CSF force let a drop at
  rest spin up without bound (angular momentum doubling every ~0.5 s at the
  automatic substep, from round-off). At x + Δt v it held steady for 6 s; the
  price is a lower stable step (``terms.surface_tension_brackbill1992.surface_tension_stable_dt``).
* **Momentum.** Σ_i F_i = γ Σ κ_i a_i n̂_i is zero in the continuum (∮ κ n̂ dA
  = 0 over a closed surface) but not to round-off: measured 1e-4 to 3e-3 of
  Σ |F_i| on the drop. Its reaction belongs to no neighbour: the balancing
  force of a curved surface is the pressure behind it (a pairwise reaction
  within h turns the force into the absorbed pressure form above). So the
  mass-weighted mean, Σ F_i / Σ m_i, is subtracted from every particle that
  has surface tension: momentum is conserved exactly (a sequential sum, so
  deterministic), at the price of a uniform acceleration of the order of the
  discretisation error shared by all such particles.
* **Curvature from tangential chords.** κ_i = 2 Σ_j a_j w_ij (n̂_i - n̂_j)·t_ij
  / Σ_j a_j w_ij |t_ij|², w = (1-q)², t_ij the chord x_i - x_j projected on
  i's tangent plane. For a smooth normal field n̂_i - n̂_j = (∇n̂) t_ij, so this
  is tr ∇n̂ = ∇·n̂ whenever the neighbours are spread evenly around i in its
  tangent plane: normalised by the neighbours present, where the SPH
  divergence Σ_j V_j (n̂_j - n̂_i)·∇W_ij loses about half of it to the missing air.
  |κ| is capped at kappa_cap (a sphere of radius one spacing) and faded out
  where the chords' weight Σ a_j w_ij |t_ij|² / h² falls under
  ``curvature_support``: κ stays continuous as neighbours leave the support.
* **Π carried inward, continuously.** Particles below the first layer see
  the surface (g ≠ 0, small) but carry no normal of their own; they take the
  Shepard average κ̄ of the surface particles within h, its weight sum
  floored at ``tension_support`` so Π fades to 0, never jumps, where no
  surface particle is near.
* **Surface weight** a = 0 below |g| = lo, 1 above hi, linear between
  (0.16 and 0.49 of a (100) face's K/(2s); a bulk that has moved shows
  < 0.1 of it, measured): bulk noise makes no normals.
* **Colliders are air** to the colour field: a liquid's face against a wall
  is a surface like any other (flat faces feel nothing, edges are rounded),
  so the liquid does not wet colliders (contact angle ~180°, the puddle
  above). Counting the solid as liquid (the relaxation's boundary density,
  ``boundary.lattice_fill.wall_terms``) makes it wet them completely: water climbed
  the walls of its tank and left it at 1.7 mm spacing, and at half weight it
  still climbed. Wetting needs an adhesion term (Akinci et al. 2013 have one).
* **Thin sheets.** A liquid one to three particles thick has no resolved
  surface: a free 2-layer film crumples as its rim retracts, and a drop of
  R = 6 spacings spread by gravity into a 2-layer film kept moving at a mean
  4-5 cm/s (γ = 0: calm below 1 cm/s), where R = 12 spacings settled.
* **Materials.** c counts every particle (two liquids in contact form one body:
  no interfacial tension); Π is the curvature times the particle's own γ/K.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import config
from ..numerics.kernel_cache import njit, prange

# Particles per parallel iteration of the all-particle kernels: each iteration allocates its rows'
# work arrays once for these.
BLOCK = 64


@njit(**config.NJIT_PARALLEL)
def colour_gradient(x, nbr, count, h, inv_rho0, lo, hi, g, normal, weight):
    """Colour gradient g_i = ∇c_i (Brackbill's ∇c), surface weight a_i and normal n̂_i, Jacobi.

    c_i = Σ_j (1-q_ij)² / ρ0 over the neighbours within h (coincident pairs
    skipped). g points into the liquid at a free surface; |g| = K/(2s) on a
    (100) face of the lattice at h = 2 s (K: ``terms.surface_tension_brackbill1992.csf_lattice_constant``),
    0 in a symmetric bulk.

    Parameters
    ----------
    x : (n,3) float64 positions, m. nbr, count : neighbour rows (n,K) int32, lengths (n,).
    h : interaction radius, m. inv_rho0 : 1 / Σ (1-q)² over the lattice.
    lo, hi : the surface weight's ramp in |g|, 1/m: a = 0 below lo, 1 above hi, linear between.
    g : (n,3) float64 out, 1/m. normal : (n,3) float64 out, -g/|g| where a > 0, else 0.
    weight : (n,) float64 out, a ∈ [0, 1].
    """
    n = x.shape[0]
    inv_h = 1.0 / h
    width = nbr.shape[1]
    for b in prange((n + BLOCK - 1) // BLOCK):
        ux = np.empty(width)
        uy = np.empty(width)
        uz = np.empty(width)
        f = np.empty(width)
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            nk = count[i]
            offsets(i, x, nbr, nk, ux, uy, uz)
            # The square roots and divisions in a loop of their own, which the compiler vectorises
            # (1.2 -> 0.8 ms on the bench's dam break); the sums below keep the neighbours' order.
            for kk in range(nk):
                r = math.sqrt(ux[kk] * ux[kk] + uy[kk] * uy[kk] + uz[kk] * uz[kk])
                a = 1.0 - r * inv_h
                f[kk] = 2.0 * a * inv_h / r if (a > 0.0 and r > 0.0) else 0.0
            sx = 0.0
            sy = 0.0
            sz = 0.0
            for kk in range(nk):
                sx += f[kk] * ux[kk]
                sy += f[kk] * uy[kk]
                sz += f[kk] * uz[kk]
            _surface_normal(i, sx * inv_rho0, sy * inv_rho0, sz * inv_rho0, lo, hi, g, normal, weight)


@njit(**config.NJIT_INLINE)
def offsets(i, x, nbr, nk, ux, uy, uz):
    """x_j - x_i of i's nk neighbours into ux, uy, uz (gathered once, then read contiguously)."""
    xi = x[i, 0]
    yi = x[i, 1]
    zi = x[i, 2]
    for kk in range(nk):
        j = nbr[i, kk]
        ux[kk] = x[j, 0] - xi
        uy[kk] = x[j, 1] - yi
        uz[kk] = x[j, 2] - zi


@njit(**config.NJIT_INLINE)
def _surface_normal(i, sx, sy, sz, lo, hi, g, normal, weight):
    """Store g_i = (sx, sy, sz), its surface weight a_i and, where a_i > 0, the normal -g_i/|g_i|."""
    g[i, 0] = sx
    g[i, 1] = sy
    g[i, 2] = sz
    mag = math.sqrt(sx * sx + sy * sy + sz * sz)
    if mag <= lo:
        weight[i] = 0.0
        normal[i, 0] = 0.0
        normal[i, 1] = 0.0
        normal[i, 2] = 0.0
        return
    weight[i] = 1.0 if mag >= hi else (mag - lo) / (hi - lo)
    normal[i, 0] = -sx / mag
    normal[i, 1] = -sy / mag
    normal[i, 2] = -sz / mag


@njit(**config.NJIT_PARALLEL)
def surface_curvature(x, normal, weight, nbr, count, h, kappa_cap, curvature_support, surface, kappa):
    """Mean curvature κ_i = ∇·n̂ at surface particles (positive on a convex surface), Jacobi.

    κ_i = 2 Σ_j a_j w_ij (n̂_i - n̂_j)·t_ij / Σ_j a_j w_ij |t_ij|² over i's
    neighbours with a_j > 0, w_ij = (1-q)², t_ij = x_ij - (x_ij·n̂_i) n̂_i
    (Brackbill's κ = -∇·(∇c/|∇c|), with the outward normal, from the
    particles with a normal only as Morris does; see the module
    docstring for the normalisation). Clipped to ±kappa_cap, then scaled by
    min(1, Σ_j a_j w_ij |t_ij|² / (h² curvature_support)).

    Parameters
    ----------
    x : (n,3) positions, m. normal, weight : from :func:`colour_gradient`.
    nbr, count : neighbour rows. h : interaction radius, m.
    kappa_cap : largest |κ|, 1/m. curvature_support : dimensionless chord weight of a full κ.
    surface : (m,) int64, the particles with a_i > 0 (a list of its own so that the threads share
        the surface equally: over all particles, one thread could hold most of it).
    kappa : (n,) float64, 1/m: set at ``surface``, left as it is elsewhere (the caller's zeros).
    """
    inv_h = 1.0 / h
    m = surface.shape[0]
    for b in prange((m + BLOCK - 1) // BLOCK):
        onsurface = np.empty(nbr.shape[1], np.int32)
        for k in range(b * BLOCK, min(m, (b + 1) * BLOCK)):
            _curvature(k, x, normal, weight, nbr, count, inv_h, kappa_cap, curvature_support, surface, kappa,
                       onsurface)


@njit(**config.NJIT_INLINE)
def _curvature(k, x, normal, weight, nbr, count, inv_h, kappa_cap, curvature_support, surface, kappa, onsurface):
    """κ of surface particle surface[k] (see :func:`surface_curvature`); ``onsurface`` is work space."""
    i = surface[k]
    nx = normal[i, 0]
    ny = normal[i, 1]
    nz = normal[i, 2]
    # The neighbours with a normal listed first, without a branch, then only they are visited: the
    # branch on a_j in the loop below was mispredicted for a third to a half of the neighbours
    # (0.46-0.72 -> 0.27-0.38 ms on the bench's dam break, the same sums in the same order).
    c = 0
    for kk in range(count[i]):
        j = nbr[i, kk]
        onsurface[c] = j
        c += weight[j] != 0.0
    num = 0.0
    den = 0.0
    for t in range(c):
        j = onsurface[t]
        aj = weight[j]
        tx = x[i, 0] - x[j, 0]
        ty = x[i, 1] - x[j, 1]
        tz = x[i, 2] - x[j, 2]
        r = math.sqrt(tx * tx + ty * ty + tz * tz)
        a = 1.0 - r * inv_h
        if a <= 0.0 or r == 0.0:
            continue
        d = tx * nx + ty * ny + tz * nz
        tx -= d * nx
        ty -= d * ny
        tz -= d * nz
        w = aj * a * a
        num += w * ((nx - normal[j, 0]) * tx + (ny - normal[j, 1]) * ty + (nz - normal[j, 2]) * tz)
        den += w * (tx * tx + ty * ty + tz * tz)
    if den > 0.0:
        curvature = min(max(2.0 * num / den, -kappa_cap), kappa_cap)
        kappa[i] = curvature * min(1.0, den * inv_h * inv_h / curvature_support)


@njit(**config.NJIT_PARALLEL)
def tension_field(x, nbr, count, mat, kappa, weight, tension, h, tension_support, pi):
    """Π_i = (γ/K)_i κ̄_i, the curvature carried to every particle that sees the surface, Jacobi.

    κ̄_i = (a_i κ_i + Σ_j a_j w_ij κ_j) / max(a_i + Σ_j a_j w_ij, tension_support),
    w_ij = (1-q)², over the surface particles within h (i's own weight counted
    with w = 1): a Shepard average that fades to 0 where the weight sum falls
    under ``tension_support``.

    Parameters
    ----------
    x : (n,3) positions, m. nbr, count : neighbour rows. mat : (n,) uint8.
    kappa, weight : (n,) from :func:`surface_curvature` and :func:`colour_gradient`.
    tension : per-material γ/K, N/m (0: no surface tension). h : interaction radius, m.
    tension_support : dimensionless weight sum of a full average.
    pi : (n,) float64 out, Pa.
    """
    n = x.shape[0]
    inv_h = 1.0 / h
    width = nbr.shape[1]
    for b in prange((n + BLOCK - 1) // BLOCK):
        ux = np.empty(width)
        uy = np.empty(width)
        uz = np.empty(width)
        for i in range(b * BLOCK, min(n, (b + 1) * BLOCK)):
            c = tension[mat[i]]
            pi[i] = 0.0
            if c == 0.0:
                continue
            nk = count[i]
            num = weight[i] * kappa[i]
            den = weight[i]
            seen = den
            for kk in range(nk):
                seen += weight[nbr[i, kk]]
            if seen == 0.0:
                continue  # no surface particle within its row: Π = 0 without the geometry
            offsets(i, x, nbr, nk, ux, uy, uz)
            # Every neighbour weighted, those off the surface by a_j = 0, without a branch (with the
            # test above, 1.0-1.2 -> 0.6-0.77 ms on the bench's dam break): adding 0 leaves the sums as
            # the skipping loop had them.
            for kk in range(nk):
                a = 1.0 - math.sqrt(ux[kk] * ux[kk] + uy[kk] * uy[kk] + uz[kk] * uz[kk]) * inv_h
                ux[kk] = a if a > 0.0 else 0.0
            for kk in range(nk):
                j = nbr[i, kk]
                a = ux[kk]
                w = weight[j] * a * a
                num += w * kappa[j]
                den += w
            if den > 0.0:
                pi[i] = c * num / max(den, tension_support)


@njit(**config.NJIT_PARALLEL)
def csf_impulses(v, g, pi, mat, tension, density, dt, dv):
    """v_i += Δt F_i / m_i with F_i = 2 s³ Π_i g_i (Brackbill's F_sv), less the mean: momentum exact.

    With m_i = ρ_i s³ the acceleration is 2 Π_i g_i / ρ_i. The net force Σ_i F_i
    (zero in the continuum, see the module docstring) is summed in index order,
    so deterministically, and the uniform acceleration Σ_i F_i / Σ_i m_i over the
    particles whose material has surface tension is taken off each of them:
    Σ_i m_i Δv_i = 0 to round-off.

    Parameters
    ----------
    v : (n,3) velocities, m/s; mutated. g : (n,3) colour gradients, 1/m.
    pi : (n,) Π, Pa. mat : (n,) uint8. tension : per-material γ/K (only its sign is read here).
    density : per-material ρ, kg/m³. dt : step, s. dv : (n,3) float64 scratch.
    """
    n = v.shape[0]
    for i in prange(n):
        s = 2.0 * dt * pi[i] / density[mat[i]] if pi[i] != 0.0 else 0.0
        dv[i, 0] = s * g[i, 0]
        dv[i, 1] = s * g[i, 1]
        dv[i, 2] = s * g[i, 2]
    px = 0.0
    py = 0.0
    pz = 0.0
    mass = 0.0
    for i in range(n):
        if tension[mat[i]] == 0.0:
            continue
        rho = density[mat[i]]
        px += rho * dv[i, 0]
        py += rho * dv[i, 1]
        pz += rho * dv[i, 2]
        mass += rho
    if mass > 0.0:
        px /= mass
        py /= mass
        pz /= mass
    for i in prange(n):
        if tension[mat[i]] == 0.0:
            continue
        v[i, 0] += dv[i, 0] - px
        v[i, 1] += dv[i, 1] - py
        v[i, 2] += dv[i, 2] - pz


