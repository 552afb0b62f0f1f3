"""Durations in progress lines: elapsed time and ETAs, the same on every front end.

Used by the command line's progress bar, the meshing progress and the Blender
status text, so that an ETA reads the same in a terminal, a farm log and the
Properties editor.
"""

from __future__ import annotations

import math


def format_duration(seconds: float) -> str:
    """``MM:SS``, or ``H:MM:SS`` from an hour on; ``--:--`` when unknown (NaN, infinite).

    Parameters
    ----------
    seconds : a duration in seconds, rounded to the nearest whole second.
    """
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    return f"{s // 3600:d}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"


def eta_seconds(elapsed: float, done: int, left: int) -> float:
    """Seconds until ``left`` more items finish at the pace of the ``done`` ones; NaN before the first."""
    return elapsed / done * left if done > 0 else float("nan")


def format_long_duration(seconds: float) -> str:
    """A duration that may be months (a refused bake's estimate): ``N days`` from two days on."""
    return f"{seconds / 86400:,.0f} days" if seconds >= 2 * 86400 else format_duration(seconds)
