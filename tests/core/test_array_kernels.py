"""The whole-array kernels of a substep against numpy (``sph_addon/core/numerics/array_kernels.py``)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sph_addon.core.numerics.array_kernels import bounds, exact_sum, kinetic_energy_sum, take_rows


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


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64, max_value=1e300, min_value=-1e300),
                max_size=60))
def test_exact_sum_is_math_fsum(values):
    """Correctly rounded, so equal to fsum's bit for bit: values over every binary order of magnitude,
    cancellations and half-way cases (the blow-up watch's energy budget is saved in checkpoints)."""
    assert exact_sum(np.array(values, np.float64)) == math.fsum(values)


def test_exact_sum_of_a_huge_spread_and_of_half_way_cases():
    rng = np.random.default_rng(3)
    spread = rng.normal(size=400) * 10.0 ** rng.integers(-300, 300, size=400)
    assert exact_sum(spread) == math.fsum(spread)
    half = np.array([1.0, 2.0**-53, 2.0**-106] * 7)
    assert exact_sum(half) == math.fsum(half) and exact_sum(-half) == math.fsum(-half)


@pytest.mark.parametrize("threads", [1, 2])
def test_exact_sum_in_parallel_blocks_is_math_fsum(threads):
    """Above one block each block keeps its exact partials and the blocks' partials are summed exactly:
    still fsum's result at any thread count, cancellations, spreads that outgrow a block's row
    (the serial pass then) and half-way cases included."""
    import numba

    from sph_addon.core.numerics.array_kernels import EXACT_SUM_BLOCK

    rng = np.random.default_rng(9)
    n = 3 * EXACT_SUM_BLOCK + 17
    cases = [rng.normal(size=n), np.concatenate([rng.normal(size=n // 2), -rng.normal(size=n // 2)]),
             rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n),
             np.tile([1.0, 1e100, 1.0, -1e100], n // 4), np.tile([1.0, 2.0**-53, 2.0**-106], n // 3)]
    was = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        for a in cases:
            assert exact_sum(a) == math.fsum(a)
    finally:
        numba.set_num_threads(was)


def test_kinetic_energy_sum_is_half_m_v_squared():
    rng = np.random.default_rng(4)
    v, m = rng.normal(size=(20000, 3)), rng.uniform(0.1, 2.0, 20000)
    assert kinetic_energy_sum(v, m) == pytest.approx(0.5 * float((m * (v**2).sum(axis=1)).sum()), rel=1e-12)


def test_mechanical_energies_are_the_numpy_statements():
    """The blow-up watch's per-particle masses and energies, bit for bit as numpy wrote them."""
    from sph_addon.core.numerics.array_kernels import mechanical_energies

    rng = np.random.default_rng(10)
    x, v = rng.normal(size=(5000, 3)), rng.normal(size=(5000, 3))
    material = rng.integers(0, 3, 5000).astype(np.uint8)
    densities, spacing, g = np.array([1000.0, 1420.0, 250.0]), 0.05, np.array([0.3, -0.2, -9.81])
    m_ref = densities[material] * spacing**3
    v2 = v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2]
    gx = x[:, 0] * g[0] + x[:, 1] * g[1] + x[:, 2] * g[2]
    e, m = np.empty(5000), np.empty(5000)
    mechanical_energies(x, v, material, densities, spacing**3, g, e, m)
    assert np.array_equal(m, m_ref) and np.array_equal(e, m_ref * (0.5 * v2 - gx))


@pytest.mark.parametrize("threads", [1, 2])
def test_solve_dot_products_are_the_same_at_any_thread_count(threads):
    """The viscosity and elastic solves' dot products (``array_kernels.dot_rows``): below one block the
    plain sum in particle order; above, blocks summed in parallel and added in block order, the same
    bytes at any thread count."""
    import numba

    from sph_addon.core.numerics.array_kernels import DOT_BLOCK, dot_rows

    rng = np.random.default_rng(11)
    small = rng.normal(size=(1000, 3)), rng.normal(size=(1000, 3))
    large = rng.normal(size=(2 * DOT_BLOCK + 5, 3)), rng.normal(size=(2 * DOT_BLOCK + 5, 3))
    plain = 0.0
    for i in range(1000):
        plain += small[0][i, 0] * small[1][i, 0] + small[0][i, 1] * small[1][i, 1] + small[0][i, 2] * small[1][i, 2]
    blocks = []
    for k in range(3):
        a, b = large[0][k * DOT_BLOCK:(k + 1) * DOT_BLOCK], large[1][k * DOT_BLOCK:(k + 1) * DOT_BLOCK]
        blocks.append(dot_rows(np.ascontiguousarray(a), np.ascontiguousarray(b)))  # one block: the plain sum
    was = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        assert dot_rows(*small) == plain
        assert dot_rows(*large) == (0.0 + blocks[0]) + blocks[1] + blocks[2]
    finally:
        numba.set_num_threads(was)
