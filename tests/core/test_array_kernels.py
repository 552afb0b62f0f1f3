"""The whole-array kernels of a substep against numpy (``sph_addon/core/array_kernels.py``)."""

import numpy as np
import pytest

from sph_addon.core.array_kernels import bounds, take_rows


@pytest.mark.parametrize("n", [1, 2, 1000])
def test_bounds_are_numpys_min_and_max(n):
    x = np.random.default_rng(n).normal(size=(n, 3))
    lo, hi = np.empty(3), np.empty(3)
    bounds(x, lo, hi)
    np.testing.assert_array_equal(lo, x.min(axis=0))
    np.testing.assert_array_equal(hi, x.max(axis=0))


@pytest.mark.parametrize("row", [0, 7])
def test_bounds_are_nan_when_a_coordinate_is_nan(row):
    """As numpy's: the domain test then falls back to its mask, which removes the NaN particle."""
    x = np.random.default_rng(1).normal(size=(10, 3))
    x[row, 1] = np.nan
    lo, hi = np.empty(3), np.empty(3)
    bounds(x, lo, hi)
    assert np.isnan(lo).all() and np.isnan(hi).all()


def test_take_rows_is_fancy_indexing():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(500, 3))
    order = rng.permutation(500)
    out = np.empty_like(a)
    take_rows(a, order, out)
    np.testing.assert_array_equal(out, a[order])
