"""The colliders as the models see them (``walls.Walls``): distances taken in the kernel, boundary shares
in a buffer kept across calls, and the bound that skips points whose share must be zero."""

import numpy as np

from sph_addon.core.boundary.solid_share_kernels import solid_share
from sph_addon.core.boundary.walls import Walls
from sph_addon.core.colliders import COLLIDERS, BuildContext, euler_xyz_matrix
from sph_addon.core.colliders.contact.response import distances

SPACING = 0.05


class _Placed:
    """The parts of a ``Collider`` that ``Walls`` reads."""

    def __init__(self, kind: str, **p):
        self.shape = COLLIDERS[kind].build(p, BuildContext())
        self.moving = False
        self.rebuild = None


def _walls(scratch=None) -> Walls:
    rot = np.ascontiguousarray(euler_xyz_matrix(0.3, -0.2, 0.7), np.float64)
    tank = (_Placed("box_container", size=[1.0, 0.8, 0.6]), rot, np.array([0.1, -0.2, 0.3]))
    ball = (_Placed("sphere", radius=0.15), np.eye(3), np.array([0.2, 0.0, 0.1]))
    return Walls([tank, ball], scratch)


def _points(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.4, 0.4, size=(n, 3)) + [0.1, -0.2, 0.3]


def test_distances_taken_in_the_kernel_are_the_matrix_products():
    """``placed_distances`` transforms each point in the kernel: the same distances as the
    local-frame points (x - t) R numpy would have made, to round-off."""
    walls = _walls()
    x = _points(500, 1)
    expected = np.full(len(x), np.inf)
    for c, rot, pos in walls.placed:
        d = np.empty(len(x))
        distances(c.shape.code, c.shape.params, c.shape.grid, np.ascontiguousarray((x - pos) @ rot), d)
        expected = np.minimum(expected, d)
    np.testing.assert_allclose(walls.distance(x), expected, rtol=0, atol=1e-12)


def _shares_by_hand(walls: Walls, centres: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Every point evaluated, no bound, no kept buffer: the definition."""
    share = np.zeros((len(centres), len(offsets)))
    for c, rot, pos in walls.placed:
        for b, o in enumerate(offsets):
            d = np.empty(len(centres))
            distances(c.shape.code, c.shape.params, c.shape.grid, np.ascontiguousarray((centres + o - pos) @ rot), d)
            share[:, b] = np.maximum(share[:, b], np.clip(0.5 - d / SPACING, 0.0, 1.0))
    return share


def test_shares_from_a_kept_buffer_and_the_distance_bound_are_the_definitions():
    """Calls of growing, shrinking and growing size share one buffer: no value leaks from one call to
    the next, and skipping the points the distance bound proves outside changes nothing."""
    scratch: dict = {}
    walls = _walls(scratch)
    g = np.arange(-2, 3) * SPACING
    offsets = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    offsets = offsets[(np.linalg.norm(offsets, axis=1) > 0) & (np.linalg.norm(offsets, axis=1) < 2 * SPACING)]
    for n, seed in ((300, 2), (40, 3), (900, 4)):
        centres = np.ascontiguousarray(_points(n, seed))
        got = walls.solid_share(centres, offsets, SPACING).copy()
        np.testing.assert_allclose(got, _shares_by_hand(walls, centres, offsets), rtol=0, atol=1e-12)
    assert scratch["share"].shape[0] >= 900  # one buffer, grown once it was short


def test_a_point_beyond_the_bound_is_never_evaluated():
    """The bound decides which points are evaluated: with the true one (1 per metre) the point one spacing
    below a particle 0.6 spacing above a ball is 0.4 spacing inside it (share 0.9); told the field never
    changes (0 per metre), the kernel skips it as it skips every point it can prove outside."""
    c = _Placed("sphere", radius=0.15)
    centre = np.array([[0.0, 0.0, 0.15 + 0.6 * SPACING]])
    offsets = np.array([[0.0, 0.0, -SPACING]])
    for lipschitz, expected in ((1.0, 0.9), (0.0, 0.0)):
        share = np.zeros((1, 1))
        solid_share(c.shape.code, c.shape.params, c.shape.grid, np.eye(3), np.zeros(3), centre, offsets,
                    np.linalg.norm(offsets, axis=1), lipschitz, SPACING, share)
        assert abs(share[0, 0] - expected) < 1e-12, (lipschitz, share)


def test_weighted_rows_skipping_zero_shares_are_the_matrix_product():
    """The boundary terms' sums skip the zero shares most rows hold; each column is still summed in the
    same order, so the result is numpy's product to round-off (and exactly its sum of the same terms)."""
    from sph_addon.core.boundary.solid_share_kernels import weighted_rows

    rng = np.random.default_rng(4)
    share = rng.uniform(0.0, 1.0, (300, 32))
    share[rng.uniform(size=share.shape) < 0.8] = 0.0
    share[:20] = 0.0  # whole rows of zeros: particles a layer from any wall
    w = rng.normal(size=(32, 8))
    out = np.full((300, 8), np.nan)
    weighted_rows(share, w, out)
    np.testing.assert_allclose(out, np.einsum("km,mc->kc", share, w), rtol=1e-12, atol=1e-15)
    assert np.all(out[:20] == 0.0)

    # The boundary terms' form: the same sums written straight to the particles' rows, exactly.
    from sph_addon.core.boundary.solid_share_kernels import boundary_sums

    rows = rng.permutation(500)[:300]
    rho, rho_near, g, g_near = np.zeros(500), np.zeros(500), np.zeros((500, 3)), np.zeros((500, 3))
    boundary_sums(share, w, rows, rho, rho_near, g, g_near)
    assert np.array_equal(rho[rows], out[:, 0]) and np.array_equal(rho_near[rows], out[:, 1])
    assert np.array_equal(g[rows], out[:, 2:5]) and np.array_equal(g_near[rows], out[:, 5:8])
    others = np.setdiff1d(np.arange(500), rows)
    assert not (rho[others].any() or rho_near[others].any() or g[others].any() or g_near[others].any())

