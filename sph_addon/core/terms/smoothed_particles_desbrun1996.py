"""Smoothed particles (Desbrun & Cani 1996) and the classic SPH liquid (Treuille's lecture): the forces.

References: M. Desbrun, M.-P. Cani, *Smoothed Particles: A new paradigm for animating highly
deformable bodies*, EGCAS 1996 (``shared/papers/000``, slides ``001``); A. Treuille, lecture
*Particle-based Liquids* (``002``); J. P. Morris, P. J. Fox, Y. Zhu, *Modeling low Reynolds number
incompressible flows using SPH*, J. Comput. Phys. 136 (1997) for the viscous Laplacian.

For a force-based scheme (``integrators.Leapfrog``): :meth:`accelerations` evaluates, for the particles
asked,

1. the density by kernel sum, ρ_i = Σ_j m_j W_ij (eq. 3), divided by the kernel's sum over the particle
   lattice so that a lattice at rest is at ρ0 (the mass is ρ0 s³), plus the fluid a wall stands for;
2. the state equation P = c² (ρ - ρ0) (eq. 6, Treuille's p = κ (ρ - ρ̄) with κ = c²), with tension
   kept down to -``tensile_strength``: 0 makes the classic liquid (no negative pressure), a positive
   value Desbrun's cohesive lump (section 3.1);
3. the symmetric pressure force (eqs. 4, 7) and the artificial viscosity Π_ij (eq. 5, scaled by α)
   with the anti-clustering kernel's gradient (section 3.2), and the kinematic viscosity ν as the
   viscous Laplacian in Morris' form (Treuille's f = μ Σ m_j v_ij/ρ_j ∇²W, which with a kernel's own
   ∇²W does not hold ν at every spacing);
4. walls: a collider's surface within h of a particle stands for fluid at the particle's own density
   and pressure behind a plane (the mirror of a boundary particle, Akinci et al. 2012's pressure
   mirroring taken to the continuum): it adds ρ0 Γ(d) to the density (Γ the share of the density
   kernel beyond a plane at distance d, scaled so that a lattice's first layer at d = s/2 is at ρ0)
   and pushes with -2 P⁺/ρ² ρ0 Γ_p'(d) n (Γ_p the same share of the pressure kernel, P⁺ = max(P, 0):
   a wall does not pull a cohesive lump; stickiness is the collider's). Penetration is stopped by
   the collisions, which the scheme resolves at every micro-step.

:meth:`particle_dt` is eq. 8 (and the velocity, viscosity bounds): the scheme's individual levels.
"""

from __future__ import annotations

import math

import numpy as np

from .base import ArraySpec, Term

# The substep the policy may choose, in units of the step a particle at rest allows (eq. 8 with
# μ = 0): particles at rest then take 4 steps per neighbour search, and faster ones more.
CALM_STEPS_PER_SUBSTEP = 4
_NO_PLANES = np.zeros((0, 4))


def lattice_sums(spacing: float, h: float) -> tuple[float, float, float]:
    """(S, S_wall, S_edge): the cubic spline's sum s³ Σ W over a simple cubic lattice of ``spacing``
    around one of its sites (itself included); the part of it beyond a wall half a spacing below the
    site (the layers at -s, -2s, ...): what a wall must give the first layer; and the part beyond two
    perpendicular walls half a spacing away (what both walls' shares count twice at a tank's edge)."""
    reach = int(math.ceil(h / spacing))
    k = np.arange(-reach, reach + 1)
    ox, oy, oz = np.meshgrid(k, k, k, indexing="ij")
    r = spacing * np.sqrt(ox**2 + oy**2 + oz**2).ravel()
    w = spline_shape(r / h) * 8.0 / (math.pi * h**3) * spacing**3
    return float(w.sum()), float(w[oz.ravel() < 0].sum()), float(w[(oz.ravel() < 0) & (ox.ravel() < 0)].sum())


def spline_shape(q: np.ndarray) -> np.ndarray:
    """The cubic spline's shape at q = r/h, without its constant 8/(π h³), 0 from q = 1 on (the kernels'
    ``_spline`` for arrays: the tables built once per bake, without numba)."""
    q = np.asarray(q, np.float64)
    return np.where(q <= 0.5, 6.0 * (q**3 - q**2) + 1.0, np.where(q < 1.0, 2.0 * (1.0 - q) ** 3, 0.0))


def half_space_integrals(h: float, samples: int = 512) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The share of the density kernel beyond a plane, and the anti-clustering gradient's, tabulated.

    For a plane at distance d from a particle: Γ(d) = ∫_{z>d} W dV = ∫_d^h 2π r (r - d) W(r) dr of the
    cubic spline (what a flat wall's fluid behind it adds to the density, per unit ρ0), and
    Γ_p'(d) = -∫_d^h 2π r W_p(r) dr, the derivative of the same share of the anti-clustering kernel
    W_p (the pressure gradient a mirrored fluid exerts, per unit ρ0). Returns (d, Γ, Γ_p') at
    ``samples`` points over [0, h], by the trapezoid rule on 20,000 points.
    """
    r = np.linspace(0.0, h, 20001)
    q = r / h
    w = spline_shape(q) * 8.0 / (np.pi * h**3)
    wp = 15.0 / (np.pi * h**6) * (h - r) ** 3
    d = np.linspace(0.0, h, samples)
    gamma = np.empty(samples)
    slope = np.empty(samples)
    for k, dk in enumerate(d):
        beyond = r >= dk
        rb = r[beyond]
        gamma[k] = _trapezoid(2 * np.pi * rb * (rb - dk) * w[beyond], rb)
        slope[k] = -_trapezoid(2 * np.pi * rb * wp[beyond], rb)
    return d, gamma, slope


def _trapezoid(f: np.ndarray, r: np.ndarray) -> float:
    """∫ f dr by the trapezoid rule (numpy 1 and 2 name theirs differently)."""
    return float(0.5 * np.sum((f[1:] + f[:-1]) * np.diff(r))) if len(r) > 1 else 0.0


def quarter_space_integrals(h: float, cells: int = 128) -> tuple[float, np.ndarray]:
    """Γ₂(a, b) = ∫_{x>a, y>b} W dV of the cubic spline (support h): the share of the density kernel behind
    two perpendicular planes at distances a and b, per unit ρ0. Returns (step, table) with the table
    sampled every ``step`` = h / cells m from 0 along both axes, zero at h (midpoint sums on a grid of
    ``cells`` across h: Γ₂(0, 0) = 1/4 to 1e-12)."""
    step = h / cells
    x = (np.arange(cells) + 0.5) * step
    z = (np.arange(2 * cells) + 0.5) * step - h
    q = np.sqrt(x[:, None, None] ** 2 + x[None, :, None] ** 2 + z[None, None, :] ** 2) / h
    w = spline_shape(q)
    line = w.sum(axis=2) * step * 8.0 / (np.pi * h**3)
    table = np.zeros((cells + 1, cells + 1))
    table[:cells, :cells] = np.flip(np.cumsum(np.flip(np.flip(np.cumsum(np.flip(line, 0), 0), 0), 1), 1), 1) * step**2
    return step, table


def calm_step(c: float, alpha: float, nu: float, h: float) -> float:
    """The longest step eq. 8 allows a particle at rest among particles at rest, s: 0.3 ε / (c (1 + 0.6 α)),
    and no longer than the viscosity's 0.125 ε² / ν (ε = h/2; the same bounds as ``stable_steps``)."""
    eps = 0.5 * h
    step = 0.3 * eps / (c * (1.0 + 0.6 * alpha))
    return min(step, 0.125 * eps * eps / nu) if nu > 0.0 else step


class SmoothedParticlesDesbrun1996(Term):
    """Density, state equation, pressure, artificial and physical viscosity, walls (module docstring)."""

    name = "smoothed_particles_desbrun1996"
    citation = "Desbrun & Cani, Smoothed Particles, EGCAS 1996; Treuille, Particle-based Liquids"
    parameters = ("density", "speed_of_sound", "kinematic_viscosity", "artificial_viscosity", "tensile_strength")
    arrays = {
        "sph_density": ArraySpec((), np.float64, math.nan, "kernel-sum density at the last evaluation, kg/m³"),
        "sph_pressure": ArraySpec((), np.float64, 0.0, "pressure at the last evaluation, Pa"),
        "acceleration": ArraySpec((3,), np.float64, math.nan, "acceleration at the end of the last substep, "
                                                              "gravity included, m/s² (opens the next one)"),
        "time_level": ArraySpec((), np.uint8, 0, "individual time-step level l: the particle's step is the "
                                                 "substep / 2^l"),
        "sph_mu_max": ArraySpec((), np.float64, 0.0, "largest approach rate max_j μ_ij at the last evaluation, "
                                                     "m/s (eq. 8: the next step's level)"),
    }

    def __init__(self, setup):
        super().__init__(setup)
        s, h = setup.spacing, setup.h
        densities = setup.densities or tuple(getattr(setup.materials.get(k), "density", 1000.0)
                                             for k in range(setup.n_materials))
        self.mass = np.asarray(densities, np.float64) * s**3
        self.rho0 = self.per_material("density")
        self.c = self.per_material("speed_of_sound")
        self.c2 = self.c**2
        self.alpha = self.per_material("artificial_viscosity")
        self.nu = self.per_material("kinematic_viscosity")
        self.tension = self.per_material("tensile_strength")
        # The density a wall stands for: the liquid's own behind it; a cohesive lump (tension) does not
        # wet a wall, which then stands for nothing and only the collisions hold the lump off it.
        self.wall_rho0 = np.where(self.tension > 0.0, 0.0, self.rho0)
        full, wall, edge = lattice_sums(s, h)
        self.inv_lattice = 1.0 / full
        # 1 / W(s) of the cubic spline, without its constant: Monaghan 2000's f = W(r) / W(s).
        self.inv_w_spacing = 1.0 / float(spline_shape(s / h))

        # Γ(d + s/2), scaled: the lattice's first layer (d = s/2) gets exactly what the layers beyond the
        # wall give it, the second (d = 3s/2, beyond which no site is within h at h = 2s) nothing.
        d, gamma, _ = half_space_integrals(h)
        self.table_d = d
        self.table_gamma = np.interp(d + 0.5 * s, d, gamma, right=0.0) * (wall / full) / float(np.interp(s, d, gamma))
        self.table_slope = np.gradient(self.table_gamma, d)
        self.table_step = float(d[1] - d[0])
        # Behind two perpendicular faces (a tank's edge) both shares count the same fluid: the quarter
        # space's share, Γ₂(d₁ + s/2, d₂ + s/2) scaled as Γ, is taken off once.
        self.quarter_step, quarter = quarter_space_integrals(h)
        grid = np.arange(quarter.shape[0]) * self.quarter_step
        shifted = np.array([np.interp(grid + 0.5 * s, grid, row, right=0.0) for row in quarter])
        shifted = np.array([np.interp(grid + 0.5 * s, grid, col, right=0.0) for col in shifted.T]).T
        at_edge = float(np.interp(s, grid, np.array([np.interp(s, grid, row) for row in quarter])))
        self.quarter = np.ascontiguousarray(shifted * (edge / full) / at_edge)
        self.quarter_slope = np.ascontiguousarray(np.gradient(self.quarter, self.quarter_step, axis=0))
        self._faces_of = None  # the ``Walls`` whose flat faces ``_plane_rows`` holds (one substep's)
        self._plane_rows = _NO_PLANES
        self._edges = np.zeros((0, 2), np.int64)  # pairs of perpendicular planes (a tank's edges)
        self._curved: list[int] = []  # the colliders that are not flat, by index

    def active_arrays(self):
        return self.arrays

    # -- walls ------------------------------------------------------------------------------------
    def _planes(self, ctx) -> np.ndarray:
        """(w,4) the flat walls of this substep's colliders, n·x = c with n into the fluid: a box container's
        and a plane's faces, each a wall of its own (the mirror's planes, ``boundary.mirror``), so a particle
        at a tank's edge gets the fluid behind both faces. The colliders stand still for the substep."""
        from ..boundary.mirror import flat_faces

        walls = ctx.walls
        if walls is None:
            self._edges = np.zeros((0, 2), np.int64)
            return _NO_PLANES
        if self._faces_of is not walls:
            self._faces_of = walls
            faces = [flat_faces(c, rot, pos) for c, rot, pos in walls.placed]
            self._curved = [k for k, f in enumerate(faces) if f is None]
            found = [f for f in faces if f is not None]
            self._plane_rows = np.ascontiguousarray(np.concatenate(found)) if found else _NO_PLANES
            n = self._plane_rows[:, :3]
            dots = n[:, None, 0] * n[None, :, 0] + n[:, None, 1] * n[None, :, 1] + n[:, None, 2] * n[None, :, 2]
            self._edges = np.array([(a, b) for a in range(len(n)) for b in range(a + 1, len(n))
                                    if abs(float(dots[a, b])) < 1e-9], np.int64).reshape(-1, 2)
        return self._plane_rows

    def _curved_walls(self, ctx, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each collider that is not flat, within h of particles ``rows``: (their positions in ``rows``,
        distances d, unit normals into the fluid) from its signed distance (call after :meth:`_planes`)."""
        walls = ctx.walls
        if walls is None or not self._curved or not len(rows):
            return []
        out = []
        pts = np.ascontiguousarray(ctx.x[rows])
        step = 0.25 * self.setup.spacing
        for k in self._curved:
            d = walls.distance_to(k, pts)
            near = np.flatnonzero(d < self.setup.h)
            if not len(near):
                continue
            p = pts[near]
            grad = np.empty((len(near), 3))
            for axis in range(3):
                shift = np.zeros(3)
                shift[axis] = step
                grad[:, axis] = walls.distance_to(k, p + shift) - walls.distance_to(k, p - shift)
            norm = np.linalg.norm(grad, axis=1)
            grad /= np.where(norm > 0.0, norm, 1.0)[:, None]
            out.append((near, np.maximum(d[near], 0.0), grad))
        return out

    # -- the scheme's hooks -----------------------------------------------------------------------
    def accelerations(self, ctx, idx, out):
        from .smoothed_particles_desbrun1996_kernels import densities, pair_accelerations, pressures

        rows = np.ascontiguousarray(idx, np.int64)
        x, mat = ctx.x, ctx.material
        rho, p = ctx.arrays["sph_density"], ctx.arrays["sph_pressure"]
        planes = self._planes(ctx)
        densities(x, mat, ctx.nbr, ctx.count, rows, self.mass, self.setup.h, self.inv_lattice, planes,
                  self.wall_rho0, self.table_gamma, self.table_step, self._edges, self.quarter, self.quarter_step, rho)
        curved = self._curved_walls(ctx, rows)
        for near, d, _ in curved:
            at = rows[near]
            rho[at] += self.wall_rho0[mat[at]] * np.interp(d, self.table_d, self.table_gamma)
        pressures(rows, mat, rho, self.rho0, self.c2, self.tension, p)
        acc = np.empty((len(rows), 3))
        pair_accelerations(x, ctx.v, mat, ctx.nbr, ctx.count, rows, self.mass, rho, p, self.owned, self.c,
                           self.alpha, self.nu, self.setup.h, self.inv_w_spacing, planes, self.wall_rho0,
                           self.table_slope, self.table_step, self._edges, self.quarter_slope, self.quarter_step,
                           ctx.arrays["sph_mu_max"], acc)
        for near, d, normal in curved:
            at = rows[near]
            push = -np.maximum(p[at], 0.0) / rho[at] ** 2 * self.wall_rho0[mat[at]]
            push *= np.interp(d, self.table_d, self.table_slope)
            acc[near] += push[:, None] * normal
        out += acc

    def particle_dt(self, world, idx):
        from .smoothed_particles_desbrun1996_kernels import stable_steps

        rows = np.ascontiguousarray(idx, np.int64)
        out = np.empty(len(rows))
        stable_steps(world.v, world.material, rows, self.c, self.alpha, self.nu, self.setup.h,
                     world.arrays["sph_mu_max"], out)
        return out

    def calm_dt(self) -> float:
        """:func:`calm_step` of its materials, the shortest, s."""
        return min(calm_step(p.speed_of_sound, p.artificial_viscosity, p.kinematic_viscosity, self.setup.h)
                   for p in self.setup.materials.values())

    def max_dt(self, world):
        return CALM_STEPS_PER_SUBSTEP * self.calm_dt()

    def work_per_substep(self, dt):
        return 2.0 * max(1.0, dt / self.calm_dt())

    def frame_stats(self, world):
        """The mean and largest compression ρ/ρ0 - 1 of the model's particles at their last evaluation."""
        mine = self.owned[world.material]
        if not mine.any():
            return {}
        err = world.arrays["sph_density"][mine] / self.rho0[world.material[mine]] - 1.0
        err = err[np.isfinite(err)]
        if not len(err):
            return {}
        return {"sph_compression_mean": float(err.mean()), "sph_compression_max": float(err.max())}
