"""The dam break's accuracy reference: Martin & Moyce (1952), and the surge front of a simulation.

Source: J. C. Martin and W. J. Moyce, "Part IV. An experimental study of the collapse of liquid
columns on a rigid horizontal plane", Philosophical Transactions of the Royal Society of London,
Series A 244(882), 312-324 (1952), doi:10.1098/rsta.1952.0006. ``DATA``: the surge front of the
2:1 column (n² = 2), a = 2.25 in, digitised from their Figure 3.

Non-dimensional: T = t sqrt(2 g / a), Z = z / a, with z the surge front's distance from the back
wall and a the column's width. The comparison is the slope of Z(T) (the front's speed) over the
middle of the surge, where the release of the column and the end of the tank do not enter:
least squares over the reference points with 1.0 <= T <= 3.4 (``MM_SLOPE`` = 1.253) and over a
simulation's frames with 1.2 <= T <= 3.0 (``SIM_WINDOW``; 0.68 s simulated for a = 1 m).

Numpy only: imported both by the core's benchmark and by the SPlisHSPlasH peer in the bench venv.
"""

from __future__ import annotations

import math

import numpy as np

A_INCHES = 2.25  # column width of the data set
DATA: tuple[tuple[float, float], ...] = (  # (T, Z)
    (0.832, 1.217), (1.219, 1.474), (1.997, 2.292), (2.547, 2.995), (3.345, 4.134), (4.034, 4.944),
    (4.418, 5.881),
)
MM_WINDOW = (1.0, 3.4)
SIM_WINDOW = (1.2, 3.0)


def nondim_time(t: float, a: float, g: float = 9.81) -> float:
    """T = t sqrt(2 g / a): t in s, a the column width in m, g in m/s²."""
    return t * math.sqrt(2.0 * g / a)


def front(x: np.ndarray, wall: float, spacing: float) -> float:
    """Surge front's distance from the back wall (m), from particle coordinates ``x`` along the surge.

    Particles are binned by distance from the wall (bin width ``spacing``, the first bin starting
    at the wall; any behind the wall are ignored); the front is the far edge of the last bin of the
    first contiguous run of occupied bins, so droplets thrown ahead of the surge do not count.
    The same definition as the core's ``sph_addon.core.world.diagnostics.surge_front`` (axis x,
    direction +1), restated here so that the peer's venv needs numpy alone. 0 with no particle.
    """
    d = np.asarray(x, dtype=np.float64) - wall
    d = d[d >= 0.0]
    if d.size == 0:
        return 0.0
    bins = np.floor(d / spacing).astype(np.int64)
    occupied = np.zeros(int(bins.max()) + 2, dtype=bool)  # one empty bin past the last ends any run
    occupied[bins] = True
    first = int(np.argmax(occupied))
    end = first + int(np.argmax(~occupied[first:]))  # first empty bin after the run
    return float(end * spacing)


def slope(points, window: tuple[float, float]) -> float | None:
    """Least-squares slope of Z over T for the (T, Z) pairs with window[0] <= T <= window[1];
    None with fewer than two such points."""
    pts = np.asarray([p for p in points if window[0] <= p[0] <= window[1]], dtype=np.float64)
    if len(pts) < 2 or np.ptp(pts[:, 0]) == 0:
        return None
    return float(np.polyfit(pts[:, 0], pts[:, 1], 1)[0])


MM_SLOPE = slope(DATA, MM_WINDOW)


def front_slope(series) -> float | None:
    """A simulation's front slope from its per-frame (T, Z) pairs, over ``SIM_WINDOW``."""
    return slope(series, SIM_WINDOW)


def front_error(sim_slope: float | None) -> float | None:
    """sim_slope / MM_SLOPE - 1 (None when the run did not cover the window)."""
    return None if sim_slope is None else sim_slope / MM_SLOPE - 1.0
