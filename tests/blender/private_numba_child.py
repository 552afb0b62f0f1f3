"""Load numba the way a bake does, then disable and re-enable the extension under it.

Run by ``test_private_numba.py`` as ``python private_numba_child.py USER_DIR`` (twice, with the same
USER_DIR). Disabling the extension makes Blender delete the numba it installed into the shared
extensions site-packages (``wheel_manager.apply_action``); a bake that keeps importing numba
submodules lazily must not notice, because ``runtime.prepare_numba`` loaded numba from a private
copy. The result is one JSON line after ``MARKER``; the parent asserts on it.
"""

import hashlib
import importlib
import json
import os
import sys
import traceback
from pathlib import Path

MARKER = "SPH_PRIVATE_NUMBA_RESULT "
HERE = Path(__file__).resolve().parent
# Imported by numba only when a kernel sorts with kind="mergesort" (the error
# "cannot import name 'mergesort'" came from it).
LAZY = "numba.misc.mergesort"


def _raise(ex):
    raise ex


def _files(root: Path) -> dict[str, int]:
    """Every file under ``root`` with its mtime (ns): the published copy must never change."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _under(path: str, root: str) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


def run(user_dir: str, result: dict) -> None:
    sys.path.insert(0, str(HERE.parents[1] / "scripts"))
    import blender_session

    bpy, module = blender_session.start(user_dir)
    import addon_utils

    runtime = importlib.import_module(f"{module}.sph_addon.blender.runtime")
    runtime.prepare_numba()
    import numba
    import numpy as np

    shared = Path(bpy.utils.user_resource('EXTENSIONS', path=".local")) / "lib" / \
        f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "numba"
    copy = Path(numba.__file__).parent.parent
    result.update(numba_file=numba.__file__, ext_user_dir=runtime.user_dir(), shared_before=shared.is_dir(),
                  lazy_loaded_before=LAZY in sys.modules, copy=str(copy), copy_inode=os.stat(copy).st_ino,
                  runtime_entries=sorted(os.listdir(copy.parent)))
    files = _files(copy)

    # A cached kernel of the package (NJIT has cache=True): hits in a second fresh process.
    kernels = importlib.import_module(f"{module}.sph_addon.core.numerics.kernels")
    kernels.cubic_spline_w(0.5, 1.0)
    f = kernels.cubic_spline_w
    result.update(cache_hits=sum(f._cache_hits.values()), cache_misses=sum(f._cache_misses.values()))

    addon_utils.disable(module, default_set=True, handle_error=_raise)
    result["shared_after_disable"] = shared.is_dir()

    lazy = importlib.import_module(LAZY)
    result["lazy_file"] = lazy.__file__

    @numba.njit
    def order(a):
        return np.argsort(a, kind="mergesort")

    result["sorted"] = order(np.array([3.0, 1.0, 2.0])).tolist()

    addon_utils.enable(module, default_set=True, handle_error=_raise)
    result["shared_after_enable"] = shared.is_dir()
    result["numba_file_after_enable"] = sys.modules["numba"].__file__
    now = _files(copy)
    result["copy_changed"] = sorted(k for k in files.keys() | now.keys() if files.get(k) != now.get(k))[:20]
    result["copy_files"] = len(now)
    result["copy_digest"] = hashlib.sha256(json.dumps(sorted(now.items())).encode()).hexdigest()
    addon_utils.disable(module, default_set=True, handle_error=_raise)  # prefs are not saved: leave it off


def main(argv: list[str]) -> int:
    result = {"errors": []}
    try:
        run(argv[0], result)
    except BaseException:  # noqa: B036 (SystemExit from Blender must be reported too)
        result["errors"].append(traceback.format_exc())
    result["under_ext_user_dir"] = bool(result.get("ext_user_dir")) and all(
        _under(result.get(k, ""), result["ext_user_dir"]) for k in ("numba_file", "lazy_file"))
    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
