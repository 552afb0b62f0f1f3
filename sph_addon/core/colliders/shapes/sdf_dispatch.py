"""Every collider SDF behind one integer code: the table of shapes and the njit dispatcher ``sdf_eval``.

References: the SDFs themselves, ``sdf_analytic`` (closed forms) and ``sdf_grid``
(Clavet 2005, thesis chapter 6, a field sampled on a grid).

A collider's :class:`~sph_addon.core.colliders.Shape` names its SDF function; the
shape resolves it once, in Python, to the code in :data:`SDF_CODES`, and the
collision kernels (``response``, ``overlaps``) take that code and call
:func:`sdf_eval`, which branches on it. This departs from STYLE.md convention 5
(pass the njit function into the driver): numba 0.68 cannot cache a kernel that
takes a function as an argument, so every new process (each farm task, each
Blender session's first bake) recompiled the collision kernels, ~4-6 s. With an
integer argument they are ordinary cached kernels (``config.NJIT``), compiled
once for all shapes. ``surface/fields.py`` does the same for the surface fields.

Adding a shape: its function (signature in ``sdf_analytic``), a new code below,
its line in :data:`SDF_FUNCTIONS` and its branch in :func:`sdf_eval`;
tests/core/test_sdf_dispatch.py checks that the three agree.

Numba invalidates a disk-cached kernel only when its own file changes, never when
a function it calls does; the cache folder is keyed by a hash of every kernel source
(``core.kernel_cache``), so an edited SDF function recompiles the kernels that call it.
"""

from __future__ import annotations

import math

from ...numerics import config
from ...numerics.kernel_cache import njit
from .sdf_analytic import sdf_box, sdf_box_container, sdf_box_open, sdf_plane, sdf_sphere
from .sdf_grid import sdf_grid

# Codes of the shapes. sdf_eval reads them as compile-time constants: they live in this file so
# that changing one invalidates its cache (tests/core/test_codebase_rules.py).
PLANE = 0
SPHERE = 1
BOX = 2
BOX_CONTAINER = 3
BOX_OPEN = 4
GRID = 5

# code -> SDF function (the Python-level view of what sdf_eval calls for that code).
SDF_FUNCTIONS = {
    PLANE: sdf_plane,
    SPHERE: sdf_sphere,
    BOX: sdf_box,
    BOX_CONTAINER: sdf_box_container,
    BOX_OPEN: sdf_box_open,
    GRID: sdf_grid,
}
# Codes whose field is the exact signed distance, so it changes by at most 1 per metre (the
# boundary density's sampling skips points it can bound: ``boundary.solid_share_kernels.solid_share``). An open box's
# faces and a sampled grid are not counted: their bound is larger.
EXACT_DISTANCES = frozenset({PLANE, SPHERE, BOX, BOX_CONTAINER})
# SDF function -> code: how a Shape resolves its function (Shape.code).
SDF_CODES = {fn: code for code, fn in SDF_FUNCTIONS.items()}


@njit(**config.NJIT_INLINE)
def sdf_eval(code, params, grid, px, py, pz):
    """Signed distance and outward normal of the shape with SDF ``code`` at a local-frame point.

    Parameters
    ----------
    code : int
        The shape's entry in :data:`SDF_FUNCTIONS` (``Shape.code``).
    params : (k,) float64
        The shape's numbers (``Shape.params``).
    grid : (ni, nj, nk) float32
        Its sampled field, or an unused 1x1x1 array (``Shape.grid``).
    px, py, pz : float
        Query point in the collider's local frame, m.

    Returns
    -------
    d, nx, ny, nz : float
        Signed distance (m, negative inside the solid) and unit outward normal, exactly
        as the SDF function of that code returns them. An unknown code gives d = NaN
        (never inside, never touching); ``Shape`` refuses such codes before a kernel runs.
    """
    if code == PLANE:
        return sdf_plane(params, grid, px, py, pz)
    if code == SPHERE:
        return sdf_sphere(params, grid, px, py, pz)
    if code == BOX:
        return sdf_box(params, grid, px, py, pz)
    if code == BOX_CONTAINER:
        return sdf_box_container(params, grid, px, py, pz)
    if code == BOX_OPEN:
        return sdf_box_open(params, grid, px, py, pz)
    if code == GRID:
        return sdf_grid(params, grid, px, py, pz)
    return math.nan, 0.0, 0.0, 1.0
