"""Where numba keeps the compiled kernels: one folder per version of the kernel sources.

Numba's disk cache checks only the file of the function it compiled, never the modules that
function calls or inlines (``pair_kernels``, ``boundary.mirror_kernels``, the SDF dispatch): an
edit there would leave a stale kernel in the cache. So the cache goes to ``BASE/kernels-<digest>``,
the digest a hash of every kernel module's source (the files that import this module): any edit to
any kernel gives a new folder, and nothing stale is ever read. ``BASE`` is ``NUMBA_CACHE_DIR`` when
it is set (the Blender extension sets it to its user directory), else the user's cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``) + ``sph_addon/numba``.

Every kernel module imports ``njit`` and ``prange`` from here, so the folder is set before its
first kernel is decorated (numba reads it then).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba import njit, prange

__all__ = ["njit", "prange", "cache_dir", "sources_digest"]

CORE = Path(__file__).resolve().parents[1]  # the core: every kernel module under it
MARKER = "kernel_cache import"


def sources_digest(root: Path = CORE) -> str:
    """16 hex digits of the SHA-1 of every kernel module under ``root`` (path and bytes, in path order)
    and numba's version."""
    h = hashlib.sha1(numba.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if MARKER.encode() in text and path.name != "kernel_cache.py":
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + text + b"\0")
    return h.hexdigest()[:16]


def cache_dir() -> str:
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "sph_addon", "numba")
    return os.path.join(base, f"kernels-{sources_digest()}")


numba.config.CACHE_DIR = cache_dir()
