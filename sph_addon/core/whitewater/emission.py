"""Emission of whitewater particles from the liquid's potentials (Ihmsen et al. 2012, section 5).

A liquid particle i with enough liquid neighbours emits n_d = ⌊Φ_k (k_ta Φ_ta + k_wc Φ_wc) Δt⌉ particles
over a frame of Δt seconds, Φ being the clamp-normalised potentials. Each is placed at random in the
cylinder around i's velocity (radius: the particle's, half a spacing; length Δt |v_i|):
x_d = x_i + r cos θ e_1 + r sin θ e_2 + X_h Δt v_i with r = r_V √X_r, θ = 2π X_θ, and moves with
v_d = v_i + r cos θ e_1 + r sin θ e_2 (the paper adds the radial offset to the velocity as it is);
it lives l_min + Φ_k U(0,1) (l_max - l_min) seconds as foam.

The random numbers come from one generator seeded by (seed, frame), drawn in the emitters' file order:
a frame's emission depends on neither the thread count nor the frames run before it in this process.
"""

from __future__ import annotations

import numpy as np

from .potentials import clamp_normalise

# Paper: only particles with enough liquid neighbours emit (about 15 in a full support of about 30), so
# a lone droplet does not spawn spray of its own.
EMIT_MIN_NEIGHBOURS = 15.0


def emission_counts(pot: np.ndarray, ranges: dict[str, tuple[float, float]], k_ta: float, k_wc: float,
                    dt: float, min_neighbours: float) -> tuple[np.ndarray, np.ndarray]:
    """(n_d (n,) int64, Φ_k (n,)) of liquid particles with potentials ``pot`` (``potentials.potentials``)."""
    phi_ta = clamp_normalise(pot[:, 0], *ranges["trapped_air"])
    phi_wc = clamp_normalise(pot[:, 1], *ranges["wave_crest"])
    phi_k = clamp_normalise(pot[:, 2], *ranges["kinetic_energy"])
    n_d = np.rint(phi_k * (k_ta * phi_ta + k_wc * phi_wc) * dt).astype(np.int64)
    n_d[pot[:, 3] < min_neighbours] = 0
    return n_d, phi_k


def _basis(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors perpendicular to each row of ``v`` and to each other."""
    speed = np.sqrt((v * v).sum(axis=1))
    d = v / np.where(speed > 0, speed, 1.0)[:, None]
    ref = np.zeros_like(d)
    use_y = np.abs(d[:, 0]) > 0.9
    ref[~use_y, 0] = 1.0
    ref[use_y, 1] = 1.0
    e1 = np.cross(ref, d)
    e1 /= np.maximum(np.sqrt((e1 * e1).sum(axis=1)), 1e-300)[:, None]
    return e1, np.cross(d, e1)


def emit(x: np.ndarray, v: np.ndarray, n_d: np.ndarray, phi_k: np.ndarray, radius: float, dt: float,
         lifetime: tuple[float, float], seed: int, frame: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample the new particles of one frame.

    Parameters
    ----------
    x, v : (n, 3) positions and velocities of the liquid particles.
    n_d, phi_k : their emission counts and normalised kinetic potentials (:func:`emission_counts`).
    radius : the emitters' radius r_V, m.
    dt : the frame's physical duration, s.
    lifetime : (l_min, l_max), s.
    seed, frame : the generator's seed.

    Returns
    -------
    positions (m, 3), velocities (m, 3), lifetimes (m,) of the m = Σ n_d new particles.
    """
    total = int(n_d.sum())
    if total == 0:
        return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)
    src = np.repeat(np.arange(len(n_d)), n_d)
    rng = np.random.default_rng([int(seed), int(frame) % 2**32])
    draws = rng.random((total, 4))
    e1, e2 = _basis(v[src])
    r = radius * np.sqrt(draws[:, 0])
    theta = 2.0 * np.pi * draws[:, 1]
    offset = (r * np.cos(theta))[:, None] * e1 + (r * np.sin(theta))[:, None] * e2
    pos = x[src] + offset + (draws[:, 2] * dt)[:, None] * v[src]
    vel = v[src] + offset
    life = lifetime[0] + phi_k[src] * draws[:, 3] * (lifetime[1] - lifetime[0])
    return pos, vel, life
