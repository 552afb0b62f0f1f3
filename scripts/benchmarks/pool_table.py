"""The columns both pool-at-rest scripts print (ours: ``pool_at_rest.py``; SPlisHSPlasH: ``pool_at_rest_peer.py``)."""

from __future__ import annotations

import numpy as np

# The times (s) both scripts report at.
TIMES = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0)


def row(t: float, x: np.ndarray, v: np.ndarray) -> dict:
    """Speeds (cm/s) and heights (m) of particles ``x``, ``v`` at time ``t``: the top is the mean z of
    the highest N/20 particles (one layer of a 20-layer fill), beside the mean z of all."""
    s = np.linalg.norm(v, axis=1)
    z = np.sort(x[:, 2])
    return {"t": t, "n": len(z), "median": 100 * np.median(s), "p90": 100 * np.percentile(s, 90),
            "max": 100 * s.max(), "top_z": z[-max(1, len(z) // 20):].mean(), "mean_z": z.mean()}


def print_rows(rows: list[dict]) -> None:
    print(f"{'t s':>7} {'N':>5} {'median cm/s':>11} {'p90 cm/s':>9} {'max cm/s':>9} {'top z m':>8} {'mean z m':>8}")
    for r in rows:
        print(f"{r['t']:7.4f} {r['n']:5d} {r['median']:11.3f} {r['p90']:9.3f} {r['max']:9.2f} "
              f"{r['top_z']:8.4f} {r['mean_z']:8.4f}")
