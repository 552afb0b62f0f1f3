"""Where the extension lives and how numba is loaded inside Blender.

``import numba`` costs ~0.75 s and compiles into a cache; neither may happen in
``register()`` (BLENDER_NOTES.md section 6). :func:`prepare_numba` runs right
before the first bake: it points numba's cache at the extension's user
directory (the extension directory itself is wiped on upgrade and may be
read-only) and pins the threading layer, then imports numba and reports a
failed import as a readable error instead of a traceback.
"""

from __future__ import annotations

import logging
import os
import sys

import bpy

log = logging.getLogger(__name__)

# bl_ext.<repo>.sph_addon: the add-on's top-level module name (preferences and
# user directories are keyed by it), from this sub-package's name.
ADDON_ID = __package__.removesuffix(".sph_addon.blender")


class NumbaUnavailable(RuntimeError):
    """numba could not be imported (wheels missing or incompatible)."""


def user_dir(*parts: str) -> str:
    """A folder in the extension's user storage (kept across upgrades), created on demand."""
    return bpy.utils.extension_path_user(ADDON_ID, path=os.path.join(*parts) if parts else "", create=True)


def prepare_numba() -> str:
    """Configure and import numba; return its version. Main thread, before the first bake."""
    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_CACHE_DIR", user_dir("numba_cache"))
        # numba picks TBB in Blender 4.5/5.0 and OpenMP in 4.2 on its own; pin one that
        # exists on every platform we ship: OpenMP on Linux (verified), workqueue elsewhere
        # (only our one bake thread launches parallel kernels, which workqueue requires).
        os.environ.setdefault("NUMBA_THREADING_LAYER", "omp" if sys.platform.startswith("linux") else "workqueue")
    try:
        import numba
    except Exception as exc:  # ImportError, or an OSError from llvmlite's shared library
        raise NumbaUnavailable(
            f"numba could not be loaded ({exc}); reinstall the SPH Fluids extension for this platform "
            "(its bundled numba/llvmlite wheels are missing or were replaced by another add-on's)") from exc
    log.info("sph_addon uses numba %s from %s (cache %s)", numba.__version__, os.path.dirname(numba.__file__),
             numba.config.CACHE_DIR)
    return numba.__version__


def register():
    pass


def unregister():
    pass
