"""A helper of the term ``relaxation_clavet2005``: the kernel of Wang 2015's Chebyshev step.

``relaxation_clavet2005_chebyshev`` holds the logic and needs no numba.
"""

from __future__ import annotations

from ..numerics import config
from ..numerics.kernel_cache import njit, prange


@njit(**config.NJIT_PARALLEL)
def extrapolate(now, last, back, omega, gamma):
    """now = ω (γ (now - last) + last - back) + back, in place, and the result into ``back`` as well:
    one Chebyshev step of the relaxation's passes (``relaxation_clavet2005_chebyshev.ChebyshevPasses``);
    ``last`` is the iterate the pass started from, ``back`` the one before, whose buffer then keeps the
    start of the next pass (which saves copying it there). now, last, back : (n,3) float64."""
    for i in prange(now.shape[0]):
        for c in range(3):
            v = omega * (gamma * (now[i, c] - last[i, c]) + last[i, c] - back[i, c]) + back[i, c]
            now[i, c] = v
            back[i, c] = v


