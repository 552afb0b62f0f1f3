"""Slow reference implementations the fast kernels are checked against."""

from __future__ import annotations

import numpy as np


def brute_force_neighbors(x: np.ndarray, radius: float) -> list[np.ndarray]:
    """All j != i with |x_j - x_i| < radius, O(n^2), sorted per particle."""
    d2 = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    np.fill_diagonal(d2, np.inf)
    return [np.flatnonzero(row < radius * radius) for row in d2]
