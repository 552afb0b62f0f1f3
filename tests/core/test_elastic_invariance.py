"""Becker 2009's first check: the corotated forces vanish under a rigid motion, and no state's forces
push or turn the body as a whole (linear and angular momentum are kept).

Forces straight from the kernels (``elastic_scenes.elastic_forces``) on a block (full rest
neighbourhoods), a one-particle-thick sheet and a one-particle-wide rod (coplanar and collinear
neighbourhoods: the rank-deficient case, F completed by the rotation), for linear and Green strain,
with the hourglass energy on.

Tolerances, 1e-9 relative: the forces are sums of O(100) terms of size ~|f|, so rounding leaves
~1e-14 |f|; the rotation is iterated to 1e-12 rad (``ROTATION_TOLERANCE``), which leaves forces of
~1e-12 of a 1 % strain's. Measured: a rigid turn of 1.4 rad and a shift leave at most 4e-11 of the
1 % strain's forces (sheet and rod; 2e-13 for the block); sums 6e-16, torques 1e-11 of Σ |x| |f|.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.elastic_scenes import bonded, elastic_forces, elastic_sim, rotation

SPACING = 0.01
SHAPES = {"block": (0.05, 0.04, 0.03), "sheet": (0.05, 0.04, 0.01), "rod": (0.06, 0.01, 0.01)}
TURN = rotation([0.7, -1.1, 0.4], np.linalg.norm([0.7, -1.1, 0.4]))  # 1.4 rad about a skew axis
RELATIVE = 1e-9


@pytest.fixture(scope="module", params=[(s, g) for s in ("linear", "green") for g in SHAPES])
def body(request):
    strain, shape = request.param
    sim = elastic_sim([((0, 0, 0), SHAPES[shape])], SPACING, {"youngs_modulus": 1e4, "poisson_ratio": 0.4,
                                                             "strain": strain}, gravity=(0, 0, 0))
    bonded(sim)
    return sim, sim.state.arrays["rest_position"].copy()


def test_rigid_motion_feels_no_force(body):
    sim, rest = body
    c = rest.mean(axis=0)
    stretched = rest.copy()
    stretched[:, 0] = c[0] + 1.01 * (rest[:, 0] - c[0])  # 1 % along the body's longest side
    reference = np.abs(elastic_forces(sim, stretched)).max()
    assert reference > 0.0
    moved = (rest - c) @ TURN.T + c + np.array([0.3, -0.2, 0.1])
    rigid = np.abs(elastic_forces(sim, moved)).max()
    assert rigid <= RELATIVE * reference, (rigid, reference)


def test_forces_sum_and_torque_vanish(body):
    sim, rest = body
    rng = np.random.default_rng(7)
    c = rest.mean(axis=0)
    # A large, non-affine deformation: a turn, a 5 % random affine strain and 1 mm of noise.
    affine = TURN @ (np.eye(3) + 0.05 * rng.standard_normal((3, 3)))
    x = (rest - c) @ affine.T + c + 1e-3 * rng.standard_normal(rest.shape)
    f = elastic_forces(sim, x)
    scale = np.abs(f).sum()
    assert np.abs(f.sum(axis=0)).max() <= RELATIVE * scale
    lever = np.linalg.norm(x - x.mean(axis=0), axis=1)
    torque = np.cross(x - x.mean(axis=0), f).sum(axis=0)
    assert np.abs(torque).max() <= RELATIVE * float((lever * np.linalg.norm(f, axis=1)).sum())
