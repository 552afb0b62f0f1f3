"""How many more particles other arrangements hold than the simple cubic fill at the same kernel density.

A density relaxation sees kernel sums, not counts: if another arrangement reaches the rest density
Σ W(r/h) of the cubic lattice with more particles per volume, the liquid can pack into it and lose
depth with every particle at its rest density (CHANGELOG.md, method notes, "The wall's missing turn"). For
each kernel shape and support h (in spacings) this prints the number density, over the cubic
lattice's, of the face-centred and body-centred cubic lattices, of stacked triangular layers one
spacing apart and of the cubic lattice with every other column shifted by half a spacing along it
(what the resting pool's interior settles into: ``pool_at_rest.py --structure``), each scaled until
its kernel sum is the cubic lattice's; then, for square layers of
the cubic lattice's own spacing shifted by half a cell every other layer, the layer pitch that keeps
the sum (what a column held by side walls could shrink to).

Usage::

    python scripts/benchmarks/kernel_packing.py
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sph_addon.core.numerics.spline import cubic_spline_shape_array  # noqa: E402

KERNELS = {
    "(1-q)^2 (Clavet's density)": lambda q: (1 - q) ** 2,
    "(1-q)^3 (Clavet's near density)": lambda q: (1 - q) ** 3,
    "cubic spline": cubic_spline_shape_array,
}


def _radii(points: np.ndarray, h: float) -> np.ndarray:
    r = np.linalg.norm(points, axis=1)
    return r[(r > 1e-9) & (r < h)]


def _cells(n: int) -> np.ndarray:
    ax = np.arange(-n, n + 1, dtype=float)
    return np.stack(np.meshgrid(ax, ax, ax, indexing="ij"), -1).reshape(-1, 3)


def _cubic(basis: np.ndarray, a: float, h: float) -> np.ndarray:
    g = _cells(int(h / a) + 3)
    return _radii(((g[:, None, :] + basis[None]) * a).reshape(-1, 3), h)


def _layers(a: float, pitch: float, h: float, shift, square: bool) -> np.ndarray:
    n = int(h / min(a, pitch)) + 3
    i, j = np.meshgrid(np.arange(-2 * n, 2 * n + 1), np.arange(-2 * n, 2 * n + 1), indexing="ij")
    plane = np.stack([a * i, a * j] if square else [a * (i + 0.5 * j), a * np.sqrt(3) / 2 * j], -1).reshape(-1, 2)
    rows = [np.column_stack([plane + (k % 2) * np.asarray(shift) * a, np.full(len(plane), k * pitch)])
            for k in range(-n, n + 1)]
    return _radii(np.concatenate(rows), h)


def _shifted_columns(a: float, h: float) -> np.ndarray:
    """The cubic lattice of spacing a with every other column (i + j odd) moved by a/2 along it: the
    arrangement the resting pool's interior settles into (``pool_at_rest.py --structure``)."""
    g = _cells(int(h / a) + 3)
    g[:, 2] += 0.5 * ((g[:, 0] + g[:, 1]) % 2)
    return _radii(g * a, h)


def _solve(f, lo: float, hi: float) -> float:
    """The root of f in [lo, hi] by bisection (f changes sign there)."""
    f_lo = f(lo)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        f_mid = f(mid)
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _matching(w, h: float, target: float, radii, lo: float, hi: float) -> float:
    """The parameter in [lo, hi] at which the arrangement ``radii(parameter)`` has the kernel sum ``target``."""
    return _solve(lambda a: w(radii(a) / h).sum() - target, lo, hi)


def main() -> None:
    fcc = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    bcc = np.array([[0, 0, 0], [0.5, 0.5, 0.5]])
    hollow = (0.5, 0.5 / np.sqrt(3))
    print(f"{'kernel':32s} {'h/s':>4s} {'fcc':>7s} {'bcc':>7s} {'tri.':>7s} {'shift.':>7s} {'pitch':>7s}")
    for h in (2.0, 2.5):
        for name, w in KERNELS.items():
            target = w(_cubic(np.zeros((1, 3)), 1.0, h) / h).sum()
            a_fcc = _matching(w, h, target, partial(_cubic, fcc, h=h), 0.8, 2.5)
            a_bcc = _matching(w, h, target, partial(_cubic, bcc, h=h), 0.8, 2.5)
            a_tri = _matching(w, h, target, partial(_layers, pitch=1.0, h=h, shift=hollow, square=False), 0.7, 2.0)
            a_shift = _matching(w, h, target, partial(_shifted_columns, h=h), 0.8, 1.25)
            pitch = _matching(w, h, target, partial(_layers, 1.0, h=h, shift=(0.5, 0.5), square=True), 0.5, 1.5)
            print(f"{name:32s} {h:4.1f} {4 / a_fcc**3:7.4f} {2 / a_bcc**3:7.4f} "
                  f"{2 / (np.sqrt(3) * a_tri**2):7.4f} {1 / a_shift**3:7.4f} {pitch:7.4f}")


if __name__ == "__main__":
    main()
