"""The viscoelastic numba kernels against the slow sequential references in tests/reference/naive.py.

A jittered lattice of 343 particles, two materials with different constants
(seeded), neighbour rows and colours from ``NeighborSearch`` as in
``Simulation.step``. The references visit particles in the same order as the
kernels, so results agree to round-off: every tolerance below is 1e-12 (the
measured differences are <= 4e-15, positions ~0.3 m and 20 m, velocities ~1 m/s),
far below any real discrepancy (visiting the particles in plain index order
instead of by colour moves positions by ~1e-2 m here).
"""

import inspect
import math

import numpy as np
import pytest
from reference import naive

from sph_addon.core.kernels import KERNELS
from sph_addon.core.neighbors import N_COLOURS, NeighborSearch
from sph_addon.core.solvers import viscoelastic_clavet2005_kernels as fast
from sph_addon.core.solvers.viscoelastic_clavet2005 import lattice_rest_density

SPACING = 0.05  # m
H = 2.0 * SPACING  # m, interaction radius as the scenes use it
DT = 1.0 / 200.0  # s

# Two materials with every constant different. Material 1 is very viscous (Δt σ = 2, so the u/2
# cap binds), material 0 has viscous stretching; springs: 0 elastic, 1 plastic (α > 0).
K = np.array([300.0, 80.0])  # m/s^2
K_NEAR = np.array([600.0, 400.0])  # m/s^2
RHO0 = np.array([1.0, 0.8]) * lattice_rest_density(SPACING, H, 2.0)
SIGMA = np.array([0.5, 400.0])  # 1/s
BETA = np.array([0.1, 5.0])  # 1/m
STRETCH = np.array([1, 0], np.uint8)
K_SPRING = np.array([2000.0, 500.0])  # 1/s^2
ALPHA = np.array([0.0, 30.0])  # 1/s
GAMMA = np.array([0.1, 0.05])


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


def _scene(layout: str, seed: int = 0) -> dict:
    """Particles in the solver's order with their neighbour rows, buckets and colours.

    ``dense``: one jittered 7x7x7 block. ``hashed``: the same block split in two, 20 m apart
    along each axis, so that ``NeighborSearch`` hashes its supercells (a dense grid would need
    100³ of them): another bucket layout and visiting order.
    """
    rng = np.random.default_rng(seed)
    g = np.arange(7) * SPACING
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    x = x + rng.uniform(-0.3, 0.3, x.shape) * SPACING
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
                bucket_start=ns.bucket_start.copy(), colour=ns.colour.copy(), n_colours=N_COLOURS, h=H, dt=DT)


def test_clavet_direct_sum_matches_the_paper_on_two_particles():
    """Sanity of the reference itself: q = 1/2 gives (1/2)² and (1/2)³; q >= 1 gives nothing."""
    x = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [2.0, 0.0, 0.0]])
    rho, rho_near = naive.clavet_densities(x, 1.0)
    assert np.array_equal(rho, [0.25, 0.25, 0.0])
    assert np.array_equal(rho_near, [0.125, 0.125, 0.0])


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_relaxation_densities_with_zero_stiffness_match_the_direct_sum(layout):
    """k = k_near = 0: positions stay bitwise unchanged, and ρ, ρ^near (eqs. 4.1, 4.3) match the
    O(n²) direct sum to 1e-12 relative (only the summation order differs)."""
    s = _scene(layout)
    x0 = s["x"].copy()
    n = len(x0)
    rho = np.full(n, np.nan)
    rho_near = np.full(n, np.nan)
    zero = np.zeros(2)
    _call(fast.double_density_relaxation, **s, k=zero, k_near=zero, rho0=RHO0, rho=rho, rho_near=rho_near)
    assert np.array_equal(s["x"], x0)
    ref, ref_near = naive.clavet_densities(x0, H)
    assert np.all(ref > 0)
    np.testing.assert_allclose(rho, ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near, ref_near, rtol=1e-12, atol=0)


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


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_double_density_relaxation_matches_sequential_reference(layout):
    """Algorithm 3 in the solver's visiting order: positions to 1e-12 m, densities to 1e-12 relative.
    The displacements reach ~3e-2 m, so a different order or constant would show by orders of magnitude."""
    s = _scene(layout)
    x_ref, rho_ref, rho_near_ref = naive.double_density_relaxation(
        s["x"], s["nbr"], s["count"], s["mat"], K, K_NEAR, RHO0, H, DT, s["bucket_start"], s["colour"])
    x0 = s["x"].copy()
    rho = np.zeros(len(x0))
    rho_near = np.zeros(len(x0))
    _call(fast.double_density_relaxation, **s, k=K, k_near=K_NEAR, rho0=RHO0, rho=rho, rho_near=rho_near)
    assert np.max(np.abs(x_ref - x0)) > 1e-3  # the relaxation did move particles
    np.testing.assert_allclose(s["x"], x_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rho, rho_ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rho_near, rho_near_ref, rtol=1e-12, atol=0)
    # Gauss-Seidel matters: the densities each particle saw differ from those of the start.
    assert not np.allclose(rho, naive.clavet_densities(x0, H)[0], rtol=1e-6)


@pytest.mark.parametrize("layout", ["dense", "hashed"])
def test_viscosity_impulses_match_sequential_reference(layout):
    """Algorithm 4 with the cap at u/2, viscous stretching and mean pair constants: velocities to
    1e-12 m/s (velocities are ~1 m/s)."""
    s = _scene(layout)
    # The scene exercises every branch: approaching pairs capped and uncapped, separating pairs
    # damped (both materials stretch) and skipped.
    x, v, mat = s["x"], s["v"], s["mat"]
    i, j = np.nonzero(np.triu(np.ones((len(x), len(x)), bool), 1))
    e = x[j] - x[i]
    r = np.linalg.norm(e, axis=1)
    near = r < H
    i, j, e, r = i[near], j[near], e[near], r[near]
    u = np.sum((v[i] - v[j]) * e, axis=1) / r
    sig = 0.5 * (SIGMA[mat[i]] + SIGMA[mat[j]])
    both_stretch = (STRETCH[mat[i]] == 1) & (STRETCH[mat[j]] == 1)
    capped = DT * (1 - r / H) * sig * np.abs(u) > 0.5 * np.abs(u)
    assert np.any((u > 0) & capped) and np.any((u > 0) & ~capped)
    assert np.any((u < 0) & both_stretch) and np.any((u < 0) & ~both_stretch)

    v_ref = naive.viscosity_impulses(x, v, s["nbr"], s["count"], mat, SIGMA, BETA, STRETCH, H, DT,
                                     s["bucket_start"], s["colour"])
    v0 = v.copy()
    _call(fast.viscosity_impulses, **s, sigma=SIGMA, beta=BETA, stretch=STRETCH)
    assert np.max(np.abs(v_ref - v0)) > 0.1
    np.testing.assert_allclose(s["v"], v_ref, rtol=0, atol=1e-12)
    # Whole, equal and opposite impulses: momentum (unit masses) is conserved to round-off.
    np.testing.assert_allclose(s["v"].sum(axis=0), v0.sum(axis=0), rtol=0, atol=1e-11)


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


def test_springs_plasticity_and_displacements_match_jacobi_reference():
    """Eq. 5.2 then Algorithm 5 (Jacobi): positions and live rest lengths to 1e-12 m, partners exactly."""
    s = _scene("dense")
    sp = _springs(s)
    live0 = sp["partner"] >= 0
    x_ref, partner_ref, rest_ref = naive.springs_plasticity_and_displacements(
        s["x"], s["mat"], sp["index_of_id"], sp["partner"], sp["rest"], K_SPRING, ALPHA, GAMMA, H, DT)
    # Every branch happens: partners gone, springs dropped at L >= h, plastic flow in material 1 only.
    index_of_id = np.append(sp["index_of_id"], -1)  # ids beyond the map are gone as well
    gone = live0 & (index_of_id[np.clip(sp["partner"], 0, len(index_of_id) - 1)] < 0)
    dropped = live0 & (partner_ref < 0)
    assert np.any(gone) and np.any(dropped & ~gone)
    kept = partner_ref >= 0
    plastic = kept & (rest_ref != sp["rest"])
    assert np.any(plastic) and np.all(s["mat"][np.nonzero(plastic)[0]] == 1)

    x0 = s["x"].copy()
    dx = np.zeros_like(x0)
    _call(fast.springs_plasticity_and_displacements, **s, **sp, k_spring=K_SPRING, alpha=ALPHA, gamma=GAMMA, dx=dx)
    assert np.max(np.abs(x_ref - x0)) > 1e-4
    np.testing.assert_array_equal(sp["partner"], partner_ref)
    np.testing.assert_allclose(sp["rest"][kept], rest_ref[kept], rtol=0, atol=1e-12)
    np.testing.assert_allclose(s["x"], x_ref, rtol=0, atol=1e-12)
