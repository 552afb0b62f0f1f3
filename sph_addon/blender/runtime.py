"""Where the extension lives and how numba is loaded inside Blender.

``import numba`` costs ~0.75 s and compiles into a cache; neither may happen in
``register()`` (BLENDER_NOTES.md section 6). :func:`prepare_numba` runs right
before the first bake: it points numba's cache at the extension's user
directory (the extension directory itself is wiped on upgrade and may be
read-only) and pins the threading layer, puts a private copy of the bundled
numba/llvmlite first on ``sys.path`` (``blender/private_wheels.py``: Blender's wheel
sync rewrites the shared copy under a running bake whenever any extension is
enabled or disabled), then imports numba and reports a failed import as a
readable error instead of a traceback.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path

import bpy

from . import private_wheels

log = logging.getLogger(__name__)

# bl_ext.<repo>.sph_addon: the add-on's top-level module name (preferences and
# user directories are keyed by it), from this sub-package's name.
ADDON_ID = __package__.removesuffix(".sph_addon.blender")
# The extension's root (blender_manifest.toml, wheels/): this file is <root>/sph_addon/blender/runtime.py.
EXTENSION_DIR = Path(__file__).parents[2]


class NumbaUnavailable(RuntimeError):
    """numba could not be imported (wheels missing or incompatible)."""


def user_dir(*parts: str) -> str:
    """A folder in the extension's user storage (kept across upgrades), created on demand."""
    return bpy.utils.extension_path_user(ADDON_ID, path=os.path.join(*parts) if parts else "", create=True)


def prepare_numba() -> str:
    """Configure and import numba; return its version. Main thread, before the first bake."""
    private = None
    if "numba" not in sys.modules:
        os.environ.setdefault("NUMBA_CACHE_DIR", user_dir("numba_cache"))
        # numba picks TBB in Blender 4.5/5.0 and OpenMP in 4.2 on its own; pin one that
        # exists on every platform we ship: OpenMP on Linux (verified), workqueue elsewhere
        # (only our one bake thread launches parallel kernels, which workqueue requires).
        os.environ.setdefault("NUMBA_THREADING_LAYER", "omp" if sys.platform.startswith("linux") else "workqueue")
        private = _use_private_copy()
    try:
        import numba
    except Exception as exc:  # ImportError, or an OSError from llvmlite's shared library
        where = (f" from {private}; delete that folder to have it unpacked again" if private else
                 "; reinstall the SPH Fluids extension for this platform (its bundled numba/llvmlite wheels are "
                 "missing or were replaced by another add-on's)")
        raise NumbaUnavailable(f"numba could not be loaded ({exc}){where}") from exc
    ours = any(Path(numba.__file__).is_relative_to(p) for p in private_wheels.held())
    log.info("sph_addon uses numba %s from %s (%s; cache %s)", numba.__version__, os.path.dirname(numba.__file__),
             "private copy of the bundled wheels" if ours else "sys.path", numba.config.CACHE_DIR)
    return numba.__version__


def _use_private_copy() -> Path | None:
    """Put the private copy of the bundled numba/llvmlite first on sys.path; None if there is none to use."""
    if "llvmlite" in sys.modules:
        # A numba from the private copy over another llvmlite could mismatch; keep what is loaded.
        log.warning("llvmlite was already imported (from %s): numba is imported from sys.path",
                    os.path.dirname(sys.modules["llvmlite"].__file__ or "?"))
        return None
    wheels = private_wheels.select_wheels(EXTENSION_DIR)
    if wheels is None:
        log.info("no bundled numba/llvmlite wheels for %s in %s: numba is imported from sys.path",
                 private_wheels.python_tag(), EXTENSION_DIR)
        return None
    # Not user_dir(): on failure it prints and returns "", which would extract into the working directory.
    root = bpy.utils.extension_path_user(ADDON_ID, path="runtime")
    try:
        if not root:
            raise OSError("Blender has no user extensions folder")
        path = private_wheels.publish(wheels, root)
    except OSError as exc:
        raise NumbaUnavailable(f"numba could not be unpacked into {root} ({exc}); free disk space there or make "
                               "the folder writable") from exc
    private_wheels.remove_unused(root, path.name)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    return path


def refuse_unsupported_platform() -> None:
    """Raise one sentence when neither the bundled wheels nor the environment give this Blender a numba.

    Blender shows a ``register()`` error to the artist who enabled the extension: this is what
    an Intel Mac, an ARM Linux or a Blender with another Python reads, instead of a traceback
    from the first bake's ``import numba``.
    """
    reason = private_wheels.unsupported_reason(EXTENSION_DIR)
    if reason is not None and importlib.util.find_spec("numba") is None:
        raise NumbaUnavailable(reason)


def register():
    refuse_unsupported_platform()


def unregister():
    pass
