"""Signed distance fields sampled from triangle meshes, and their grid lookup.

Reference: S. Clavet, *Simulation de matériaux viscoélastiques à l'aide de
particules*, M.Sc. thesis, Université de Montréal, 2005, chapter 6 ("Interactions
avec des objets") and section 6.1 ("Calcul du champ de distance").

Clavet samples each object's distance field on a regular grid in the object's
frame, interpolates it trilinearly and takes the normal from finite differences
of the field. Section 6.1 builds the field in four steps, robust to non-manifold
meshes and to useless polygons inside the object:

1. exact distance at the grid points near the object,
2. sweep it to the rest of the domain,
3. find the exterior by sweeping inward from a point known to be outside,
4. erase what is not exterior and rebuild it by sweeping from the exterior.

``build_mesh_sdf(mode="solid")`` follows those steps (see ``_build_solid`` for
the details and for where it deviates). ``mode="shell"`` is for open sheets,
planes, cloth and open bowls: ``d = |unsigned distance| - thickness``, so they
collide from both sides.

The pieces live in modules named after what they hold; this module validates
the input and orchestrates them, and re-exports the public API:

- ``sdf_triangles``: point-triangle distance, segment-triangle test, binning;
- ``sdf_unsigned``: narrow band and sweep (steps 1-2);
- ``sdf_sign``: exterior flood, growth to the surface, outer skin (steps 3-4);
- ``sdf_grid``: trilinear lookup ``sdf_grid`` (the collider signature of
  ``sdf_analytic``), batched sampling and the ``MeshSDF`` result.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from ...errors import InputError
from ...numerics import config
from .sdf_clip import barrier_nodes, clipped_layout, near_grid, restore
from .sdf_grid import MeshSDF, sdf_grid
from .sdf_sign import _build_solid
from .sdf_unsigned import _unsigned

__all__ = ["MODES", "MeshSDF", "build_mesh_sdf", "estimate_sdf_bytes", "grid_dims", "sdf_grid"]

log = logging.getLogger(__name__)

# Bytes per grid node for the estimate checked against the memory budget:
# squared distance float64 (8) + nearest triangle int32 (4) twice (all
# triangles, then outer-skin ones), exterior flags uint8 x2 (2),
# BFS queue int64 (8), output float32 (4).
_BYTES_PER_NODE = 8 + 4 + 8 + 4 + 2 + 8 + 4
# Per triangle: corners (72), bbox (48), block-list entries (~8 x 4), visibility flags.
_BYTES_PER_TRIANGLE = 72 + 48 + 64 + 8

MODES = ("solid", "shell")


def _validate(where: str, vertices, triangles, cell_size: float, padding: float, thickness: float,
              mode: str, hole_closing: float) -> tuple[np.ndarray, np.ndarray]:
    """Check the inputs and return (V float64 (n,3), T int64 (m,3)); raise InputError."""
    if mode not in MODES:
        raise InputError(where, f"mode must be one of {MODES}, got {mode!r}.")
    for name, val in (("cell_size", cell_size), ("padding", padding), ("thickness", thickness),
                      ("hole_closing", hole_closing)):
        if not isinstance(val, (int, float, np.floating, np.integer)) or not math.isfinite(val):
            raise InputError(where, f"{name} must be a finite number, got {val!r}.")
    if cell_size <= 0:
        raise InputError(where, f"cell_size must be positive, got {cell_size!r}.")
    if padding < 0 or thickness < 0 or hole_closing < 0:
        raise InputError(where, "padding, thickness and hole_closing must not be negative.")
    v = np.asarray(vertices)
    t = np.asarray(triangles)
    if v.size == 0 or t.size == 0:
        raise InputError(where, f"the mesh is empty ({v.size // 3 if v.ndim else 0} vertices, "
                                f"{t.size // 3 if t.ndim else 0} triangles).")
    if v.ndim != 2 or v.shape[1] != 3 or not np.issubdtype(v.dtype, np.number):
        raise InputError(where, f"vertices must be an (n, 3) array of numbers, got shape {v.shape}.")
    if t.ndim != 2 or t.shape[1] != 3 or not np.issubdtype(t.dtype, np.integer):
        raise InputError(where, f"triangles must be an (m, 3) integer array, got shape {t.shape} "
                                f"and dtype {t.dtype}.")
    v = v.astype(np.float64)
    bad = ~np.isfinite(v).all(axis=1)
    if bad.any():
        raise InputError(where, f"{int(bad.sum())} vertices are NaN or infinite "
                                f"(first: vertex {int(np.argmax(bad))}).")
    t = t.astype(np.int64)
    lo, hi = int(t.min()), int(t.max())
    if lo < 0 or hi >= len(v):
        raise InputError(where, f"triangle indices must be in 0..{len(v) - 1}, found {lo}..{hi}.")
    return v, t


def _grid_layout(v: np.ndarray, h: float, pad: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid origin and node counts covering the vertex bbox grown by ``pad``."""
    lo = v.min(axis=0) - pad
    hi = v.max(axis=0) + pad
    dims = np.maximum(np.ceil((hi - lo) / h).astype(np.int64) + 1, 2)
    return lo, dims


def _padding(h: float, padding: float, thickness: float, mode: str, hole_closing: float = 0.0) -> float:
    """Grid margin actually used: boundary nodes must lie outside (solid) or beyond the shell.

    The exterior flood of a solid starts from the boundary nodes farther than
    ``tau = max(h / 2, hole_closing)`` from the surface: with a margin of 2 cells
    only, a ``hole_closing`` over 2 cells left no seed and the whole grid came
    out inside. A margin of ``h + hole_closing`` keeps every boundary node a
    cell beyond the barrier; below a cell of ``hole_closing`` the grid is laid
    out as before (2 cells).
    """
    if mode == "shell":
        return max(float(padding), 2.0 * h + thickness)
    return max(float(padding), h + max(h, float(hole_closing)))


def grid_dims(vertices, *, cell_size: float, padding: float, thickness: float = 0.0,
              mode: str = "solid", hole_closing: float = 0.0, reach=None) -> np.ndarray:
    """Nodes per axis ``build_mesh_sdf`` would allocate for these settings (before any work).

    An upper bound: the builder lays the grid over the vertices of its
    non-degenerate triangles only. With :func:`estimate_sdf_bytes` it lets a
    caller refuse a grid over the memory budget with its own message.

    Parameters
    ----------
    vertices : (n, 3) float, finite
        Vertex positions (m).
    cell_size, padding, thickness, mode, hole_closing, reach : as in ``build_mesh_sdf``.

    Returns
    -------
    (3,) int64
    """
    h = float(cell_size)
    v = np.asarray(vertices, np.float64)
    pad = _padding(h, padding, thickness, mode, hole_closing)
    if reach is None:
        return _grid_layout(v, h, pad)[1]
    return clipped_layout(v.min(axis=0), v.max(axis=0), h, pad, reach)[1]


def estimate_sdf_bytes(dims, n_triangles: int) -> int:
    """Peak bytes of ``build_mesh_sdf`` for a grid of ``dims`` nodes and ``n_triangles``."""
    nodes = int(np.prod(np.asarray(dims, dtype=np.int64)))
    return nodes * _BYTES_PER_NODE + n_triangles * _BYTES_PER_TRIANGLE


def build_mesh_sdf(vertices, triangles, *, cell_size: float, padding: float, thickness: float = 0.0,
                   mode: str = "solid", flip_normals: bool = False, hole_closing: float = 0.0,
                   memory_budget: int = config.DEFAULT_MEMORY_BUDGET, where: str = "mesh",
                   reach=None) -> MeshSDF:
    """Sample a triangle mesh's signed distance on a grid (Clavet 2005, section 6.1).

    Parameters
    ----------
    vertices : (n, 3) float
        Vertex positions in the collider's local frame (m).
    triangles : (m, 3) int
        Vertex indices; orientation does not matter (the sign comes from the
        exterior flood, not from normals).
    cell_size : float
        Grid spacing (m).
    padding : float
        Margin around the mesh bounding box (m). Raised to at least
        ``cell_size + max(cell_size, hole_closing)`` (solid: the exterior flood
        starts from boundary nodes beyond the ``hole_closing`` barrier) or
        ``thickness + 2 * cell_size`` (shell).
    thickness : float
        Shell half-thickness (m): ``mode="shell"`` gives ``d = u - thickness``.
        In solid mode it inflates the solid: ``d - thickness``.
    mode : {"solid", "shell"}
        ``"solid"``: closed objects, inside is solid; robust to internal faces,
        duplicated or flipped triangles, self-intersections, non-manifold edges,
        and holes narrower than about ``max(cell_size, 2 * hole_closing)``. A
        mesh that encloses nothing comes out all positive (a zero-thickness
        shell); the callers refuse it (open, or closed and thinner than a cell).
        ``"shell"``: open surfaces collide from both sides.
    flip_normals : bool
        Negate the field (meshes modelled inside out, or a hollow container).
    hole_closing : float
        Barrier distance of the exterior flood (m); the effective value is
        ``max(cell_size / 2, hole_closing)``. Raise it to plug larger holes;
        thin parts are unaffected (see ``_grow_exterior``).
    memory_budget : int
        Bytes; a grid whose estimate exceeds it is refused before allocation.
    where : str
        Name for error messages (JSON path or file name).
    reach : (lo, hi) of (3,) floats, or None
        Box particles can reach, in the mesh's frame (m): the grid is clipped to it, grown by
        the padding and a few cells (``sdf_clip``); None covers the whole mesh.

    Returns
    -------
    MeshSDF

    Raises
    ------
    InputError
        Empty mesh, NaN vertices, indices out of range, all triangles
        degenerate, bad settings, or a grid over the memory budget.
    """
    t0 = time.perf_counter()
    v, t = _validate(where, vertices, triangles, cell_size, padding, thickness, mode, hole_closing)
    h = float(cell_size)
    tv = v[t]  # (m, 3, 3)
    area2 = np.linalg.norm(np.cross(tv[:, 1] - tv[:, 0], tv[:, 2] - tv[:, 0]), axis=1)
    scale = float(np.ptp(v, axis=0).max())
    # Relative threshold: a triangle thinner than ~1e-12 of the mesh size has no area in float64.
    keep = area2 > 1e-12 * max(scale, 1e-300) ** 2
    if not keep.any():
        raise InputError(where, f"all {len(t)} triangles have zero area (degenerate mesh).")
    if not keep.all():
        log.info("%s: ignoring %d zero-area triangles of %d", where, int((~keep).sum()), len(t))
        tv = tv[keep]
    pad = _padding(h, padding, thickness, mode, hole_closing)
    used = v[np.unique(t[keep])]
    cut = None
    if reach is None:
        origin, dims = _grid_layout(used, h, pad)
    else:
        origin, dims, cut = clipped_layout(used.min(axis=0), used.max(axis=0), h, pad, reach)
        everything, tv = tv, tv[near_grid(tv, origin, h, dims)]
        if not len(tv):
            # No surface within reach: the whole mesh then decides nothing, but its field must
            # still be finite and signed; the unclipped grid gives that (rare: a far-away mesh).
            log.info("%s: no surface within the domain; the grid covers the whole mesh", where)
            return build_mesh_sdf(vertices, triangles, cell_size=cell_size, padding=padding,
                                  thickness=thickness, mode=mode, flip_normals=flip_normals,
                                  hole_closing=hole_closing, memory_budget=memory_budget, where=where)
    need = estimate_sdf_bytes(dims, len(tv))
    if need > memory_budget:
        raise InputError(where, f"the distance grid {dims[0]}x{dims[1]}x{dims[2]} at cell size {h:g} m "
                                f"needs about {need / 2**20:.0f} MiB, over the memory budget of "
                                f"{memory_budget / 2**20:.0f} MiB; increase the cell size.")
    tv = np.ascontiguousarray(tv)
    dist2, ids, start, items, tlo, thi, block, margin = _unsigned(tv, origin, h, dims)
    if mode == "shell":
        grid = (np.sqrt(dist2) - thickness).astype(np.float32)
    else:
        tau = max(0.5 * h, float(hole_closing))
        barrier = None if cut is None or not cut.any() else barrier_nodes(everything, origin, h, dims, cut,
                                                                            dist2, tau * tau)
        if barrier is not None:
            saved = dist2[barrier]
            dist2[barrier] = tau * tau
        grid = _build_solid(tv, origin, h, dims, dist2, ids, start, items, tlo, thi, block, tau, where)
        if barrier is not None:
            restore(grid, barrier, saved)
        if thickness:
            grid -= np.float32(thickness)
    if flip_normals:
        np.negative(grid, out=grid)
    params = np.array([origin[0], origin[1], origin[2], h], np.float64)
    build_s = time.perf_counter() - t0
    log.debug("%s: SDF %s from %d triangles in %.3f s", where, tuple(dims), len(tv), build_s)
    return MeshSDF(params=params, grid=np.ascontiguousarray(grid), build_s=build_s, mode=mode)
