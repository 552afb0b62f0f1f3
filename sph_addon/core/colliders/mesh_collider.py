"""Building a mesh collider's shape: load the frame's mesh, sample its SDF, check the result.

Reference: S. Clavet, *Simulation de matériaux viscoélastiques à l'aide de
particules*, M.Sc. thesis, Université de Montréal, 2005, chapter 6: every
object is represented by its distance field sampled on a grid in the object's
frame (section 6.1, built by ``sdf_mesh.build_mesh_sdf``), looked up with
trilinear interpolation and finite-difference normals (``sdf_grid.sdf_grid``),
and the contact response of sections 6.2-6.3 (``response.collide``) is the same
for analytic and mesh shapes.

Automatic settings follow the particle spacing s: the cell size is s / 2 (the
particle radius, so the field resolves what a particle can touch), and a
shell's half-thickness is s. Everything wrong with the file or its content is
an ``InputError`` naming the JSON path (``colliders[k].path``,
``colliders[k].cell_size``, ...), raised while the simulation is being set up,
before a bake writes anything.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from .mesh_files import frame_file, resolve_mesh_path

if TYPE_CHECKING:
    from . import BuildContext, Shape

log = logging.getLogger(__name__)


def mesh_settings(p: dict[str, Any], spacing: float) -> dict[str, Any]:
    """The ``build_mesh_sdf`` settings of a resolved mesh collider, automatic values filled in.

    Parameters
    ----------
    p : resolved mesh collider fields.
    spacing : particle spacing s (m).

    Returns
    -------
    dict with ``cell_size`` (m; s / 2 when 0), ``padding`` (m), ``thickness`` (m;
    a shell's 0 becomes s), ``mode``, ``flip_normals``, ``hole_closing`` (m).
    """
    mode = p["mode"]
    h = p["cell_size"] if p["cell_size"] > 0 else 0.5 * spacing
    thickness = p["thickness"] if p["thickness"] > 0 or mode != "shell" else spacing
    return dict(cell_size=float(h), padding=float(p["padding"]), thickness=float(thickness), mode=mode,
                flip_normals=bool(p["flip_normals"]), hole_closing=float(p["hole_closing"]))


def build_mesh_collider(p: dict[str, Any], ctx: BuildContext) -> Shape:
    """The shape of a mesh collider at frame ``ctx.frame`` (``COLLIDERS["mesh"].build``).

    Parameters
    ----------
    p : resolved mesh collider fields (``frame_paths`` parsed by ``mesh_files.check_mesh_files``).
    ctx : build context (scene folder, JSON path, particle spacing, memory budget, SDF cache).

    Returns
    -------
    Shape
        ``sdf_grid`` with the field's ``params`` and ``grid``; ``build_s`` is the
        wall time of the original build (cache hits keep it).

    Raises
    ------
    InputError
        Unreadable or malformed file, empty mesh, NaN vertices, zero-area mesh
        (at ``.path``); a shell thinner than a cell (``.thickness``); a grid over
        the memory budget (``.cell_size``); a solid mesh that encloses nothing (``.path``).
    """
    from . import Shape
    from .mesh_io import load_mesh
    from .sdf_mesh import build_mesh_sdf, estimate_sdf_bytes, grid_dims, sdf_grid

    text, suffix = frame_file(p, ctx.frame)
    where = ctx.where + suffix
    path = resolve_mesh_path(ctx.base_dir, text)
    vertices, triangles = load_mesh(path, where)
    settings = mesh_settings(p, ctx.spacing)
    h = settings["cell_size"]
    if settings["mode"] == "shell" and settings["thickness"] < h:
        # Trilinear interpolation of |u| - t between nodes up to ~0.87 h from the
        # sheet would open gaps in a shell thinner than a cell.
        raise InputError(f"{ctx.where}.thickness",
                         f"a shell must be at least one cell thick: {settings['thickness']:g} m is below the "
                         f"cell size {h:g} m; raise thickness or lower cell_size")
    if np.isfinite(vertices).all() and len(vertices):
        dims = grid_dims(vertices, cell_size=h, padding=settings["padding"], thickness=settings["thickness"],
                         mode=settings["mode"], reach=ctx.reach)
        need = estimate_sdf_bytes(dims, len(triangles))
        if need > ctx.memory_budget:
            shape = "x".join(str(int(n)) for n in dims)
            raise InputError(f"{ctx.where}.cell_size",
                             f"the distance grid of {path.name} would be {shape} nodes at cell size {h:g} m, "
                             f"about {need / 2**20:,.0f} MiB, over the memory budget of "
                             f"{ctx.memory_budget / 2**20:,.0f} MiB; raise cell_size or "
                             f"simulation.memory_budget_mb")
    if ctx.sdf_cache is not None:
        sdf = ctx.sdf_cache.get(vertices, triangles, memory_budget=ctx.memory_budget, where=where,
                                reach=ctx.reach, **settings)
    else:
        sdf = build_mesh_sdf(vertices, triangles, memory_budget=ctx.memory_budget, where=where, reach=ctx.reach,
                             **settings)
    if settings["mode"] == "solid":
        # Nodes lying on a sheet can come out at -1e-17 m; that is not an inside.
        tiny = 1e-6 * h
        solid_side = sdf.grid > tiny if settings["flip_normals"] else sdf.grid < -tiny
        if not solid_side.any():
            tau = max(0.5 * h, settings["hole_closing"])
            raise InputError(where, f"{path.name}: the mesh encloses no volume at cell size {h:g} m (it "
                                    f"is open, e.g. a single sheet, or has holes wider than about "
                                    f"{2 * tau:g} m); close it, raise hole_closing, or set mode to \"shell\"")
    log.debug("%s: %s field %s from %s", ctx.where, settings["mode"], sdf.grid.shape, path.name)
    # The grid's farthest corner bounds the surface it holds (what a spinning collider sweeps).
    lo = sdf.params[:3]
    hi = lo + sdf.params[3] * (np.asarray(sdf.grid.shape) - 1)
    radius = float(np.sqrt(np.sum(np.maximum(np.abs(lo), np.abs(hi)) ** 2)))
    return Shape(sdf_grid, sdf.params, sdf.grid, sdf.build_s, radius)
