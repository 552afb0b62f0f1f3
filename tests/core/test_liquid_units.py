"""The lattice constants of ``lattice`` against direct sums and a flat floor.

No simulation runs: every check is a lattice sum in numpy. Tolerances: 1e-12
relative where two sums over the same lattice points meet (only the summation
order differs; measured <= 8e-16); finite differences to 1e-8 relative (central
differences with a step of 1e-5 s; measured <= 5e-11).
"""

import math

import numpy as np
import pytest
from reference import naive

from sph_addon.core.boundary import lattice_fill
from sph_addon.core.numerics import lattice as units


def _lattice(spacing: float, reach: float, z_min: int | None = None) -> np.ndarray:
    """(k,3) simple cubic lattice points, spacing s, within ±(reach + s) of the origin (rows with z index >= z_min)."""
    n = int(math.ceil(reach / spacing)) + 1
    ax = np.arange(-n, n + 1)
    g = np.stack(np.meshgrid(ax, ax, ax if z_min is None else ax[ax >= z_min], indexing="ij"), -1).reshape(-1, 3)
    return g * spacing


def _origin(points: np.ndarray) -> int:
    return int(np.flatnonzero(np.all(points == 0.0, axis=1))[0])


@pytest.mark.parametrize("ratio", [2.0, 2.5, 3.0])
def test_rest_densities_equal_the_direct_lattice_sum_and_are_dimensionless(ratio):
    """ρ0, ρ0^near are the direct sums (eqs. 4.1, 4.3) at a particle of the simple cubic lattice, to 1e-12
    relative; at a fixed h/s they are the same at s = 0.01 m and 0.05 m (1e-12): pure numbers."""
    values = []
    for spacing in (0.01, 0.05):
        h = ratio * spacing
        x = _lattice(spacing, h)
        rho, rho_near = naive.clavet_densities(x, h)
        i = _origin(x)
        rho0, rho0_near = units.rest_densities(spacing, h)
        np.testing.assert_allclose([rho0, rho0_near], [rho[i], rho_near[i]], rtol=1e-12, atol=0)
        values.append((rho0, rho0_near))
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12, atol=0)


class FlatFloor:
    """A fake ``Walls``: the solid is z < 0 (signed distance z, share clip(1/2 - z/s, 0, 1) as ``solid_share``)."""

    def distance(self, points: np.ndarray) -> np.ndarray:
        return points[:, 2].copy()

    def solid_share(self, centres: np.ndarray, offsets: np.ndarray, spacing: float) -> np.ndarray:
        z = centres[:, None, 2] + offsets[None, :, 2]
        return np.clip(0.5 - z / spacing, 0.0, 1.0)


SPACING = 0.05  # m


@pytest.mark.parametrize("layer", [0, 1])
@pytest.mark.parametrize("ratio", [2.0, 3.0])
def test_wall_terms_complete_the_bulk_density_next_to_a_floor(ratio, layer):
    """A particle of a lattice resting on the floor (layers at z = s/2, 3s/2, ...), in layer 0 or 1: its
    fluid neighbours (direct sum) plus the floor's ρ_w and ρ^near_w give exactly the rest densities (1e-12
    relative), so the layers next to a wall are neither over- nor under-packed."""
    h = ratio * SPACING
    shift = np.array([0.013, -0.007, 0.5 * SPACING])  # the lattice's x, y are arbitrary on a flat floor
    fluid = _lattice(SPACING, h, z_min=0) + shift
    i = int(np.flatnonzero(np.all(np.isclose(fluid, shift + [0.0, 0.0, layer * SPACING]), axis=1))[0])
    x = fluid[i:i + 1]
    rho, rho_near = naive.clavet_densities(fluid, h)
    rho_w, rho_near_w, _, _ = lattice_fill.wall_terms(x, FlatFloor(), SPACING, h)
    rho0, rho0_near = units.rest_densities(SPACING, h)
    if layer == 0 or ratio == 3.0:
        assert rho_w[0] > 0.04 * rho0  # the floor does stand in for missing fluid (5 % to 32 % of ρ0 here)
    np.testing.assert_allclose(rho[i] + rho_w[0], rho0, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near[i] + rho_near_w[0], rho0_near, rtol=1e-12, atol=0)


@pytest.mark.parametrize("ratio", [2.0, 3.0])
def test_wall_gradient_points_into_the_floor_and_vanishes_beyond_reach(ratio):
    """Over heights from s/4 (a particle pushed into the share band) to h + s: wherever ρ_w > 0, g and g^near
    point straight down (z < 0, x and y zero to 1e-12 of |g|) and ρ_w does not grow with height; where
    ρ_w = 0 all terms are 0 (the kernel adds the wall only where ρ_w > 0); at z >= h + s/2 all are 0."""
    h = ratio * SPACING
    z = np.linspace(0.25, ratio + 1.0, 61) * SPACING
    x = np.column_stack([np.full_like(z, 0.021), np.full_like(z, -0.004), z])
    rho_w, rho_near_w, g, g_near = lattice_fill.wall_terms(x, FlatFloor(), SPACING, h)
    felt = rho_w > 0
    assert felt[0] and not felt[-1]
    for grad in (g, g_near):
        assert np.all(grad[felt, 2] < 0)
        np.testing.assert_allclose(grad[felt, :2], 0.0, rtol=0, atol=1e-12 * np.abs(grad[:, 2]).max())
        assert np.all(grad[~felt] == 0.0)
    assert np.all(rho_near_w[~felt] == 0.0)
    assert np.all(np.diff(rho_w) <= 1e-12)
    beyond = z >= h + 0.5 * SPACING
    assert beyond.any() and not felt[beyond].any()


@pytest.mark.parametrize("z", [0.5, 0.8, 1.2])
@pytest.mark.parametrize("ratio", [2.0, 3.0])
def test_wall_linearisation_is_the_derivative_with_fixed_partners(ratio, z):
    """ρ_w, ρ^near_w are Σ w (1-q)², Σ w (1-q)³ over the lattice points y = x_ref + o with their shares w
    (1e-12 relative); holding those points and shares fixed (Clavet's eq. 4.6 with partners that do not
    move, as the relaxation kernel does), the densities at x_ref + δ are ρ_w + (2/h) g·δ and
    ρ^near_w + (3/h) g^near·δ to first order: central differences match (2/h) g and (3/h) g^near to 1e-8
    relative, along z and along a slanted direction."""
    h = ratio * SPACING
    x_ref = np.array([[0.004, 0.011, z * SPACING]])
    rho_w, rho_near_w, g, g_near = lattice_fill.wall_terms(x_ref, FlatFloor(), SPACING, h)
    offsets = _lattice(SPACING, h)
    r = np.linalg.norm(offsets, axis=1)
    offsets = offsets[(r > 0.0) & (r < h)]  # the partners wall_terms sums over (strictly inside h, not self)
    points = x_ref + offsets
    share = FlatFloor().solid_share(x_ref, offsets, SPACING)[0]

    def fixed_partners(x):
        a = np.maximum(1.0 - np.linalg.norm(points - x, axis=1) / h, 0.0)
        return np.sum(share * a**2), np.sum(share * a**3)

    np.testing.assert_allclose(fixed_partners(x_ref[0]), [rho_w[0], rho_near_w[0]], rtol=1e-12, atol=0)
    eps = 1e-5 * SPACING
    for direction in ([0.0, 0.0, 1.0], [0.6, 0.0, 0.8]):
        e = np.array(direction)
        up, down = fixed_partners(x_ref[0] + eps * e), fixed_partners(x_ref[0] - eps * e)
        slope, slope_near = (up[0] - down[0]) / (2 * eps), (up[1] - down[1]) / (2 * eps)
        np.testing.assert_allclose(slope, 2.0 / h * g[0] @ e, rtol=1e-8)
        np.testing.assert_allclose(slope_near, 3.0 / h * g_near[0] @ e, rtol=1e-8)


# Measured relative gap (lattice / continuum - 1) of Γ: h/s = 2: -10.4 %, 2.5: -12.5 %, 3: -6.1 %,
# 4: -3.5 %, 5: -2.3 %, 6: -1.7 %, 8: -0.9 %. The lattice sum leaves out the pairs a uniform fluid
# has at r < s; the gap shrinks as the neighbourhood fills, though not monotonically at small h/s.
FOWLER_GAP = {2.0: 0.12, 3.0: 0.07, 4.0: 0.04, 6.0: 0.02}


@pytest.mark.parametrize("ratio", [2.0, 2.5])
def test_near_error_ratio_converts_the_near_densitys_error_to_clavets(ratio):
    """The relaxation measures the near density Σ (1-q)³ but its target is Clavet's density's error
    (``near_error_ratio``): on the cubic lattice compressed by 0.5 % of volume, the near density's
    relative excess over the ratio is Clavet's density's own, to 1 % of it (the ratio is the slopes'
    at no compression). Without the ratio the two differ by 22 % at h = 2 s, 5 % at 2.5 s."""
    s = 0.05
    h = ratio * s
    far0, near0 = units.rest_densities(s, h)
    compressed = s * (1 - 0.005) ** (1 / 3)
    # the compressed lattice's sums, over the offsets of the uncompressed one that can reach h
    r = np.linalg.norm(units.offsets(s, 1.1 * h), axis=1) * compressed / s
    a = np.clip(1 - r / h, 0, None)
    far_excess = np.sum(a**2) / far0 - 1
    near_excess = np.sum(a**3) / near0 - 1
    assert near_excess / units.near_error_ratio(s, h) == pytest.approx(far_excess, rel=0.01)
    assert abs(near_excess / far_excess - 1) > 0.04
