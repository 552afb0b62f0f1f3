"""A helper of the term ``density_pressure_desbrun1996``: its walls, a collider's fluid mirrored (Akinci 2012).

A collider's surface within h of a particle stands for fluid at the particle's own density and
pressure behind a plane (the mirror of a boundary particle, Akinci et al. 2012's pressure mirroring
taken to the continuum): it adds ρ0 Γ(d) to the density (Γ the share of the density kernel beyond a
plane at distance d, scaled so that a lattice's first layer at d = s/2 is at ρ0) and pushes with
-2 P⁺/ρ² ρ0 Γ_p'(d) n (Γ_p the same share of the pressure kernel, P⁺ = max(P, 0): a wall does not
pull a cohesive lump; stickiness is the collider's). Behind two perpendicular faces (a tank's edge)
both shares count the same fluid, so the quarter space's share Γ₂ is taken off once. Penetration is
stopped by the collisions, which the scheme resolves at every micro-step.

Here: the tables of Γ, Γ' and Γ₂, built once per bake without numba (:class:`MirroredWalls`), and
each substep's flat faces and curved surfaces of the colliders. The flat walls' share and push are
summed inside the term's density and pair kernels (``density_pressure_desbrun1996_kernels``:
``_wall_share``, ``_wall_gradient``); the curved walls' are added by the term after them.
"""

from __future__ import annotations

import numpy as np

from ..numerics.spline import cubic_spline_shape_array

NO_PLANES = np.zeros((0, 4))


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
    w = cubic_spline_shape_array(q) * 8.0 / (np.pi * h**3)
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
    w = cubic_spline_shape_array(q)
    line = w.sum(axis=2) * step * 8.0 / (np.pi * h**3)
    table = np.zeros((cells + 1, cells + 1))
    table[:cells, :cells] = np.flip(np.cumsum(np.flip(np.flip(np.cumsum(np.flip(line, 0), 0), 0), 1), 1), 1) * step**2
    return step, table


class MirroredWalls:
    """The walls' tables for one bake (spacing s, support h) and the colliders' faces of the current substep.

    Built from the lattice sums of ``density_pressure_desbrun1996.lattice_sums`` (``full``, ``wall``,
    ``edge``): the tables are scaled so that a lattice's first layer at a wall, and at a tank's edge,
    gets exactly what the lattice beyond gives it.

    Attributes
    ----------
    table_d, table_gamma, table_slope, table_step : Γ(d + s/2) scaled and its derivative, sampled every
        ``table_step`` m at ``table_d`` (0 at d = 3s/2 and beyond, past which no site is within h at h = 2s).
    quarter, quarter_slope, quarter_step : Γ₂ shifted and scaled the same way, and ∂Γ₂/∂d₁.
    planes : (w,4) this substep's flat faces n·x = c, n into the fluid (after :meth:`planes_of`).
    edges : (e,2) pairs of perpendicular planes (a tank's edges).
    """

    def __init__(self, spacing: float, h: float, full: float, wall: float, edge: float):
        s = spacing
        self.spacing, self.h = spacing, h
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
        self._faces_of = None  # the ``Walls`` whose flat faces ``planes`` holds (one substep's)
        self.planes = NO_PLANES
        self.edges = np.zeros((0, 2), np.int64)
        self._curved: list[int] = []  # the colliders that are not flat, by index

    def planes_of(self, walls) -> np.ndarray:
        """(w,4) the flat walls of this substep's colliders (``walls``: ``boundary.walls.Walls`` or None),
        n·x = c with n into the fluid: a box container's and a plane's faces, each a wall of its own (the
        mirror's planes, ``boundary.mirror``), so a particle at a tank's edge gets the fluid behind both
        faces. The colliders stand still for the substep."""
        from ..boundary.mirror import flat_faces

        if walls is None:
            self.edges = np.zeros((0, 2), np.int64)
            return NO_PLANES
        if self._faces_of is not walls:
            self._faces_of = walls
            faces = [flat_faces(c, rot, pos) for c, rot, pos in walls.placed]
            self._curved = [k for k, f in enumerate(faces) if f is None]
            found = [f for f in faces if f is not None]
            self.planes = np.ascontiguousarray(np.concatenate(found)) if found else NO_PLANES
            n = self.planes[:, :3]
            dots = n[:, None, 0] * n[None, :, 0] + n[:, None, 1] * n[None, :, 1] + n[:, None, 2] * n[None, :, 2]
            self.edges = np.array([(a, b) for a in range(len(n)) for b in range(a + 1, len(n))
                                   if abs(float(dots[a, b])) < 1e-9], np.int64).reshape(-1, 2)
        return self.planes

    def curved(self, walls, x: np.ndarray, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each collider that is not flat, within h of particles ``rows`` (positions ``x``, m): (their
        positions in ``rows``, distances d, unit normals into the fluid) from its signed distance (call
        after :meth:`planes_of`)."""
        if walls is None or not self._curved or not len(rows):
            return []
        out = []
        pts = np.ascontiguousarray(x[rows])
        step = 0.25 * self.spacing
        for k in self._curved:
            d = walls.distance_to(k, pts)
            near = np.flatnonzero(d < self.h)
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
