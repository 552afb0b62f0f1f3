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
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InputError
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
        the memory budget (``.cell_size``, or ``.path`` when a few stray vertices make it
        so); a solid mesh that encloses nothing (``.path`` when it is open, ``.cell_size``
        when it is closed but no grid node falls inside it).
    """
    from ...cache.mesh_io import load_mesh
    from . import Shape
    from .sdf_mesh import build_mesh_sdf, sdf_grid

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
    check_grid_budget(vertices, triangles, settings, ctx.memory_budget, ctx.where, path.name, reach=ctx.reach)
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
            if is_closed(vertices, triangles):
                raise InputError(f"{ctx.where}.cell_size", _too_thin(path.name, vertices, h))
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


def _too_thin(name: str, vertices: np.ndarray, h: float) -> str:
    """The message for a closed mesh with no grid node inside: the grid is too coarse for it."""
    extent = float(np.ptp(vertices, axis=0).min())
    return (f"{name}: the mesh is closed, but no grid node falls inside it at cell size {h:g} m (its thinnest "
            f"part is thinner than about a cell; its smallest extent is {extent:g} m); lower cell_size (now "
            f"{h:g} m) below half its thinnest part, or set mode to \"shell\"")


def is_closed(vertices: np.ndarray, triangles: np.ndarray) -> bool:
    """Whether every edge is shared by at least two triangles, vertices welded by position.

    Unwelded exports (each face with its own corners) are compared by position, to about
    1e-9 of the mesh's size. Degenerate triangles are left out.
    """
    v = np.asarray(vertices, np.float64)
    size = max(float(np.ptp(v, axis=0).max()), 1e-300)
    _, weld = np.unique(np.round(v / (1e-9 * size)), axis=0, return_inverse=True)
    t = weld.reshape(-1)[np.asarray(triangles)]
    t = t[(t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 2] != t[:, 0])]
    if not len(t):
        return False
    edges = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return bool((counts >= 2).all())


def check_grid_budget(vertices: np.ndarray, triangles: np.ndarray, settings: dict[str, Any], budget: float,
                      where: str, name: str, reach=None) -> tuple[tuple[int, int, int], float]:
    """Size a mesh collider's distance grid; refuse one over ``budget`` bytes naming the real cause.

    Only the vertices the triangles use count (the builder ignores the others). When
    at most 1% of them (at least one) lie so far from the rest that dropping them
    would fit the budget, the message names them instead of ``cell_size``.

    Parameters
    ----------
    vertices, triangles : the mesh (finite vertices).
    settings : ``mesh_settings``.
    budget : bytes (``math.inf`` for none).
    where : JSON path of the collider (``colliders[k]``). name : the file, for the message.
    reach : the box particles can reach (``colliders.reach``), the grid is clipped to; None for all.

    Returns
    -------
    (nodes per axis, estimated bytes); bytes are ``math.inf`` for grids too large to count.
    """
    from .sdf_mesh import estimate_sdf_bytes, grid_dims

    used = vertices[np.unique(triangles)] if len(triangles) else vertices
    dims, need = _grid_bytes(used, len(triangles), settings, grid_dims, estimate_sdf_bytes, reach)
    if need <= budget:
        return dims, need
    h = settings["cell_size"]
    shape = "x".join(str(n) for n in dims)
    size = "more than 4,000,000" if math.isinf(need) else f"{need / 2**20:,.0f}"
    over = (f"the distance grid of {name} would be {shape} nodes at cell size {h:g} m, about {size} MiB, over the "
            f"memory budget of {budget / 2**20:,.0f} MiB")
    centre = np.median(used, axis=0)
    far = np.abs(used - centre).max(axis=1)
    drop = np.argsort(far)[len(used) - max(1, len(used) // 100):]
    kept = np.delete(used, drop, axis=0)
    if len(kept) >= 3 and far[drop].min() > 4.0 * far[np.delete(np.arange(len(used)), drop)].max():
        _, fits = _grid_bytes(kept, len(triangles), settings, grid_dims, estimate_sdf_bytes, reach)
        if fits <= budget:
            span = " x ".join(f"{e:.3g}" for e in np.ptp(kept, axis=0))
            raise InputError(f"{where}.path", f"{over}: {len(drop)} of its {len(used)} vertices lie up to "
                                              f"{far.max():.3g} m from the others, which span {span} m; remove "
                                              f"those stray vertices from the mesh")
    raise InputError(f"{where}.cell_size", f"{over}; raise cell_size or simulation.memory_budget_mb")


# Grids beyond this many nodes are not sized in bytes (int64 products would overflow): 4 TiB of float32.
_MAX_GRID_NODES = 2**40


def _grid_bytes(vertices, n_triangles, settings, grid_dims, estimate_sdf_bytes, reach=None
                ) -> tuple[tuple[int, ...], float]:
    dims = grid_dims(vertices, cell_size=settings["cell_size"], padding=settings["padding"],
                     thickness=settings["thickness"], mode=settings["mode"], hole_closing=settings["hole_closing"],
                     reach=reach)
    dims = tuple(int(n) for n in dims)
    if math.prod(dims) > _MAX_GRID_NODES:
        return dims, math.inf
    return dims, float(estimate_sdf_bytes(dims, n_triangles))
