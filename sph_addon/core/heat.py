"""Heat: a temperature per particle (°C), conducted between particles and from surfaces held at a
temperature, in every material model's particles alike.

Conduction (Cleary & Monaghan 1999, J. Comput. Phys. 148, eq. 9, with Brookshaw 1985's Laplacian):

    ρ_i c_i dT_i/dt = Σ_j V 2 k_ij (T_j - T_i) |W'(r_ij)| / r_ij,   k_ij = 2 k_i k_j / (k_i + k_j)

with V = s³ the volume every particle stands for (the lattice it is emitted on), W the cubic spline of
support h, and the sum scaled so that it is exact for a quadratic field on that lattice
(:func:`lattice_scale`; the bare sum is the continuum's integral, 2 % off). Each pair's terms are
equal and opposite, so the heat Σ V ρ c T of an insulated body is kept to round-off, and the
harmonic mean k_ij lets two materials meet (chocolate on a plate of butter).

Known limit: a particle at a free (insulating) surface misses the neighbours beyond it, and its
Laplacian along the surface is short by up to half: a cosine along a bar 4 particles thick decays
8 % slower than exp(-α k² t), one 10 particles thick 3.5 % (``tests/core/test_heat.py``). A
per-particle normalisation (pairs weighted by the mean of both particles') is the next step.

A held surface (``heat_contact`` on a collider) conducts at the particle's own k: for a particle at
distance d it stands for the particles' lattice continued beyond the surface (layers at s/2, 3s/2, ...
behind it), whose temperatures extend the line through the surface's T_w and the particle's T_i,
T = T_w + (T_w - T_i) δ/d at depth δ (Morris et al. 1997's no-slip walls, for temperature). A linear
profile between two held surfaces is then a steady state of the sum, not only of the continuum.

Time stepping: explicit (forward Euler) over the substep, in as many equal cycles as keep every
particle's update a mean of old temperatures (dt Σ_j w_ij ≤ ½ (ρ c)_i, so no temperature leaves the
range it started in); positions are those at the end of the substep. An implicit solve would take
the same steps for stiff settings in fewer passes; the cycles are counted in the frame statistics
(``heat_cycles``).
"""

from __future__ import annotations

import math

import numpy as np

from .colliders.response import placed_distances
from .diagnostics import material_densities

# Below this distance from a held surface (in spacings) a particle's extrapolation is taken at it.
_NEAREST = 0.25
_TABLE = 256


def _spline_slope(r: np.ndarray, h: float) -> np.ndarray:
    """-dW/dr of the cubic spline (``kernels.cubic_spline_dw``) for many r < h, in numpy, 1/m⁴."""
    q = r / h
    k_h = 8.0 / (math.pi * h**4)
    return np.where(q <= 0.5, -k_h * (18.0 * q * q - 12.0 * q), 6.0 * k_h * (1.0 - q) ** 2)


def held_surface_gain(spacing: float, h: float, d: np.ndarray) -> np.ndarray:
    """Σ over the lattice behind a surface of V 2 |W'(r)|/r (1 + δ/d), 1/m², for particles at distances
    ``d`` (m) from it (times k: the surface's W/(m³ K))."""
    reach = int(math.ceil(h / spacing)) + 1
    a = np.arange(-reach, reach + 1) * spacing
    lateral = (a[:, None] ** 2 + a[None, :] ** 2).ravel()
    out = np.zeros(len(d))
    for depth in (np.arange(reach + 1) + 0.5) * spacing:
        r = np.sqrt(lateral[None, :] + (np.asarray(d)[:, None] + depth) ** 2)
        inside = (r < h) & (r > 0)
        pair = np.where(inside, 2.0 * spacing**3 * _spline_slope(np.where(inside, r, h), h) / np.where(inside, r, 1.0),
                        0.0)
        out += pair.sum(axis=1) * (1.0 + depth / np.maximum(d, _NEAREST * spacing))
    return out


def lattice_scale(spacing: float, h: float) -> float:
    """2 / Σ_j V 2 Δx_j² |W'(r_j)|/r_j over a particle's neighbours on the cubic lattice: the factor that
    makes the pair sum's Laplacian of x² exactly 2 where the particles stand as emitted (the bare sum
    is the continuum's integral, ~14 % off on the lattice at h = 2 s: a cosine decayed that much slower)."""
    reach = int(math.ceil(h / spacing))
    a = np.arange(-reach, reach + 1) * spacing
    gx, gy, gz = np.meshgrid(a, a, a, indexing="ij")
    r = np.sqrt(gx**2 + gy**2 + gz**2)
    inside = (r < h) & (r > 0)
    moment = np.sum(2.0 * spacing**3 * gx[inside] ** 2 * _spline_slope(r[inside], h) / r[inside])
    return float(2.0 / moment)


class Heat:
    """The temperature of a bake: built from the scene, inert when no material conducts."""

    def __init__(self, scene, colliders, state):
        mats = scene.materials
        self.k = np.array([float(getattr(m.params, "thermal_conductivity", 0.0)) for m in mats])
        self.rho_c = material_densities(mats) * np.array([float(getattr(m.params, "specific_heat", 1.0))
                                                           for m in mats])
        self.active = bool(np.any(self.k > 0.0))
        self.spacing, self.h = scene.particle_spacing, scene.h
        self.source_temperature = [float(p["temperature"]) for _, p in scene.sources]
        self.held = [(c, float(p["temperature"])) for c, (_, p) in zip(colliders, scene.colliders)
                     if p.get("heat_contact")]
        self.cycles = 0
        if not self.active:
            return
        state.add_array("temperature", (), np.float64, fill=np.nan)  # every emission sets it
        self.scale = lattice_scale(self.spacing, self.h)
        self._d = np.linspace(0.0, self.h, _TABLE)
        self._gain = self.scale * held_surface_gain(self.spacing, self.h, self._d)

    def on_emitted(self, state, new: slice, source: int) -> None:
        """Particles ``new`` of source ``source`` start at its temperature."""
        if self.active:
            state.arrays["temperature"][new] = self.source_temperature[source]

    def _walls(self, x: np.ndarray, mat: np.ndarray, frame: float) -> tuple[np.ndarray, np.ndarray]:
        """Each particle's held-surface gain (W/(m³ K)) and that surface's temperature (°C); the nearest
        held surface within h counts."""
        gain, temp = np.zeros(len(x)), np.zeros(len(x))
        if not self.held:
            return gain, temp
        best, d = np.full(len(x), np.inf), np.empty(len(x))
        for c, t_wall in self.held:
            rot, pos = c.transform(frame)
            placed_distances(c.shape.code, c.shape.params, c.shape.grid, rot, pos, x, d)
            closer = (d < best) & (d < self.h)
            best[closer] = d[closer]
            temp[closer] = t_wall
        near = np.isfinite(best)
        gain[near] = self.k[mat[near]] * np.interp(np.maximum(best[near], 0.0), self._d, self._gain)
        return gain, temp

    def step(self, state, nbr, count, dt: float, frame: float) -> None:
        """Conduct heat over a substep of ``dt`` s, at the positions of its end (colliders posed at ``frame``)."""
        from .heat_kernels import add_heat, conduction_rates

        x, mat, temp = state.x, state.material, state.arrays["temperature"]
        if not self.active or not len(x):
            return
        gain, wall_temp = self._walls(x, mat, frame)
        rate, diag = np.empty(len(x)), np.empty(len(x))
        k_mat = np.ascontiguousarray(self.k)
        volume = self.scale * self.spacing**3
        conduction_rates(x, temp, mat, nbr, count, k_mat, volume, self.h, gain, wall_temp, rate, diag)
        stiff = float(np.max(diag / self.rho_c[mat]))
        cycles = max(1, int(math.ceil(2.0 * dt * stiff)))
        sub = dt / cycles
        for c in range(cycles):
            if c:
                conduction_rates(x, temp, mat, nbr, count, k_mat, volume, self.h, gain, wall_temp, rate, diag)
            add_heat(temp, rate, self.rho_c, mat, sub)
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
