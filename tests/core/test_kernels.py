"""Every kernel of ``KERNELS`` against analytic properties (as SPlisHSPlasH's Tests/Kernel/KernelTests.cpp).

Normalisation by exact quadrature, W >= 0, compact support, dW/dr against
central differences, zero net gradient on a symmetric lattice; and Clavet's
unnormalised pair weights against the arithmetic the solver inlines.
"""

import math
import re

import numpy as np
import pytest

from sph_addon.core.numerics.kernels import KERNELS, clavet_a, clavet_density_weight, clavet_near_weight

NAMES = sorted(KERNELS)
H_VALUES = (0.05, 1.7)  # m: a typical interaction radius and one above 1, so h^3 errors would show


def _eval(f, r, h):
    """f(r_k, h) for every r_k of a 1D array (the kernels are scalar njit functions)."""
    return np.array([f(float(rk), h) for rk in r])


def _gauss_legendre(a, b, panels=32, nodes=8):
    """Nodes and weights of composite Gauss-Legendre on [a, b]: exact for piecewise polynomials of
    degree <= 15 whose breaks (q = 1/2 of the cubic spline) fall on panel edges."""
    t, wt = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(a, b, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    x = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    w = (half[:, None] * wt[None, :]).ravel()
    return x, w


def test_registry_entries_are_consistent_and_cite_a_source():
    assert NAMES == sorted(["clavet_density", "clavet_near", "cubic_spline", "poly6", "spiky",
                            "desbrun_anticluster"])
    for name, k in KERNELS.items():
        assert k.name == name
        assert k.support in (1.0, 2.0)
        # An author's name and a year, e.g. "Clavet 2005", "Muller et al. 2003", "Desbrun & Cani 1996".
        assert re.search(r"[A-Z][a-z]+.{0,12}\b(19|20)\d\d\b", k.description), k.description
        assert "\n" not in k.description


@pytest.mark.parametrize("h", H_VALUES)
@pytest.mark.parametrize("name", NAMES)
def test_normalised_kernels_integrate_to_one_in_3d(name, h):
    """∫ W dV = ∫ 4π r² W(r) dr = 1; the quadrature is exact here, so 1e-8 only allows round-off."""
    k = KERNELS[name]
    if not k.normalised:
        pytest.skip("not a normalised kernel")
    r, wq = _gauss_legendre(0.0, k.support * h)
    total = float(np.sum(wq * 4.0 * math.pi * r * r * _eval(k.w, r, h)))
    assert abs(total - 1.0) < 1e-8, total


@pytest.mark.parametrize("name", NAMES)
def test_non_negative_inside_and_zero_at_and_beyond_the_support(name):
    k = KERNELS[name]
    h = 0.3
    rs = k.support * h
    inside = np.linspace(0.0, rs, 2001)
    assert np.all(_eval(k.w, inside, h) >= 0.0)
    assert _eval(k.w, [0.0], h)[0] > 0.0
    outside = np.array([rs, rs * (1 + 1e-12), rs * 1.5, rs * 10.0])
    assert np.all(_eval(k.w, outside, h) == 0.0)
    assert np.all(_eval(k.dw, outside, h) == 0.0)
    # Continuity at the support: just inside it both W and dW/dr are already ~0 (no jump).
    assert abs(k.w(rs * (1 - 1e-9), h)) < 1e-12 * k.w(0.0, h)


@pytest.mark.parametrize("h", H_VALUES)
@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_central_differences(name, h):
    """dW/dr vs (W(r+ε) - W(r-ε)) / 2ε with ε = 1e-5 h.

    Truncation ~ ε² W'''/6 ~ 1e-9 relative, round-off ~ 1e-16 W / ε ~ 1e-11 relative, so 1e-6 is
    a clear margin. Points where |dW/dr| < 1e-3 max |dW/dr| (near r = 0 for the smooth kernels)
    are held to the absolute bound 1e-6 max |dW/dr| instead, where a relative one is meaningless.
    The samples avoid r = 0 (cusp of the Clavet kernels) and the support's edge by > ε.
    """
    k = KERNELS[name]
    rs = k.support * h
    r = np.linspace(0.01, 0.99, 197) * rs
    eps = 1e-5 * h
    fd = (_eval(k.w, r + eps, h) - _eval(k.w, r - eps, h)) / (2 * eps)
    dw = _eval(k.dw, r, h)
    scale = np.max(np.abs(dw))
    big = np.abs(dw) > 1e-3 * scale
    assert np.all(np.abs(fd[big] - dw[big]) <= 1e-6 * np.abs(dw[big])), np.max(np.abs(fd - dw)[big] /
                                                                            np.abs(dw[big]))
    assert np.all(np.abs(fd[~big] - dw[~big]) <= 1e-6 * scale)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_sums_to_zero_on_a_symmetric_lattice(name):
    """Σ ∇W(x_k) over a lattice symmetric about the origin vanishes (the discrete ∫∇W dV = 0).

    ∇W = dW/dr · x/r (the origin itself contributes nothing: r̂ is undefined there). Terms cancel
    in ± pairs but are summed in lattice order, so the bound is round-off: 1e-13 of Σ|∇W|.
    """
    k = KERNELS[name]
    h = 0.2
    n = int(6 * k.support)  # spacing h/6: 6-12 lattice points per support radius
    ax = np.arange(-n, n + 1) * (h / 6)
    x = np.stack(np.meshgrid(ax, ax, ax, indexing="ij"), -1).reshape(-1, 3)
    r = np.linalg.norm(x, axis=1)
    keep = r > 0
    x, r = x[keep], r[keep]
    grad = _eval(k.dw, r, h)[:, None] * x / r[:, None]
    assert np.any(grad != 0.0)
    total = np.abs(grad.sum(axis=0))
    assert np.all(total <= 1e-13 * np.abs(grad).sum(axis=0)), total


def test_clavet_pair_weights_are_the_solver_arithmetic_bit_for_bit():
    """clavet_a, a², a³ equal the inlined ``1.0 - r * inv_h``, ``a * a``, ``a * a * a`` exactly
    (numpy float64 operations are the same IEEE operations), so the solver can call them
    without a change in its results; and the normalised Clavet kernels are those weights
    times 15/(2π h³) and 15/(π h³) (to round-off: W divides r / h, the weights multiply by 1/h)."""
    rng = np.random.default_rng(7)
    h = 0.0734
    inv_h = 1.0 / h
    r = rng.uniform(0.0, 1.2 * h, 500)
    for rk in r:
        a = clavet_a(float(rk), inv_h)
        a_np = np.float64(1.0) - np.float64(rk) * np.float64(inv_h)
        assert a == a_np
        assert clavet_density_weight(a) == a_np * a_np
        assert clavet_near_weight(a) == a_np * a_np * a_np
        if a > 0.0:
            c = 15.0 / (2.0 * math.pi * h**3)
            assert KERNELS["clavet_density"].w(float(rk), h) == pytest.approx(c * a * a, rel=1e-13, abs=1e-13 * c)
            assert KERNELS["clavet_near"].w(float(rk), h) == pytest.approx(2 * c * a * a * a, rel=1e-13,
                                                                           abs=1e-13 * c)


@pytest.mark.parametrize("name", ["clavet_density", "desbrun_anticluster"])
def test_kernels_can_be_passed_into_njit_drivers(name):
    """STYLE.md convention 5: a driver receives the resolved kernel function as an argument and
    gets exactly the values of direct calls. Not disk-cached: numba cannot cache a kernel taking
    a function argument (config.py), and this one is defined inside the test."""
    from numba import njit

    from sph_addon.core.numerics import config

    @njit(**{**config.NJIT, "cache": False})
    def driver(w, r, h, out):
        for k in range(r.shape[0]):
            out[k] = w(r[k], h)

    k = KERNELS[name]
    r = np.linspace(0.0, 1.1 * k.support, 50) * 0.3
    out = np.empty_like(r)
    driver(k.w, r, 0.3, out)
    assert np.array_equal(out, _eval(k.w, r, 0.3))
