"""Filling the inside of a closed mesh with particles on a cubic lattice.

The inside is decided by the mesh's signed distance field
(``colliders.sdf_mesh.build_mesh_sdf``, solid mode: Clavet 2005, section 6.1),
so internal faces, duplicated triangles and small holes do not matter; the
same field the collider uses. Lattice points sit at cell centres
``lo + (i + 1/2) s`` of the mesh bounding box, so a box aligned with the
lattice gets exactly ``volume / s^3`` particles.
"""

from __future__ import annotations

import logging

import numpy as np

from ..colliders.shapes.mesh_collider import is_closed
from ..colliders.shapes.sdf_mesh import build_mesh_sdf
from ..errors import InputError
from ..numerics import config

log = logging.getLogger(__name__)


def fill_mesh(vertices, triangles, spacing: float, *, jitter: float = 0.0, seed: int = 0,
              margin: float = 0.0, sdf_cell_size: float | None = None,
              memory_budget: int = config.DEFAULT_MEMORY_BUDGET, where: str = "mesh") -> np.ndarray:
    """Particle positions filling the inside of a closed mesh.

    Parameters
    ----------
    vertices : (n, 3) float
        Vertex positions (m).
    triangles : (m, 3) int
        Triangles (orientation does not matter).
    spacing : float
        Lattice spacing s (m); one particle per s^3 of volume.
    jitter : float
        Random displacement of each lattice point, uniform in
        ``[-jitter s / 2, jitter s / 2]`` per axis; 0 <= jitter < 1.
    seed : int
        Seed of the jitter RNG (``numpy.random.default_rng``): same seed, same points.
    margin : float
        Keep only points at least this far inside (m), e.g. a particle radius.
    sdf_cell_size : float, optional
        Cell size of the distance grid (m); default ``spacing / 2``.
    memory_budget : int
        Bytes, for the distance grid and the lattice.
    where : str
        Name for error messages.

    Returns
    -------
    (N, 3) float64
        Points with signed distance < -margin.

    Raises
    ------
    InputError
        Bad mesh or settings (see ``build_mesh_sdf``), or a mesh with no inside.
    """
    for name, val in (("spacing", spacing), ("jitter", jitter), ("margin", margin)):
        if not np.isfinite(val):
            raise InputError(where, f"{name} must be a finite number, got {val!r}.")
    if spacing <= 0:
        raise InputError(where, f"spacing must be positive, got {spacing!r}.")
    if not 0.0 <= jitter < 1.0:
        raise InputError(where, f"jitter must be in [0, 1), got {jitter!r}.")
    h = float(sdf_cell_size) if sdf_cell_size is not None else 0.5 * spacing
    sdf = build_mesh_sdf(vertices, triangles, cell_size=h, padding=2.0 * h, mode="solid",
                         memory_budget=memory_budget, where=where)
    # Nodes lying on a sheet can come out at -1e-17 m; that is not an inside.
    tiny = 1e-6 * h
    if not (sdf.grid < -tiny).any():
        if is_closed(vertices, triangles):
            # Closed at any size (welded relative to the mesh's own size): a 1 mm cube is small, not open.
            extent = float(np.ptp(np.asarray(vertices, np.float64), axis=0).min())
            raise InputError(where, f"the mesh is closed, but thinner than the particle spacing can fill (its "
                                    f"smallest extent is {extent:g} m, no distance-grid node at {h:g} m falls "
                                    f"inside it); lower particle_spacing below {extent:g} m, or scale the mesh up.")
        raise InputError(where, "the mesh encloses no volume (it is open, e.g. a single sheet, or has "
                                "holes wider than a cell); close it, or use it as a shell collider.")
    v = np.asarray(vertices, np.float64)
    lo = v.min(axis=0)
    counts = np.maximum(np.floor(np.ptp(v, axis=0) / spacing + 1e-9).astype(np.int64), 1)
    n = int(np.prod(counts))
    need = n * (3 * 8 * 2 + 8 * 4)
    if need > memory_budget:
        raise InputError(where, f"filling needs a lattice of {n} points (about {need / 2**20:.0f} MiB), "
                                f"over the memory budget of {memory_budget / 2**20:.0f} MiB; "
                                f"increase the spacing.")
    # Centre the lattice in the bbox so leftover space is split evenly on both sides.
    start = lo + 0.5 * (np.ptp(v, axis=0) - counts * spacing) + 0.5 * spacing
    axes = [start[a] + spacing * np.arange(counts[a]) for a in range(3)]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    if jitter > 0.0:
        rng = np.random.default_rng(seed)
        pts += rng.uniform(-0.5 * jitter * spacing, 0.5 * jitter * spacing, size=pts.shape)
    d, _ = sdf.sample(pts)
    out = np.ascontiguousarray(pts[d < -max(margin, tiny)])
    if len(out) == 0:
        raise InputError(where, f"no lattice point at spacing {spacing:g} m lies inside the mesh; "
                                f"use a smaller spacing.")
    log.debug("%s: %d particles at spacing %g m", where, len(out), spacing)
    return out
