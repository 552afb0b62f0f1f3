"""The viscoelastic numba kernels against the slow sequential references in tests/reference/naive.py.

A jittered lattice of 343 particles, two materials with different constants
(seeded), neighbour rows and colours from ``NeighborSearch`` as in
``Simulation.step``. The references visit particles in the same order as the
kernels (Gauss-Seidel) or update every particle from the same state (Jacobi),
so results agree to round-off: every tolerance below is 1e-12. Measured: positions
(~0.3 m, and 20 m in the hashed layout) within 8e-15 m, velocities (~1 m/s) within
2e-15 m/s, densities within 1e-13 relative (the hashed layout's 20 m coordinates
lose ~6 digits in the pair differences, the rest 3e-15). That is far below any
real discrepancy: visiting the particles in plain index order instead of by
colour moves positions by ~1e-2 m here, and every term tested moves its
particles by at least 1e-3 m or m/s.
"""

import inspect
import math

import numpy as np
import pytest
from reference import naive

from sph_addon.core.numerics import lattice as units
from sph_addon.core.numerics.kernels import KERNELS
from sph_addon.core.terms import relaxation_clavet2005_kernels as relaxation
from sph_addon.core.terms import springs_clavet2005_kernels as springs
from sph_addon.core.terms import viscosity_clavet2005_kernels as pair_viscosity
from sph_addon.core.terms import viscosity_weiler2018_kernels as ivk
from sph_addon.core.terms import xsph_monaghan1989_kernels as xsph_kernels
from sph_addon.core.terms.relaxation_clavet2005 import RELAXATION_NEAR, relaxation_gains
from sph_addon.core.world.neighbors import NeighborSearch

SPACING = 0.05  # m
H = 2.0 * SPACING  # m, interaction radius as the scenes use it
DT = 1.0 / 200.0  # s

# Two materials with every constant different. Relaxation gains: the Newton steps of Clavet's
# density and of the near density (ω = 1) and 0.4 of them (the solver runs the near density alone
# at 0.45; both here, larger, so displacements stand far above round-off and the kernel's far
# density stays pinned); material 1 has lower rest densities, so it pushes more often. Material 1
# is very viscous (Δt σ = 2, so the u/2 cap binds); springs: 0 elastic, 1 plastic (α > 0).
GAIN = np.array([1.0, 0.4]) * H / (2.0 * units.rest_densities(SPACING, H)[0])  # m per unit density error
GAIN_NEAR = np.array([1.0, 0.4]) * relaxation_gains(SPACING, H)[1] / RELAXATION_NEAR  # m
CAP = relaxation.PAIR_CAP * H  # m, the largest pair displacement in a pass
RHO0 = np.array([1.0, 0.8]) * units.rest_densities(SPACING, H)[0]
RHO0_NEAR = np.array([1.0, 0.9]) * units.rest_densities(SPACING, H)[1]
# XSPH: the solver's 0.05 and a stronger 0.3.
XSPH = np.array([0.05, 0.3])
BETA = np.array([0.1, 5000.0])  # 1/m
K_SPRING = np.array([2000.0, 500.0])  # 1/s^2
ALPHA = np.array([0.0, 30.0])  # 1/s
GAMMA = np.array([0.1, 0.05])
RELAX = np.array([0.3, 0.0])  # Maxwell share 1 - exp(-Δt/τ) per substep
NO_SOLIDS = dict(held=np.zeros(2, np.uint8), held_dx=np.zeros((0, 3)))  # the relaxation's solids: none


def _call(kernel, **args):
    """Call a numba kernel with arguments matched to its parameter names.

    The kernels' signatures are being extended (``n_colours``, spring-mode constants); matching
    by name keeps this test valid across that change, and a parameter the test does not supply
    fails loudly instead of shifting the others.
    """
    # A plain function under NUMBA_DISABLE_JIT=1, a dispatcher otherwise.
    names = list(inspect.signature(getattr(kernel, "py_func", kernel)).parameters)
    missing = [n for n in names if n not in args]
    assert not missing, f"{kernel.__name__} takes {missing}, which this test does not supply"
    return kernel(*[args[n] for n in names])


def _scene(layout: str, seed: int = 0, coincident: bool = False) -> dict:
    """Particles in the solver's order with their neighbour rows, buckets and colours.

    ``dense``: one jittered 7x7x7 block. ``hashed``: the same block split in two, 20 m apart
    along each axis, so that ``NeighborSearch`` hashes its supercells (a dense grid would need
    100³ of them): another bucket layout and visiting order. ``coincident`` appends a copy of
    one inner particle at the same position (a pair with r = 0).
    """
    rng = np.random.default_rng(seed)
    g = np.arange(7) * SPACING
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    x = x + rng.uniform(-0.3, 0.3, x.shape) * SPACING
    if coincident:
        x = np.vstack([x, x[171]])  # 171: the block's centre
    if layout == "hashed":
        x[x[:, 0] > 0.15] += 20.0  # far enough to hash, near enough to keep round-off small
    n = len(x)
    v = rng.normal(0.0, 1.0, (n, 3))
    mat = rng.integers(0, 2, n).astype(np.uint8)
    ns = NeighborSearch(H)
    order = ns.sort(x)
    assert ns.dense == (layout == "dense")
    x, v, mat = x[order], v[order], mat[order]
    nbr, count = ns.lists(x, H)
    return dict(x=np.ascontiguousarray(x), v=np.ascontiguousarray(v), mat=mat, nbr=nbr.copy(), count=count.copy(),
                bucket_start=ns.bucket_start.copy(), colour=ns.colour.copy(), colour_buckets=ns.colour_buckets.copy(),
                colour_units=ns.colour_units.copy(), h=H, dt=DT)


def _no_walls(n: int) -> dict:
    """Collider terms of a scene without colliders (``boundary.lattice_fill.wall_terms`` with walls=None)."""
    return dict(x_ref=np.zeros((n, 3)), wall_rho=np.zeros(n), wall_rho_near=np.zeros(n),
                wall_g=np.zeros((n, 3)), wall_g_near=np.zeros((n, 3)), planes=np.zeros((0, 4)),
                plane_of=np.full((n, 3), -1, np.int64))


def _relax_both(s: dict, walls: dict, backward: bool) -> tuple:
    """One relaxation pass by the reference and by the kernel (which mutates ``s["x"]``).

    Returns the reference's (x, ρ, ρ^near), then the kernel's ρ and ρ^near.
    """
    ref = naive.double_density_relaxation(s["x"], s["nbr"], s["count"], s["mat"], GAIN, GAIN_NEAR, RHO0,
                                          RHO0_NEAR, H, s["bucket_start"], s["colour"], **walls, cap=CAP,
                                          backward=backward)
    n = len(s["x"])
    rho, rho_near = np.zeros(n), np.zeros(n)
    _call(relaxation.double_density_relaxation, **s, **walls, gain=GAIN, gain_near=GAIN_NEAR, rho0=RHO0,
          rho0_near=RHO0_NEAR, backward=backward, mass=np.zeros(0), **NO_SOLIDS, rho=rho, rho_near=rho_near,
          wall_dx=np.zeros((len(rho), 3)))
    return (*ref, rho, rho_near)


def _walls(s: dict, seed: int = 2) -> dict:
    """Random but plausible collider terms: a floor at z = -s/2 under the block, felt by its lowest layer.

    Magnitudes as ``boundary.lattice_fill.wall_terms`` gives them at h = 2s from a floor at distance d
    (ρ_w ≈ 0.6 ρ0, |g| ≈ 1.6, |g^near| ≈ 0.5 at d = s/2, falling to nothing at d = 3s/2): for
    the particles with z < s, with f = 1 - z/s, ρ_w = U(0.02, 0.6) ρ0 f, ρ^near_w = U(0.2, 0.5) ρ_w,
    g of length U(0.2, 1.6) f pointing down within ~30° (a bumpy floor), g^near = U(0.2, 0.4) g,
    sampled at x_ref = x + U(-0.2, 0.2) s. The rest have none (zero terms, as wall_terms returns
    far from colliders). Small ρ_w with a large g·δ makes the linearised densities negative for
    some particles, so the clip at zero is exercised.
    """
    rng = np.random.default_rng(seed)
    n = len(s["x"])
    z = s["x"][:, 2] % 20.0  # each half of the "hashed" layout on its own floor
    z = np.where(z > 10.0, z - 20.0, z)
    near = z < SPACING
    k = int(near.sum())
    f = 1.0 - z[near] / SPACING
    w = _no_walls(n)
    w["x_ref"] = s["x"] + rng.uniform(-0.2, 0.2, (n, 3)) * SPACING
    w["wall_rho"][near] = rng.uniform(0.02, 0.6, k) * RHO0[0] * f
    w["wall_rho_near"][near] = rng.uniform(0.2, 0.5, k) * w["wall_rho"][near]
    unit = np.column_stack([rng.normal(0.0, 0.3, (k, 2)), -np.ones(k)])
    unit /= np.linalg.norm(unit, axis=1)[:, None]
    w["wall_g"][near] = (rng.uniform(0.2, 1.6, k) * f)[:, None] * unit
    w["wall_g_near"][near] = rng.uniform(0.2, 0.4, (k, 1)) * w["wall_g"][near]
    return w


def test_clavet_direct_sum_matches_the_paper_on_two_particles():
    """Sanity of the reference itself: q = 1/2 gives (1/2)² and (1/2)³; q >= 1 gives nothing."""
    x = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [2.0, 0.0, 0.0]])
    rho, rho_near = naive.clavet_densities(x, 1.0)
    assert np.array_equal(rho, [0.25, 0.25, 0.0])
    assert np.array_equal(rho_near, [0.125, 0.125, 0.0])


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_relaxation_densities_with_zero_gains_match_the_direct_sum(layout):
    """gain = gain_near = 0, no colliders: positions stay bitwise unchanged, and ρ, ρ^near
    (eqs. 4.1, 4.3) match the O(n²) direct sum to 1e-12 relative (only the summation order differs)."""
    s = _scene(layout)
    x0 = s["x"].copy()
    n = len(x0)
    rho = np.full(n, np.nan)
    rho_near = np.full(n, np.nan)
    zero = np.zeros(2)
    _call(relaxation.double_density_relaxation, **s, **_no_walls(n), gain=zero, gain_near=zero, rho0=RHO0,
          rho0_near=RHO0_NEAR, backward=False, mass=np.zeros(0), **NO_SOLIDS, rho=rho, rho_near=rho_near,
          wall_dx=np.zeros((len(rho), 3)))
    assert np.array_equal(s["x"], x0)
    ref, ref_near = naive.clavet_densities(x0, H)
    assert np.all(ref > 0)
    np.testing.assert_allclose(rho, ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near, ref_near, rtol=1e-12, atol=0)


def test_relaxation_shares_pair_displacements_by_mass():
    """Two materials of masses 1 and 3 (``mass``: a light solid in a liquid, ``ModelSetup.densities``): a
    pass moves the particles with Σ m Δx = 0 to round-off (1e-12 of Σ m |Δx|), where the whole shares of
    one density keep Σ Δx = 0 instead; the heavy particles move less than they would with whole shares."""
    mass = np.array([1.0, 3.0])
    moves = {}
    for label, given in (("shared", mass), ("whole", np.zeros(0))):
        s = _scene("dense")
        x0 = s["x"].copy()
        n = len(x0)
        _call(relaxation.double_density_relaxation, **s, **_no_walls(n), gain=GAIN, gain_near=GAIN_NEAR,
              rho0=RHO0, rho0_near=RHO0_NEAR, backward=False, mass=given, **NO_SOLIDS, rho=np.zeros(n),
              rho_near=np.zeros(n), wall_dx=np.zeros((n, 3)))
        moves[label] = (s["x"] - x0, mass[s["mat"]])
    dx, m = moves["shared"]
    assert np.abs(dx).sum() > 0.0
    assert np.abs((m[:, None] * dx).sum(axis=0)).max() < 1e-12 * (m[:, None] * np.abs(dx)).sum()
    whole, _ = moves["whole"]
    assert np.abs(whole.sum(axis=0)).max() < 1e-12 * np.abs(whole).sum()
    heavy = m == 3.0
    assert np.abs(dx[heavy]).sum() < np.abs(whole[heavy]).sum()


@pytest.mark.parametrize("held", [False, True])
def test_a_particle_that_does_not_relax_takes_the_liquids_impulse_whatever_its_mass(held):
    """A liquid particle and a neighbour of another material that does not relax (gain 0: a solid's
    particle), 0.6 h apart, the liquid's rest densities lowered so that the pair alone compresses it:
    the liquid particle moves as it would against its own kind (its whole share,
    the same for a neighbour of mass 0.5, 1 or 2), and the neighbour takes the equal and opposite
    impulse, m Δx = -Δx of the liquid's (mass 1): the push on a body in a liquid is the liquid's, as
    Archimedes has it, not shared by mass. Held (a solid's material, ``held``), the neighbour stays where
    it is and the same Δx goes to ``held_dx`` (its solve takes it as a velocity)."""
    x = np.array([[0.0, 0.0, 0.0], [0.6 * H, 0.0, 0.0]]) + 0.5
    ns = NeighborSearch(H)
    order = ns.sort(x)
    x = x[order]
    mat = np.array([0, 1], np.uint8)[order]
    nbr, count = ns.lists(x, H)
    moves = {}
    for m in (0.5, 1.0, 2.0):
        s = dict(x=x.copy(), mat=mat, nbr=nbr.copy(), count=count.copy(),
                 bucket_start=ns.bucket_start.copy(), colour=ns.colour.copy(),
                 colour_buckets=ns.colour_buckets.copy(), colour_units=ns.colour_units.copy(), h=H, dt=DT)
        held_dx = np.zeros((2, 3))
        _call(relaxation.double_density_relaxation, **s, **_no_walls(2), gain=GAIN * [1.0, 0.0],
              gain_near=GAIN_NEAR * [1.0, 0.0], rho0=RHO0 * [1e-3, 1.0], rho0_near=RHO0_NEAR * [1e-3, 1.0],
              backward=False, mass=np.array([1.0, m]), held=np.array([0, int(held)], np.uint8), held_dx=held_dx,
              rho=np.zeros(2), rho_near=np.zeros(2), wall_dx=np.zeros((2, 3)))
        dx = s["x"] - x
        assert not held or not dx[mat == 1].any()
        moves[m] = dx[mat == 0][0], (held_dx if held else dx)[mat == 1][0]
    liquid = moves[1.0][0]
    assert np.abs(liquid).max() > 1e-6 * H
    for m, (dl, ds) in moves.items():
        assert np.allclose(dl, liquid, rtol=1e-12, atol=0.0)
        assert np.allclose(m * ds, -dl, rtol=1e-12, atol=1e-18)


def test_kernel_direct_sum_agrees_with_clavet_direct_sum():
    """The generic direct sum with KERNELS["clavet_density"] is 15/(2π h³) times Clavet's ρ; with
    "clavet_near" and the self term it is 15/(π h³) (1 + ρ^near) (two references, two code paths;
    1e-12 relative, round-off of the constant and of the summation order)."""
    s = _scene("dense")
    c = 15.0 / (2.0 * math.pi * H**3)
    rho, rho_near = naive.clavet_densities(s["x"], H)
    others = naive.direct_sum_density(s["x"], H, KERNELS["clavet_density"], include_self=False)
    np.testing.assert_allclose(others, c * rho, rtol=1e-12)
    with_self = naive.direct_sum_density(s["x"], H, KERNELS["clavet_near"])
    np.testing.assert_allclose(with_self, 2.0 * c * (1.0 + rho_near), rtol=1e-12)


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_double_density_relaxation_matches_sequential_reference(layout, backward):
    """Algorithm 3 (one-sided pressures, no colliders) in the solver's visiting order, forward and
    backward: positions to 1e-12 m, densities to 1e-12 relative. The displacements reach ~1e-2 m, so a
    different order or constant would show by orders of magnitude."""
    s = _scene(layout)
    x0 = s["x"].copy()
    x_ref, rho_ref, rho_near_ref, rho, rho_near = _relax_both(s, _no_walls(len(x0)), backward)
    # Both sides of each one-sided pressure occur (a particle below its rest density exerts nothing).
    assert np.any(rho_ref < RHO0[s["mat"]]) and np.any(rho_ref > RHO0[s["mat"]])
    assert np.any(rho_near_ref < RHO0_NEAR[s["mat"]]) and np.any(rho_near_ref > RHO0_NEAR[s["mat"]])
    assert np.max(np.abs(x_ref - x0)) > 1e-3  # the relaxation did move particles
    np.testing.assert_allclose(s["x"], x_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rho, rho_ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near, rho_near_ref, rtol=1e-12, atol=0)
    # Gauss-Seidel matters: the densities each particle saw differ from those of the start.
    assert not np.allclose(rho, naive.clavet_densities(x0, H)[0], rtol=1e-6)
    # Pair displacements are equal and opposite: without colliders the centre of mass stays put.
    np.testing.assert_allclose(s["x"].sum(axis=0), x0.sum(axis=0), rtol=0, atol=1e-11)
    # The sweep direction matters: the other one ends elsewhere.
    x_other, _, _ = naive.double_density_relaxation(
        x0, s["nbr"], s["count"], s["mat"], GAIN, GAIN_NEAR, RHO0, RHO0_NEAR, H, s["bucket_start"],
        s["colour"], **_no_walls(len(x0)), cap=CAP, backward=not backward)
    assert np.max(np.abs(x_other - x_ref)) > 1e-3


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_double_density_relaxation_with_colliders_matches_sequential_reference(layout, backward):
    """Collider terms on the lowest layer (71 of 343 particles): their densities (linearised about x_ref,
    clipped at 0) and the push -(P Δt² g + P^near Δt² g^near) match the reference to 1e-12 m and 1e-12 relative."""
    s = _scene(layout)
    walls = _walls(s)
    near = walls["wall_rho"] > 0
    # The clip at zero binds for some particles (judged at the start positions).
    lin = walls["wall_rho"] + 2.0 / H * np.sum(walls["wall_g"] * (s["x"] - walls["x_ref"]), axis=1)
    assert np.any(near & (lin < 0)) and np.any(near & (lin > 0))
    x0 = s["x"].copy()
    x_ref, rho_ref, rho_near_ref, rho, rho_near = _relax_both(s, walls, backward)
    np.testing.assert_allclose(s["x"], x_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rho, rho_ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near, rho_near_ref, rtol=1e-12, atol=0)
    # The colliders did change the outcome: against the same pass without them, by > 1e-3 m.
    x_free, _, _ = naive.double_density_relaxation(
        x0, s["nbr"], s["count"], s["mat"], GAIN, GAIN_NEAR, RHO0, RHO0_NEAR, H, s["bucket_start"],
        s["colour"], **_no_walls(len(x0)), cap=CAP, backward=backward)
    assert np.max(np.abs(x_free - x_ref)) > 1e-3


# A tank's corner (three perpendicular walls, the kernel's fast path) and a wedge (a side tilted by
# 30 degrees from the vertical, the general path), each half a spacing outside the block's corner.
CORNERS = {"box": [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
           "wedge": [[0.0, 0.0, 1.0], [math.cos(math.pi / 6), 0.0, math.sin(math.pi / 6)], [0.0, 1.0, 0.0]]}


@pytest.mark.parametrize("corner", list(CORNERS))
@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_relaxation_with_mirror_walls_matches_sequential_reference(layout, backward, corner):
    """A corner of three walls half a spacing outside the block (the floor and two sides, as a
    tank's, or one side tilted): the images of each particle's neighbours and of itself in every subset of
    its walls (``boundary.mirror``) enter its densities and take its pushes, reflected back. Positions
    to 1e-12 m, densities to 1e-12 relative; particles near one, two and three walls all occur;
    what the walls gave (``wall_dx``) is the whole change of the centre of mass (pairs cancel)."""
    from sph_addon.core.boundary.mirror_kernels import nearest_planes

    s = _scene(layout)
    n = len(s["x"])
    walls = _no_walls(n)
    walls["planes"] = np.array([[*normal, -0.5 * SPACING] for normal in CORNERS[corner]])
    nearest_planes(s["x"], walls["planes"], np.zeros(3, np.int64), H, walls["plane_of"], np.empty((n, 3)))
    k = (walls["plane_of"] >= 0).sum(axis=1)
    assert all(np.any(k == m) for m in (0, 1, 2, 3)), np.bincount(k)
    x0 = s["x"].copy()
    ref = naive.double_density_relaxation(x0, s["nbr"], s["count"], s["mat"], GAIN, GAIN_NEAR, RHO0, RHO0_NEAR, H,
                                          s["bucket_start"], s["colour"], **walls, cap=CAP, backward=backward)
    rho, rho_near, wall_dx = np.zeros(n), np.zeros(n), np.zeros((n, 3))
    _call(relaxation.double_density_relaxation, **s, **walls, gain=GAIN, gain_near=GAIN_NEAR, rho0=RHO0,
          rho0_near=RHO0_NEAR, backward=backward, mass=np.zeros(0), **NO_SOLIDS, rho=rho, rho_near=rho_near,
          wall_dx=wall_dx)
    np.testing.assert_allclose(s["x"], ref[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rho, ref[1], rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near, ref[2], rtol=1e-12, atol=0)
    np.testing.assert_allclose((s["x"] - x0).sum(axis=0), wall_dx.sum(axis=0), rtol=0, atol=1e-11)
    free = naive.double_density_relaxation(x0, s["nbr"], s["count"], s["mat"], GAIN, GAIN_NEAR, RHO0, RHO0_NEAR,
                                           H, s["bucket_start"], s["colour"], **_no_walls(n), cap=CAP,
                                           backward=backward)
    assert np.max(np.abs(free[0] - ref[0])) > 1e-3  # the walls changed the outcome


@pytest.mark.parametrize("coef", [XSPH, np.full(2, 0.3)], ids=["per-material", "one-coefficient"])
@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_smooth_velocities_match_jacobi_reference(layout, coef):
    """XSPH with mean pair coefficients and one lattice ρ0: velocities to 1e-12 m/s, and Σ Δv = 0
    to 1e-11 m/s (each pair term equal and opposite). With one coefficient for every material the
    kernel skips the material lookups: the same reference."""
    s = _scene(layout)
    v0 = s["v"].copy()
    rho0 = units.rest_densities(SPACING, H)[0]
    v_ref = naive.smooth_velocities(s["x"], v0, s["nbr"], s["count"], s["mat"], coef, H, rho0)
    _call(xsph_kernels.smooth_velocities, **s, coef=coef, mass=np.ones(len(coef)), rho0=rho0, dv=np.zeros_like(v0))
    assert np.max(np.abs(v_ref - v0)) > 0.1
    np.testing.assert_allclose(s["v"], v_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose((s["v"] - v0).sum(axis=0), 0.0, rtol=0, atol=1e-11)


def test_coincident_pair_matches_the_references():
    """A pair at r = 0 (no direction) is left out of the relaxation's densities and displacements, and
    counts with q = 0 in XSPH: kernels and references agree to 1e-12 with it present."""
    s = _scene("dense", coincident=True)
    r = np.linalg.norm(s["x"][:, None] - s["x"][None], axis=-1)
    np.fill_diagonal(r, np.inf)
    i, j = np.argwhere(r == 0.0)[0]
    assert j in s["nbr"][i, :s["count"][i]]  # the coincident pair is in the rows
    x0, v0 = s["x"].copy(), s["v"].copy()
    x_ref, rho_ref, _, rho, _ = _relax_both(s, _walls(s), backward=False)
    np.testing.assert_allclose(s["x"], x_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rho, rho_ref, rtol=1e-12, atol=0)
    s["x"] = x0
    rho0 = units.rest_densities(SPACING, H)[0]
    v_ref = naive.smooth_velocities(x0, v0, s["nbr"], s["count"], s["mat"], XSPH, H, rho0)
    _call(xsph_kernels.smooth_velocities, **s, coef=XSPH, mass=np.ones(len(XSPH)), rho0=rho0, dv=np.zeros_like(v0))
    np.testing.assert_allclose(s["v"], v_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_viscosity_impulses_match_sequential_reference(layout):
    """Algorithm 4's quadratic term with the cap at u/2 and mean pair constants: velocities to
    1e-12 m/s (velocities are ~1 m/s)."""
    s = _scene(layout)
    x, v, mat = s["x"], s["v"], s["mat"]
    i, j = np.nonzero(np.triu(np.ones((len(x), len(x)), bool), 1))
    e = x[j] - x[i]
    r = np.linalg.norm(e, axis=1)
    near = r < H
    i, j, e, r = i[near], j[near], e[near], r[near]
    u = np.sum((v[i] - v[j]) * e, axis=1) / r
    b = 0.5 * (BETA[mat[i]] + BETA[mat[j]])
    capped = DT * (1 - r / H) * b * u * u > 0.5 * np.abs(u)
    # The scene exercises every branch: approaching pairs capped and uncapped, separating pairs skipped.
    assert np.any((u > 0) & capped) and np.any((u > 0) & ~capped) and np.any(u < 0)

    v_ref = naive.viscosity_impulses(x, v, s["nbr"], s["count"], mat, BETA, H, DT, s["bucket_start"], s["colour"])
    v0 = v.copy()
    _call(pair_viscosity.viscosity_impulses, **s, beta=BETA)
    assert np.max(np.abs(v_ref - v0)) > 0.1
    np.testing.assert_allclose(s["v"], v_ref, rtol=0, atol=1e-12)
    # Whole, equal and opposite impulses: momentum (unit masses) is conserved to round-off.
    np.testing.assert_allclose(s["v"].sum(axis=0), v0.sum(axis=0), rtol=0, atol=1e-11)


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_implicit_viscosity_operator_matches_brute_force(layout):
    """The matrix-free operator A v equals the all-pairs sum (two materials, a wall block) to 1e-9 of
    its scale, and the CG solution satisfies A v = ρ v* to the requested tolerance."""

    s = _scene(layout)
    x, v, mat = s["x"], s["v"], s["mat"]
    n = len(x)
    rng = np.random.default_rng(3)
    rho = np.array([1000.0, 1400.0])[mat]
    eta = np.array([2.0, 30.0])[mat]
    wall_b = np.zeros((n, 6))
    wall_b[: n // 4, :3] = rng.uniform(0.5, 2.0, (n // 4, 3))
    wall_b[: n // 4, 3] = 0.1
    coeff = np.array([DT * 4000.0, 1.0 / H, 1.0])
    ref = naive.viscous_operator(x, v, rho, eta, coeff[0], H, wall_b)
    out = np.zeros((n, 3))
    no_springs = np.empty((n, 0), np.int64), np.empty((n, 0, 2)), np.empty((n, 0, 3))
    ivk.apply_operator(x, v, s["nbr"], s["count"], rho, eta, coeff, wall_b, *no_springs, out)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-9 * scale)
    assert np.abs(ref - rho[:, None] * v).max() > 0.1 * scale  # the viscous part is not negligible

    rhs = rho[:, None] * v
    sol = v.copy()
    scratch = [np.empty((n, 3)) for _ in range(4)]
    it, res = ivk.solve(x, sol, s["nbr"], s["count"], rho, eta, coeff, wall_b, *no_springs, rhs, 1e-10, 500,
                        np.empty((n, 3, 3)), *scratch)
    check = naive.viscous_operator(x, sol, rho, eta, coeff[0], H, wall_b)
    assert 0 < it < 500 and res <= 1e-10
    assert np.linalg.norm(check - rhs) <= 1e-9 * np.linalg.norm(rhs)


def _springs(s: dict, seed: int = 1) -> dict:
    """Spring rows for the scene, both copies of each spring, plus the cases the kernel handles.

    Same-material neighbour pairs get a spring with probability 0.7 (rest length r·U(0.8, 1.25),
    so some are compressed, some stretched beyond the yield ratio, some at or beyond h and
    dropped); stable ids are sparse and shuffled; a few slots point at removed ids or at ids
    beyond ``index_of_id`` (partner gone); free slots are interleaved.
    """
    rng = np.random.default_rng(seed)
    x, mat, nbr, count = s["x"], s["mat"], s["nbr"], s["count"]
    n = len(x)
    ids = rng.choice(n + 60, n, replace=False).astype(np.int64)
    index_of_id = np.full(n + 60, -1, np.int64)
    index_of_id[ids] = np.arange(n)
    gone = np.setdiff1d(np.arange(n + 60), ids)
    width = 40
    partner = np.full((n, width), -1, np.int64)
    rest = np.zeros((n, width))
    fill = np.zeros(n, np.int64)

    def put(i, pid, L):
        slot = fill[i] + (1 if rng.random() < 0.2 else 0)  # leave a free slot now and then
        partner[i, slot], rest[i, slot] = pid, L
        fill[i] = slot + 1

    for i in range(n):
        for j in nbr[i, :count[i]]:
            if j < i or mat[j] != mat[i] or rng.random() > 0.7:
                continue
            L = np.linalg.norm(x[j] - x[i]) * rng.uniform(0.8, 1.25)
            put(i, ids[j], L)
            put(j, ids[i], L)
        if rng.random() < 0.1:
            put(i, int(rng.choice(gone)), 0.5 * H)
        if rng.random() < 0.05:
            put(i, n + 60 + 7, 0.5 * H)  # an id beyond index_of_id
    assert fill.max() <= width
    return dict(index_of_id=index_of_id, partner=partner, rest=rest)


def test_spring_plasticity_matches_jacobi_reference():
    """Maxwell relaxation, eq. 5.2 and spring removal (Jacobi): live rest lengths to 1e-12 m, partners
    exactly; positions untouched (the springs' forces are solved with the velocities)."""
    s = _scene("dense")
    sp = _springs(s)
    live0 = sp["partner"] >= 0
    partner_ref, rest_ref = naive.spring_plasticity(
        s["x"], s["mat"], sp["index_of_id"], sp["partner"], sp["rest"], ALPHA, GAMMA, RELAX, H, DT)
    # Every branch happens: partners gone, springs dropped at L >= h, relaxation in material 0 and
    # plastic flow in material 1, each only there.
    index_of_id = np.append(sp["index_of_id"], -1)  # ids beyond the map are gone as well
    gone = live0 & (index_of_id[np.clip(sp["partner"], 0, len(index_of_id) - 1)] < 0)
    dropped = live0 & (partner_ref < 0)
    assert np.any(gone) and np.any(dropped & ~gone)
    kept = partner_ref >= 0
    moved = kept & (rest_ref != sp["rest"])
    assert np.any(moved & (s["mat"][:, None] == 0)) and np.any(moved & (s["mat"][:, None] == 1))

    x0 = s["x"].copy()
    _call(springs.spring_plasticity, **s, **sp, alpha=ALPHA, gamma=GAMMA, relax=RELAX)
    np.testing.assert_array_equal(sp["partner"], partner_ref)
    np.testing.assert_allclose(sp["rest"][kept], rest_ref[kept], rtol=0, atol=1e-12)
    assert np.array_equal(s["x"], x0)


def test_implicit_springs_match_a_dense_assembly():
    """The springs in the implicit solve (Clavet Algorithm 5 by backward Euler) against a dense
    3n x 3n assembly on a handful of particles: the impulses Δt a_s(x) and the matrix-free A v
    (viscosity, a wall block and θ Δt² K_s) to 1e-12 of their scale; the assembled A is symmetric
    positive definite; the CG solution equals numpy's dense solve to 1e-8; the spring impulses sum
    to zero (internal forces)."""

    rng = np.random.default_rng(5)
    n = 9
    x = np.array([[i, j, k] for i in range(3) for j in range(3) for k in range(1)], float) * SPACING
    x += rng.normal(0.0, 0.1 * SPACING, x.shape)
    v = rng.normal(0.0, 1.0, (n, 3))
    mat = np.array([0] * 5 + [1] * 4, np.uint8)
    ids = rng.permutation(100)[:n].astype(np.int64)
    index_of_id = np.full(100, -1, np.int64)
    index_of_id[ids] = np.arange(n)
    width = 8
    partner = np.full((n, width), -1, np.int64)
    rest = np.zeros((n, width))
    fill = np.zeros(n, int)
    for i in range(n):
        for j in range(i + 1, n):
            r = np.linalg.norm(x[j] - x[i])
            if mat[i] != mat[j] or r >= 1.4 * SPACING:
                continue
            L = r * rng.uniform(0.8, 1.2)
            for a, b in ((i, j), (j, i)):
                partner[a, fill[a]], rest[a, fill[a]] = ids[b], L
                fill[a] += 1
    partner[0, fill[0]], rest[0, fill[0]] = 99 if index_of_id[99] < 0 else 0, 0.5 * H  # a partner gone
    partner[1, fill[1]], rest[1, fill[1]] = ids[2], 1.01 * H  # at L >= h: exerts nothing
    k_spring = np.array([5e4, 2e5])  # 1/s², rubber-like: Δt² κ >> 1
    assert fill.min() > 0

    sj = np.empty((n, width), np.int64)
    sw = np.empty((n, width, 2))
    se = np.empty((n, width, 3))
    dv = np.empty((n, 3))
    springs.spring_terms(x, mat, index_of_id, partner, rest, k_spring, H, DT, sj, sw, se, dv)
    dv_ref, stiffness = naive.spring_system(x, mat, index_of_id, partner, rest, k_spring, H, DT)
    np.testing.assert_allclose(dv, dv_ref, rtol=0, atol=1e-12 * np.abs(dv_ref).max())
    np.testing.assert_allclose(dv.sum(axis=0), 0.0, atol=1e-12 * np.abs(dv).max())
    assert np.abs(stiffness).max() > 1.0  # the springs dominate the unit mass
    live = sj >= 0
    assert np.any(sw[..., 1][live] > 0) and np.any(sw[..., 1][live] == 0)  # stretched and compressed

    nbr = np.array([[j for j in range(n) if j != i] for i in range(n)], np.int32)
    count = np.full(n, n - 1, np.int32)
    rho = np.ones(n)
    eta = np.array([1e-3, 5e-3])[mat]
    wall_b = np.zeros((n, 6))
    wall_b[:3, :3] = 1.0
    theta = 0.75
    coeff = np.array([DT * 4000.0, 1.0 / H, theta])
    dense = np.eye(3 * n) + theta * stiffness
    # The viscous part from its own reference, column by column.
    for c in range(3 * n):
        e = np.zeros(3 * n)
        e[c] = 1.0
        dense[:, c] += (naive.viscous_operator(x, e.reshape(n, 3), rho, eta, coeff[0], H, wall_b)
                        - e.reshape(n, 3)).ravel()
    out = np.empty((n, 3))
    ivk.apply_operator(x, v, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, out)
    ref = (dense @ v.ravel()).reshape(n, 3)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(dense, dense.T, rtol=0, atol=1e-12 * np.abs(dense).max())
    assert np.linalg.eigvalsh(dense).min() > 0.99

    rhs = v + dv
    sol = rhs.copy()
    scratch = [np.empty((n, 3)) for _ in range(4)]
    it, res = ivk.solve(x, sol, nbr, count, rho, eta, coeff, wall_b, sj, sw, se, rhs, 1e-12, 500,
                        np.empty((n, 3, 3)), *scratch)
    direct = np.linalg.solve(dense, rhs.ravel()).reshape(n, 3)
    assert 0 < it < 500 and res <= 1e-12
    np.testing.assert_allclose(sol, direct, rtol=0, atol=1e-8 * np.abs(direct).max())
