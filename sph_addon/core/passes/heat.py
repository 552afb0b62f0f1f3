"""Heat: a temperature per particle (°C), conducted between particles, from surfaces held at a
temperature and to the air, in every material model's particles alike.

Conduction (Cleary & Monaghan 1999, J. Comput. Phys. 148, eq. 9, with Brookshaw 1985's Laplacian):

    ρ_i c_i dT_i/dt = Σ_j V 2 k_ij (C_i + C_j)/2 (T_j - T_i) |W'(r_ij)| / r_ij,   k_ij = 2 k_i k_j / (k_i + k_j)

with V = s³ the volume every particle stands for (the lattice it is emitted on), W the cubic spline of
support h, the sum scaled to be exact for a quadratic field on that lattice (:func:`lattice_scale`;
the bare sum is the continuum's integral, 2 % off), and C_i a particle's neighbourhood normalisation.
Each pair's terms are equal and opposite, so the heat Σ V ρ c T of an insulated body is kept to
round-off, and the harmonic mean k_ij lets two materials meet (chocolate on a plate of butter).

The normalisation: a particle at a free (insulating) surface misses the neighbours beyond it, and its
Laplacian along the surface falls short: a cosine along a bar 4 particles thick decayed 8 % slower
than exp(-α k² t). C_i = (M / M_i)^½, M_i the particle's moment Σ_j V 2 r_ij |W'(r_ij)| over its
conducting neighbours (and what held surfaces stand for), M the full lattice's. The full ratio
(M / M_i) over-corrects (that cosine 8 % fast: it weighs the pairs inside the surface as much as the
missing ones); its square root, chosen by that measurement, leaves 0.6 % on the thin bar and 0.5 % on
one 10 particles thick (``tests/core/test_heat.py``).

A held surface (``heat_contact`` on a collider) conducts at the particle's own k: for a particle at
distance d it stands for the particles' lattice continued beyond the surface (layers at s/2, 3s/2, ...
behind it), whose temperatures extend the line through the surface's T_w and the particle's T_i,
T = T_w + (T_w - T_i) δ/d at depth δ (Morris et al. 1997's no-slip walls, for temperature). A linear
profile between two held surfaces is then a steady state of the sum, not only of the continuum.

The air (``air_heat_transfer`` h, ``ambient_temperature``): Newton's cooling, ρ c dT/dt = h (A/V)
(T_air - T), on the share φ_i = 1 - M_i/M of a particle's neighbourhood that neither particles nor
colliders fill, as a face s² per flat surface's share.

Time stepping: explicit (forward Euler) over the substep, in as many equal cycles as keep every
particle's update a mean of old temperatures (dt Σ_j w_ij ≤ ½ (ρ c)_i, so no temperature leaves the
range it started in); positions are those at the end of the substep. An implicit solve would take
the same steps for stiff settings in fewer passes; the cycles are counted in the frame statistics
(``heat_cycles``).
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics.spline import cubic_spline_dw_array
from ..world.diagnostics import material_densities
from .base import PassSetup, WorldPass

# Below this distance from a held surface (in spacings) a particle's extrapolation is taken at it.
_NEAREST = 0.25
_TABLE = 256


def _spline_slope(r: np.ndarray, h: float) -> np.ndarray:
    """-dW/dr of the cubic spline (``numerics.spline.cubic_spline_dw_array``) for many r < h, 1/m⁴."""
    return -cubic_spline_dw_array(r, h)


def held_surface_sums(spacing: float, h: float, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Over the lattice behind a surface (layers at s/2, 3s/2, ... behind it), for particles at distances
    ``d`` (m): Σ V 2 |W'(r)|/r (1 + δ/d), 1/m² (times k: a held surface's W/(m³ K)), and the moment
    Σ V 2 r |W'(r)| the surface stands for (see ``heat_kernels.moments``), V = s³."""
    reach = int(math.ceil(h / spacing)) + 1
    a = np.arange(-reach, reach + 1) * spacing
    lateral = (a[:, None] ** 2 + a[None, :] ** 2).ravel()
    d = np.asarray(d, np.float64)
    gain, moment = np.zeros(len(d)), np.zeros(len(d))
    for depth in (np.arange(reach + 1) + 0.5) * spacing:
        r = np.sqrt(lateral[None, :] + (d[:, None] + depth) ** 2)
        inside = (r < h) & (r > 0)
        slope = np.where(inside, _spline_slope(np.where(inside, r, h), h), 0.0)
        gain += (2.0 * spacing**3 * slope / np.where(inside, r, 1.0)).sum(axis=1) * (
            1.0 + depth / np.maximum(d, _NEAREST * spacing))
        moment += (2.0 * spacing**3 * slope * r).sum(axis=1)
    return gain, moment


def _lattice(spacing: float, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The offsets (x, r) and -W'(r) of a particle's neighbours on the cubic lattice."""
    reach = int(math.ceil(h / spacing))
    a = np.arange(-reach, reach + 1) * spacing
    gx, gy, gz = np.meshgrid(a, a, a, indexing="ij")
    r = np.sqrt(gx**2 + gy**2 + gz**2)
    inside = (r < h) & (r > 0)
    return gx[inside], r[inside], _spline_slope(r[inside], h)


def lattice_scale(spacing: float, h: float) -> float:
    """2 / Σ_j V 2 Δx_j² |W'(r_j)|/r_j over a particle's neighbours on the cubic lattice: the factor that
    makes the pair sum's Laplacian of x² exactly 2 where the particles stand as emitted (the bare sum is
    the continuum's integral, 2 % off on the lattice at h = 2 s)."""
    x, r, slope = _lattice(spacing, h)
    return float(2.0 / np.sum(2.0 * spacing**3 * x**2 * slope / r))


def lattice_moment(spacing: float, h: float) -> float:
    """Σ_j V 2 r_j |W'(r_j)| of a particle inside the lattice, V = s³ (``heat_kernels.moments``)."""
    _, r, slope = _lattice(spacing, h)
    return float(np.sum(2.0 * spacing**3 * r * slope))


def material_heat(mats) -> tuple[np.ndarray, np.ndarray]:
    """Per material: the conductivity k, W/(m K), and the heat capacity per volume ρ c, J/(m³ K)."""
    k = np.array([float(m.params.thermal_conductivity) for m in mats])
    return k, material_densities(mats) * np.array([float(m.params.specific_heat) for m in mats])


def conduction_cycles(dt: float, rate: float) -> int:
    """Equal explicit cycles a substep of ``dt`` s takes, ``rate`` the largest diag_i / (ρ c)_i (1/s): each
    cycle's update stays a mean of old temperatures, dt/cycles diag_i ≤ ½ (ρ c)_i (module docstring)."""
    return max(1, int(math.ceil(2.0 * dt * rate)))


def interior_conductance(spacing: float, h: float) -> float:
    """diag_i / k_i of a particle inside the lattice among particles of its own material, C = 1
    (``heat_kernels.conduction_rates``): Σ_j V 2 |W'(r_j)| / r_j with V the scaled volume, 1/m²."""
    _, r, slope = _lattice(spacing, h)
    return lattice_scale(spacing, h) * float(np.sum(2.0 * spacing**3 * slope / r))


def substep_cycles(scene, dt: float) -> int:
    """Conduction cycles of a substep of ``dt`` s for a particle inside the most diffusive material
    (1 where nothing conducts): what a bake takes at the least; a particle at a held surface or at the
    air conducts more (its diagonal holds their gains too) and may take a few more."""
    k, rho_c = material_heat(scene.materials)
    if not np.any(k > 0.0):
        return 1
    diffusivity = float(np.max(np.where(k > 0.0, k / rho_c, 0.0)))
    return conduction_cycles(dt, diffusivity * interior_conductance(scene.particle_spacing, scene.h))


class Heat(WorldPass):
    """The temperature of a bake: built from the scene, none when no material conducts."""

    name = "heat"

    @classmethod
    def build(cls, setup: PassSetup) -> Heat:
        return cls(setup.scene, setup.state)

    def __init__(self, scene, state):
        self.k, self.rho_c = material_heat(scene.materials)
        self.active = bool(np.any(self.k > 0.0))
        self.spacing, self.h = scene.particle_spacing, scene.h
        self.source_temperature = [float(p["temperature"]) for _, p in scene.sources]
        self.ambient = float(scene.simulation["ambient_temperature"])
        self.air = float(scene.simulation["air_heat_transfer"])
        # Every collider's held temperature (°C), or None where it insulates, in the scene's order.
        self.held = [float(p["temperature"]) if p.get("heat_contact") else None for _, p in scene.colliders]
        self.cycles = 0
        if not self.active:
            return
        state.add_array("temperature", (), np.float64, fill=np.nan)  # every emission sets it
        self.scale = lattice_scale(self.spacing, self.h)
        self.full = self.scale * lattice_moment(self.spacing, self.h)
        self._d = np.linspace(0.0, self.h, _TABLE)
        gain, moment = held_surface_sums(self.spacing, self.h, self._d)
        self._gain, self._moment = self.scale * gain, self.scale * moment
        # The share of a particle's moment a flat free surface takes away at the lattice's first layer
        # (s/2 from it), where the particle's face s² meets the air.
        self.flat = float(np.interp(0.5 * self.spacing, self._d, self._moment)) / self.full

    def on_emitted(self, state, new: slice, source: int) -> None:
        """Particles ``new`` of source ``source`` start at its temperature."""
        if self.active:
            state.arrays["temperature"][new] = self.source_temperature[source]

    def _surfaces(self, x: np.ndarray, mat: np.ndarray, walls) -> tuple[np.ndarray, ...]:
        """Per particle: the nearest held surface's gain (W/(m³ K), before the normalisation) and
        temperature (°C), and the moments the held surfaces and all colliders stand for; the colliders as
        the substep's ``walls`` place them (None: there is none)."""
        n = len(x)
        gain, temp, ghost_held, ghost_any = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        held, nearest = np.full(n, np.inf), np.full(n, np.inf)
        for k, t_wall in enumerate(self.held if walls is not None else ()):
            d = walls.distance_to(k, x)
            np.minimum(nearest, d, out=nearest)
            if t_wall is not None:
                closer = (d < held) & (d < self.h)
                held[closer] = d[closer]
                temp[closer] = t_wall
        near = held < self.h
        at = np.maximum(held[near], 0.0)
        gain[near] = self.k[mat[near]] * np.interp(at, self._d, self._gain)
        ghost_held[near] = np.interp(at, self._d, self._moment)
        close = nearest < self.h
        ghost_any[close] = np.interp(np.maximum(nearest[close], 0.0), self._d, self._moment)
        return gain, temp, ghost_held, ghost_any

    def apply(self, state, nbr, count, dt: float, frame: float, walls=None) -> None:
        """Conduct heat over a substep of ``dt`` s, at the positions of its end, from the surfaces the
        substep's ``walls`` place there (``boundary.walls.Walls``; None: no collider)."""
        from .heat_kernels import add_heat, conduction_rates, moments

        if not self.active or not state.n:
            return
        x, mat, temp, n = state.x, state.material, state.arrays["temperature"], state.n
        gain, wall_temp, ghost_held, ghost_any = self._surfaces(x, mat, walls)
        volume = self.scale * self.spacing**3
        k_mat = self.k
        conducting, present = np.empty(n), np.empty(n)
        moments(x, mat, nbr, count, k_mat, volume, self.h, ghost_held, ghost_any, conducting, present)
        # A particle missing neighbours (a free surface, a non-conducting neighbour) weighs the ones it has
        # more, by the square root of the full lattice's moment over its own (the module docstring: the full
        # ratio over-corrects).
        norm = np.sqrt(np.clip(self.full / np.maximum(conducting, 1e-300), 0.25, 4.0))
        gain *= norm
        # The air reaches the share φ of a particle's neighbourhood that nothing fills: a face s² per flat
        # surface's share (``flat``), an area per volume φ / (flat s).
        exposed = np.clip(1.0 - present / self.full, 0.0, 1.0)
        air = np.where(self.k[mat] > 0.0, self.air * exposed / (self.flat * self.spacing), 0.0)
        rate, diag = np.empty(n), np.empty(n)
        args = (x, temp, mat, nbr, count, k_mat, volume, self.h, norm, gain, wall_temp, air, self.ambient, rate, diag)
        conduction_rates(*args)
        cycles = conduction_cycles(dt, float(np.max(diag / self.rho_c[mat])))
        for c in range(cycles):
            if c:
                conduction_rates(*args)
            add_heat(temp, rate, self.rho_c, mat, dt / cycles)
        self.cycles += cycles

    def frame_stats(self, state) -> dict:
        """The frame's lowest and highest temperature (°C) and conduction cycles."""
        if not self.active or not state.n:
            return {}
        t = state.arrays["temperature"]
        out = {"temperature_min": float(t.min()), "temperature_max": float(t.max()), "heat_cycles": self.cycles}
        self.cycles = 0
        return out

    def cache_fields(self, state) -> dict:
        """``temperature`` (°C, float32) for the particle frames, when heat is computed."""
        return {"temperature": (state.arrays["temperature"], "<f4")} if self.active else {}
