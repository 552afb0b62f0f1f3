"""A cantilever under gravity against Euler-Bernoulli: static tip deflection δ = q L⁴ / (8 E I) and first
bending period T = (2π / 1.875²) L² √(ρ A / (E I)).

Beam: 3x3 particles of section (a = 3 s), L = 18 cm from the clamp face (18 particles), two more layers
behind the face pinned in the elastic solve (``elastic_scenes.pin``: their velocity is prescribed zero in
its filtered CG; resetting them after each substep let the beam swing down as a pendulum). E = 5e6 Pa,
ρ = 1000, ν = 0.3, no damping: δ/L ≈ 2 %, T ≈ 0.095 s, 11 substeps a frame (ω Δt = 0.2: backward
Euler lengthens the period by ~1 % and damps ~40 % an amplitude per period). Released straight, the tip
swings about the static deflection: δ is the mean of the tip's displacement over the last two thirds,
T twice the mean interval between its crossings of that mean. Effective section: I of the particle
lattice, s² Σ z² over the particles' centres (a⁴/12 (1 - 1/n²), n = 3 across), the beam's length
measured to the tip layer's centre.

Known failure (strict xfail): the model is too soft in bending at a free surface. The kernel-gradient
correction makes F exact for affine motion, but a surface particle's neighbourhood is one-sided, and
the fitted F of a curved (bending) field is that of the neighbourhood's centroid: the outer layers see
0.82 of their bending strain at 3 particles across, 0.93 at 6 (measured on a pure bending field).
Measured here (lattice I): tip deflection 1.50 × Euler-Bernoulli, period 1.25 ×. With the continuum
I: deflection 1.69 at 3 across, 1.44 at 4, 1.24 at 6; period 1.37, 1.23, 1.14 (so the two spacings do
not agree within 10 % either). A fix needs a second-order gradient at surface particles.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from tests.elastic_scenes import bonded, by_id, elastic_sim, pin

RHO, E, NU = 1000.0, 5e6, 0.3


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="bending too soft at free surfaces: one-sided F (module docstring)")
def test_cantilever_deflection_and_period():
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        deflection, theory, period, t_theory = _cantilever(0.01, 3, 0.18)
    finally:
        numba.set_num_threads(threads)
    assert abs(deflection / theory - 1.0) < 0.10, (deflection, theory)
    assert abs(period / t_theory - 1.0) < 0.10, (period, t_theory)


def _cantilever(s: float, n: int, length: float):
    a = n * s
    sim = elastic_sim([((-2 * s, 0, 0), (length, a, a))], s,
                      {"density": RHO, "youngs_modulus": E, "poisson_ratio": NU, "damping_time": 0.0}, substeps=11)
    bonded(sim)
    st = sim.state
    rest = by_id(sim, st.arrays["rest_position"])
    pin(sim, np.flatnonzero(rest[:, 0] < 0.0))
    tip = np.flatnonzero(rest[:, 0] > rest[:, 0].max() - 1e-9)
    step, t, z = sim.step, [], []

    def recorded(dt):
        step(dt)
        t.append(st.time)
        z.append(float((by_id(sim, st.x)[tip, 2] - rest[tip, 2]).mean()))

    sim.step = recorded
    for _ in range(9):  # 0.3 s, three periods
        sim.advance_frame()
    t, z = np.array(t), np.array(z)
    settled = z[len(z) // 3:]
    zc = z - settled.mean()
    k = np.flatnonzero(np.sign(zc[1:]) != np.sign(zc[:-1]))
    crossings = t[k] - zc[k] * (t[k + 1] - t[k]) / (zc[k + 1] - zc[k])
    layers = (np.arange(n) - 0.5 * (n - 1)) * s
    inertia = s * s * n * float((layers**2).sum())
    q = RHO * 9.81 * a * a
    xt = rest[tip, 0].mean()
    theory = q * xt**2 * (6 * length**2 - 4 * length * xt + xt**2) / (24 * E * inertia)
    t_theory = 2 * np.pi / 1.875**2 * length**2 * np.sqrt(RHO * a * a / (E * inertia))
    return -settled.mean(), theory, 2.0 * np.diff(crossings[1:]).mean(), t_theory
