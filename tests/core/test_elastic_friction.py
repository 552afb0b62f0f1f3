"""Coulomb friction between an elastic body and a collider: a 6x5x3 block (1 cm spacing, E = 0.1 MPa) at rest
on a plane tilted 30°, gravity on, for each of the plane's ``friction`` μ (``elasticity_becker2009_friction``).

Expected (a rigid block on an incline): μ < tan 30° = 0.577 slides with its centre of mass accelerating along
the slope at g (sin θ - μ cos θ), g sin θ = 4.905 m/s² frictionless; μ = 1 > tan 30° holds it.

Tolerances. The acceleration is the centre of mass's velocity along the slope over the bake's time (the
scheme adds g Δt to every velocity each substep, so the velocity carries no error of the time step; the
displacement ½ a t² does: 5 % high at two substeps a frame): within 5 % (measured: 4.905 at μ = 0, 2.357
where Coulomb gives 2.356 at μ = 0.3). At μ = 1 the block stays within 0.05 spacings (0.5 mm) of where it
started along the slope: stuck, it only shears, its top by ρ g sin θ H² / (2 G) = 0.07 mm (G = E / 2.9),
and its centre of mass half that, where it would slide 22 cm in the same 0.3 s without friction (measured:
0.02 mm, its velocity 1e-10 m/s at the end). With the contact pass's friction alone (Clavet's, the solve
giving none) the block slides 12 cm at μ = 1 and accelerates at 2.98 m/s² at μ = 0.3.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.elastic_scenes import bonded, elastic_sim, rotation

SPACING = 0.01
TILT = np.radians(30.0)
G = 9.81


def _bake(mu: float, frames: int):
    """The block on the tilted plane after ``frames`` frames at 30 fps: (time s, centre of mass's
    displacement along the slope m, its velocity along the slope m/s, its displacement along the normal m)."""
    turn = rotation((1.0, 0.0, 0.0), TILT)
    # Built untilted on the side of the origin that is above the tilted plane (no lattice point is cut).
    sim = elastic_sim([((0.0, -0.05, 0.0), (0.06, 0.0, 0.03))], SPACING,
                      {"density": 1050.0, "youngs_modulus": 1e5, "poisson_ratio": 0.45, "damping_time": 0.01},
                      colliders=[{"type": "plane", "friction": mu, "rotation": [float(TILT), 0.0, 0.0]}])
    st = sim.state
    assert st.n == 90 and np.isclose(st.x[:, 2].min(), 0.5 * SPACING)  # resting on the plane
    st.x[:] = np.einsum("ij,nj->ni", turn, st.x)  # block and plane turned together about the x axis
    bonded(sim)
    normal, down = turn @ np.array([0.0, 0.0, 1.0]), turn @ np.array([0.0, -1.0, 0.0])
    assert np.isclose(np.array([0.0, 0.0, -G]) @ down, G * np.sin(TILT))
    start = st.x.mean(axis=0)
    for _ in range(frames):
        sim.advance_frame()
    moved = st.x.mean(axis=0) - start
    return st.time, float(moved @ down), float(st.v.mean(axis=0) @ down), float(moved @ normal)


@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_block_slides_down_a_slope_at_coulomb_s_acceleration(mu):
    t, _, v, off = _bake(mu, 5)
    expected = G * (np.sin(TILT) - mu * np.cos(TILT))
    assert v / t == pytest.approx(expected, rel=0.05)
    assert abs(off) < 0.1 * SPACING  # on the plane: neither sunk into it nor lifted off


def test_block_with_friction_above_the_slope_s_tangent_stays():
    t, along, v, off = _bake(1.0, 9)
    assert t == pytest.approx(0.3)
    assert abs(along) < 0.05 * SPACING
    assert abs(v) < 1e-3
    assert abs(off) < 0.1 * SPACING
