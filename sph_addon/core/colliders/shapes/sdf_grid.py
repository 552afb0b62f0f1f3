"""Lookup of a signed distance field sampled on a grid: trilinear value, gradient normal, batches.

Reference: S. Clavet, *Simulation de matériaux viscoélastiques à l'aide de
particules*, M.Sc. thesis, Université de Montréal, 2005, chapter 6: each object's
distance field is sampled on a regular grid in the object's frame, interpolated
trilinearly, and the normal is taken from finite differences of the field.

``sdf_grid`` has the collider signature fixed in ``sdf_analytic``::

    sdf(params: float64[:], grid: float32[:, :, :], px, py, pz) -> (d, nx, ny, nz)

and the collision kernels reach it through its code ``sdf_dispatch.GRID``.

Grid layout: ``grid[i, j, k]`` is the field at node
``origin + (i, j, k) * cell_size`` (C order, ``k`` along z varies fastest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...numerics import config
from ...numerics.kernel_cache import njit, prange


@njit(**config.NJIT)
def _trilinear(grid, gx, gy, gz):
    """Trilinear value of ``grid`` at continuous node coordinates, clamped into the grid.

    Parameters
    ----------
    grid : (ni, nj, nk) float32, each dim >= 2.
    gx, gy, gz : float
        Position in node units ((p - origin) / h).

    Returns
    -------
    float
    """
    ni, nj, nk = grid.shape
    gx = min(max(gx, 0.0), ni - 1.0)
    gy = min(max(gy, 0.0), nj - 1.0)
    gz = min(max(gz, 0.0), nk - 1.0)
    i = min(int(gx), ni - 2)
    j = min(int(gy), nj - 2)
    k = min(int(gz), nk - 2)
    fx = gx - i
    fy = gy - j
    fz = gz - k
    c00 = grid[i, j, k] * (1.0 - fz) + grid[i, j, k + 1] * fz
    c01 = grid[i, j + 1, k] * (1.0 - fz) + grid[i, j + 1, k + 1] * fz
    c10 = grid[i + 1, j, k] * (1.0 - fz) + grid[i + 1, j, k + 1] * fz
    c11 = grid[i + 1, j + 1, k] * (1.0 - fz) + grid[i + 1, j + 1, k + 1] * fz
    c0 = c00 * (1.0 - fy) + c01 * fy
    c1 = c10 * (1.0 - fy) + c11 * fy
    return c0 * (1.0 - fx) + c1 * fx


@njit(**config.NJIT)
def sdf_grid(params, grid, px, py, pz):
    """Signed distance and outward normal from a sampled grid (collider signature).

    Value: trilinear interpolation of the node values (Clavet 2005, chapter 6).
    Normal: central differences of the *trilinear field* with step one cell,
    normalised (Clavet's "différences finies"). Being differences of a
    continuous function, the normal is continuous in space, unlike the
    piecewise gradient of the trilinear cell, which jumps at cell faces and
    would make resting particles jitter. Where the differences vanish (a
    medial point), +z is returned.

    Outside the grid box the value at the nearest box point is used, plus the
    distance to the box (an upper bound of the true distance, continuous at
    the box); the normal blends from the boundary gradient to the outward
    direction from the box over one cell, so it is continuous too.

    Parameters
    ----------
    params : (4,) float64
        ``[origin_x, origin_y, origin_z, cell_size]`` in metres, local frame.
    grid : (ni, nj, nk) float32
        Node values (m), ``grid[i, j, k]`` at ``origin + (i, j, k) * cell_size``;
        each dim >= 2.
    px, py, pz : float
        Query point in the collider's local frame (m).

    Returns
    -------
    d, nx, ny, nz : float
        Signed distance (m, negative inside) and unit outward normal.
    """
    h = params[3]
    inv = 1.0 / h
    ni, nj, nk = grid.shape
    gx = (px - params[0]) * inv
    gy = (py - params[1]) * inv
    gz = (pz - params[2]) * inv
    cx = min(max(gx, 0.0), ni - 1.0)
    cy = min(max(gy, 0.0), nj - 1.0)
    cz = min(max(gz, 0.0), nk - 1.0)
    d = _trilinear(grid, cx, cy, cz)
    nx = _trilinear(grid, cx + 1.0, cy, cz) - _trilinear(grid, cx - 1.0, cy, cz)
    ny = _trilinear(grid, cx, cy + 1.0, cz) - _trilinear(grid, cx, cy - 1.0, cz)
    nz = _trilinear(grid, cx, cy, cz + 1.0) - _trilinear(grid, cx, cy, cz - 1.0)
    norm = math.sqrt(nx * nx + ny * ny + nz * nz)
    if norm > 0.0:
        nx /= norm
        ny /= norm
        nz /= norm
    else:
        nx = 0.0
        ny = 0.0
        nz = 1.0
    ox = (gx - cx) * h
    oy = (gy - cy) * h
    oz = (gz - cz) * h
    off = math.sqrt(ox * ox + oy * oy + oz * oz)
    if off > 0.0:
        d += off
        # weight h on the boundary normal: n = normalize(h * n_b + offset)
        nx = h * nx + ox
        ny = h * ny + oy
        nz = h * nz + oz
        norm = math.sqrt(nx * nx + ny * ny + nz * nz)
        if norm > 0.0:
            nx /= norm
            ny /= norm
            nz /= norm
        else:
            nx = ox / off
            ny = oy / off
            nz = oz / off
    return d, nx, ny, nz


@njit(**config.NJIT_PARALLEL)
def _sample_batch(params, grid, points, dist, normals):
    """Evaluate ``sdf_grid`` at many points.

    Parameters
    ----------
    params, grid : as in ``sdf_grid``.
    points : (N, 3) float64
        Query points, local frame (m).
    dist : (N,) float64
        Output distances (m), overwritten.
    normals : (N, 3) float64
        Output unit normals, overwritten.
    """
    for n in prange(points.shape[0]):
        d, nx, ny, nz = sdf_grid(params, grid, points[n, 0], points[n, 1], points[n, 2])
        dist[n] = d
        normals[n, 0] = nx
        normals[n, 1] = ny
        normals[n, 2] = nz


@dataclass(frozen=True)
class MeshSDF:
    """A mesh's signed distance field sampled on a grid in its local frame.

    Attributes
    ----------
    params : (4,) float64
        ``[origin_x, origin_y, origin_z, cell_size]`` (m), the ``params`` of ``sdf_grid``.
    grid : (ni, nj, nk) float32, C-contiguous
        Signed distance at the nodes (m), negative inside.
    build_s : float
        Wall time of the build (s), JIT compilation included if it happened.
    mode : str
        ``"solid"`` or ``"shell"``.
    """

    params: np.ndarray
    grid: np.ndarray
    build_s: float
    mode: str = "solid"
    sdf_fn: ClassVar = staticmethod(sdf_grid)

    @property
    def origin(self) -> np.ndarray:
        """(3,) float64 position of node (0, 0, 0) (m)."""
        return self.params[:3]

    @property
    def cell_size(self) -> float:
        """Grid spacing (m)."""
        return float(self.params[3])

    def node_positions(self) -> np.ndarray:
        """(ni, nj, nk, 3) float64 node positions (m); for tests and plots."""
        axes = [self.params[a] + self.params[3] * np.arange(n) for a, n in enumerate(self.grid.shape)]
        return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)

    def sample(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance and unit outward normal at many points (local frame).

        Parameters
        ----------
        points : (N, 3) array-like, metres.

        Returns
        -------
        dist : (N,) float64
        normals : (N, 3) float64
        """
        pts = np.ascontiguousarray(np.asarray(points, dtype=np.float64).reshape(-1, 3))
        dist = np.empty(len(pts))
        normals = np.empty((len(pts), 3))
        _sample_batch(self.params, self.grid, pts, dist, normals)
        return dist, normals
