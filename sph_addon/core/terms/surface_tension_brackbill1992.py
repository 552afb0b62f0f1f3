"""Surface tension: Brackbill, Kothe & Zemach 1992's continuum surface force γ κ n̂ δ_s on particles.

The method, its passes, why a continuum force and not a pair force, and every deviation are in the
kernels' module docstring (``surface_tension_brackbill1992_kernels``). Here: γ (N/m) turned into the
kernels' constants by a lattice sum (:func:`csf_lattice_constant`), the stable substep of the explicit
force (:func:`surface_tension_stable_dt`), the term, and the surface energy the blow-up watch counts.

Acts on every material whose ``surface_tension`` is above 0 (0: none); reads ``density``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..numerics.lattice import offsets, rest_densities
from .base import VELOCITY, Term

# The surface weight's ramp in |∇c| as shares of a (100) face's K/(2s); the curvature cap in
# 1/spacing (a sphere of radius one spacing); the chord weight of a full curvature and the floor of
# the tension's Shepard weight (both fade the force out where neighbours leave the support); the
# stable substep factor (surface_tension_stable_dt).
SURFACE_WEIGHT_RAMP = (0.16, 0.49)
CURVATURE_CAP = 2.0
CURVATURE_SUPPORT = 0.2
TENSION_SUPPORT = 1.0
SURFACE_TENSION_DT = 0.2


@functools.lru_cache(maxsize=8)
def csf_lattice_constant(spacing: float, h: float) -> float:
    """K (dimensionless): twice the colour gradient a flat face of the lattice carries per unit area.

    With c = Σ (1-q)²/ρ0, the sum of s³ ∇c_i over a column of unit cross-section
    under a face of unit normal N counts the pairs across the face:
    (1/ρ0) Σ_{o·N>0} (o·N)(ô·N) 2(1-q)/h over the lattice offsets o. The cubic
    lattice's second moments are isotropic, so this is (1/(3ρ0)) Σ_o q (1-q) for
    every orientation (checked for (100), (110), (111), (123)); K is twice it,
    (2/(3ρ0)) Σ_o q (1-q) (1.2254 at h = 2 s, 1.146 at 2.5 s). At h <= 2 s a (100) face
    carries the whole column sum on its first layer: |∇c| = K/(2s) there. The CSF force
    F_i = 2 s³ Π ∇c_i with Π = γ κ / K then adds up to γ κ per unit area of any face.
    """
    a = 1.0 - np.linalg.norm(offsets(spacing, h), axis=1) / h
    rho0 = float(np.sum(a**2))
    return float(2.0 / (3.0 * rho0) * np.sum(a * (1.0 - a)))


def csf_tension(surface_tension: float, spacing: float, h: float) -> float:
    """γ/K (N/m): multiplies the curvature κ (1/m) into the tension Π (Pa) of the CSF kernels."""
    if surface_tension == 0.0:
        return 0.0
    return surface_tension / csf_lattice_constant(spacing, h)


def surface_tension_stable_dt(surface_tension: float, density: float, spacing: float) -> float:
    """Longest substep (s) of the explicit CSF force: Δt <= SURFACE_TENSION_DT sqrt(ρ s³ / γ).

    The shortest capillary wave the particles carry (k = π/s) has ω² = γ k³ / ρ,
    so the bound is ω Δt <= 5.57 x 0.2 = 1.1 (symplectic Euler alone would allow
    2). Measured on a 2 cm drop at rest without gravity, h = 2 s, γ = 0.072 to
    1 N/m, 3 s each: calm (mean speed ~1 cm/s or less) up to 0.29-0.34 at R = 6
    spacings and 0.31-0.34 at R = 9, torn apart from 0.34 and 0.42; the
    evaluation at predicted positions (``surface_tension_brackbill1992_kernels``) lowers the
    threshold from ~0.6 but removes a slow spin-up that grew without bound at
    any step.
    """
    if surface_tension <= 0.0:
        return math.inf
    return SURFACE_TENSION_DT * math.sqrt(density * spacing**3 / surface_tension)


class SurfaceTensionBrackbill1992(Term):
    """CSF impulses on the velocities, at the positions the substep predicts (velocity stage)."""

    name = "surface_tension_brackbill1992"
    citation = ("J. U. Brackbill, D. B. Kothe, C. Zemach, A continuum method for modeling surface tension, "
                "J. Comput. Phys. 100, 1992")
    stage = VELOCITY
    parameters = ("surface_tension", "density")

    def __init__(self, setup):
        super().__init__(setup)
        s, h = setup.spacing, setup.h
        # Per-material γ/K (N/m), which turns the curvature into a tension, and ρ (kg/m³).
        self.tension = self.per_material("surface_tension", convert=lambda g: csf_tension(g, s, h))
        self.density = self.per_material("density", fill=1.0)
        self.tension_dt = min((surface_tension_stable_dt(p.surface_tension, p.density, s)
                               for p in setup.materials.values()), default=math.inf)

    def apply(self, ctx) -> None:
        if not np.any(self.tension > 0):
            return
        with ctx.workspace.borrow((3,), (3,), (3,), (3,), (), (), ()) as scratch:
            surface_tension_impulses(ctx.x, ctx.v, ctx.nbr, ctx.count, ctx.material, self.tension, self.density,
                                     ctx.spacing, ctx.h, ctx.dt, tuple(scratch))

    def max_dt(self, world) -> float:
        """The explicit force's stable step (:func:`surface_tension_stable_dt`)."""
        return self.tension_dt


def surface_tension_impulses(x: np.ndarray, v: np.ndarray, nbr: np.ndarray, count: np.ndarray, mat: np.ndarray,
                             tension: np.ndarray, density: np.ndarray, spacing: float, h: float, dt: float,
                             scratch: tuple[np.ndarray, ...] | None = None) -> None:
    """Apply one substep of surface tension to ``v`` (the four passes of the module docstring).

    The surface is taken at the predicted positions x + Δt v; nothing is done
    (not even that) when no material has surface tension.

    Parameters
    ----------
    x, v : (n,3) float64 positions (m) and velocities (m/s); ``v`` is mutated, ``x`` is not.
    nbr, count : neighbour rows (n,K) int32 and lengths (n,) int32. mat : (n,) uint8 material ids.
    tension : per-material γ/K, N/m (:func:`csf_tension`). density : per-material ρ, kg/m³.
    spacing, h : particle spacing and interaction radius, m. dt : step, s.
    scratch : four (n,3) and three (n,) float64 C-contiguous arrays to work in (overwritten), or None to
        allocate them: fresh, their page faults cost 0.84 of 3.96 ms a call on the bench's dam break.
    """
    from ..numerics.array_kernels import step_rows
    from .surface_tension_brackbill1992_kernels import colour_gradient, csf_impulses, surface_curvature, tension_field

    n = len(x)
    if n == 0 or not np.any(tension > 0.0):
        return
    # Geometry at the predicted positions (see the module docstring): the neighbour rows were found there.
    if scratch is None:
        scratch = (*(np.empty((n, 3)) for _ in range(4)), *(np.empty(n) for _ in range(3)))
    predicted, g, normal, dv, weight, kappa, pi = scratch
    step_rows(x, dt, v, predicted)  # x + Δt v, numpy's sums, in parallel
    x = predicted
    kappa.fill(0.0)
    rho0, _ = rest_densities(spacing, h)
    k = csf_lattice_constant(spacing, h)
    lo, hi = (f * k / (2.0 * spacing) for f in SURFACE_WEIGHT_RAMP)
    colour_gradient(x, nbr, count, h, 1.0 / rho0, lo, hi, g, normal, weight)
    surface_curvature(x, normal, weight, nbr, count, h, CURVATURE_CAP / spacing, CURVATURE_SUPPORT,
                      np.flatnonzero(weight > 0.0), kappa)
    tension_field(x, nbr, count, mat, kappa, weight, tension, h, TENSION_SUPPORT, pi)
    csf_impulses(v, g, pi, mat, tension, density, dt, dv)


def surface_energies(x: np.ndarray, nbr: np.ndarray, count: np.ndarray, mat: np.ndarray, tension: np.ndarray,
                     spacing: float, h: float) -> np.ndarray:
    """(n,) surface energy of each particle's share of the free surface, J: γ a_i 2 s³ |g_i| / K.

    The CSF force's own measure of the surface (module docstring, pass 4): a particle of a
    flat face carries 2 s³ |g_i| / K = s² of it, so the sum is the free area, weighted by the
    surface weight a_i so that the bulk's noise in g counts for nothing.

    Parameters
    ----------
    x : (n,3) float64 positions, m. nbr, count : their neighbour rows (n,K) int32 and lengths (n,).
    mat : (n,) uint8 material ids. tension : per-material γ/K, N/m (:func:`csf_tension`).
    spacing, h : particle spacing and interaction radius, m.
    """
    from .surface_tension_brackbill1992_kernels import colour_gradient

    n = len(x)
    g, normal, weight = np.empty((n, 3)), np.empty((n, 3)), np.empty(n)
    rho0, _ = rest_densities(spacing, h)
    k = csf_lattice_constant(spacing, h)
    lo, hi = (f * k / (2.0 * spacing) for f in SURFACE_WEIGHT_RAMP)
    colour_gradient(x, nbr, count, h, 1.0 / rho0, lo, hi, g, normal, weight)
    return 2.0 * spacing**3 * np.asarray(tension)[mat] * weight * np.sqrt(np.einsum("ij,ij->i", g, g))
