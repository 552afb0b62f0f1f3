"""Surface reconstruction from particles (bpy-free) and the per-frame meshing stage.

Clavet 2005 (thesis section 7.2) and Desbrun & Cani 1996 (section 4) fields,
sparse marching cubes polygonised by tetrahedra, Taubin smoothing, velocity
per vertex. See ``docs/surface.md``.

Public names (the numba modules load on first use, so importing this package
for :data:`SURFACE_PARAMETERS` stays cheap):

- :data:`SURFACE_PARAMETERS`, :class:`SurfaceSettings`, :func:`surface_settings`,
  :func:`default_settings` (numba-free, :mod:`.settings`);
- :class:`SurfaceMesh`, :func:`reconstruct_surface`, :func:`reconstruct_materials`
  (:mod:`.reconstruct`);
- :func:`mesh_cache` (:mod:`.stage`);
- :data:`FIELDS` (:mod:`.fields`).
"""

from __future__ import annotations

import importlib

from .settings import SURFACE_PARAMETERS, SurfaceSettings, default_settings, surface_settings

_LAZY = {
    "SurfaceMesh": ".reconstruct",
    "reconstruct_surface": ".reconstruct",
    "reconstruct_materials": ".reconstruct",
    "mesh_cache": ".stage",
    "FIELDS": ".fields",
}

__all__ = ["SURFACE_PARAMETERS", "SurfaceSettings", "default_settings", "surface_settings", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
