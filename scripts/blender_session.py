"""Start a PyPI ``bpy`` session with this checkout enabled as an extension.

Blender reads ``BLENDER_USER_RESOURCES`` once, when ``bpy`` is imported, so
:func:`start` sets it first: preferences, installed wheels and the numba cache
live in ``user_dir``, never in the user's own Blender configuration. The
checkout is registered as a local extension repository (a symlink to it) and
enabled the way Blender enables any extension, which installs the bundled
numba/llvmlite wheels from ``wheels/`` (BLENDER_NOTES.md section 4).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class EnableError(RuntimeError):
    pass


def start(user_dir: str | os.PathLike, repo_module: str = "sphdev", repo_dir: str | os.PathLike | None = None):
    """Import bpy with an isolated user directory and enable the checkout; return (bpy, add-on module name).

    ``repo_dir`` (default: inside ``user_dir``) holds the link to the checkout that Blender imports
    the extension through. numba keys its cache by the source files' paths, so sessions that give
    the same ``repo_dir`` and ``NUMBA_CACHE_DIR`` reuse each other's compiled kernels.
    """
    user_dir = Path(user_dir)
    user_dir.mkdir(parents=True, exist_ok=True)
    os.environ["BLENDER_USER_RESOURCES"] = str(user_dir)
    # isort: off
    import bpy  # reads BLENDER_USER_RESOURCES on import
    import addon_utils  # importable only once bpy is
    # isort: on

    if not any((ROOT / "wheels").glob("numba-*.whl")):
        raise EnableError("wheels/ holds no numba wheel: run scripts/fetch_wheels.py --platform linux-x64")
    repo_dir = Path(repo_dir) if repo_dir is not None else user_dir / "dev_repo"
    repo_dir.mkdir(parents=True, exist_ok=True)
    link = repo_dir / "sph_addon"
    if not link.is_symlink():
        try:
            link.symlink_to(ROOT, target_is_directory=True)
        except FileExistsError:  # another session made it first
            pass
    prefs = bpy.context.preferences.extensions
    if not any(r.module == repo_module for r in prefs.repos):
        prefs.repos.new(name="SPH checkout", module=repo_module, custom_directory=str(repo_dir), source='USER')
    module = f"bl_ext.{repo_module}.sph_addon"
    if addon_utils.enable(module, default_set=True, handle_error=None) is None:
        raise EnableError(f"enabling {module} failed on Blender {bpy.app.version_string}")
    return bpy, module
