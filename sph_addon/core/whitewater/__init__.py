"""Whitewater: spray, foam and bubbles over a baked cache (Ihmsen, Akinci, Gissler & Teschner 2012).

A stage like the surface: it reads ``DIR/particles`` and writes ``DIR/whitewater/whitewater_####.ply``,
re-run without re-simulating. See ``docs/whitewater.md``.

Public names (the numba modules load on first use, so importing this package for
:data:`WHITEWATER_PARAMETERS` stays cheap):

- :data:`WHITEWATER_PARAMETERS`, :class:`WhitewaterSettings` (numba-free, :mod:`.settings`);
- :func:`whitewater_cache` (:mod:`.stage`), :func:`whitewater_settings` (:mod:`.scene_settings`);
- :func:`read_state`, :func:`whitewater_path`, :func:`read_counts` (:mod:`.state`).
"""

from __future__ import annotations

import importlib

from .settings import WHITEWATER_PARAMETERS, WhitewaterSettings

_LAZY = {
    "whitewater_cache": ".stage",
    "whitewater_settings": ".scene_settings",
    "read_state": ".state",
    "read_counts": ".state",
    "whitewater_path": ".state",
}

__all__ = ["WHITEWATER_PARAMETERS", "WhitewaterSettings", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
