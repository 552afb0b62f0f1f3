"""A helper of the term ``relaxation_clavet2005``: its passes' stopping test and Wang 2015's Chebyshev steps.

How the density relaxation's passes run: their stopping test and their Chebyshev acceleration.

``density_errors`` is the stopping test (a material meets its target when the mean compression
of its compressed particles is under ``density_error`` and the largest under 10 times it).

References: H. Wang, "A Chebyshev Semi-Iterative Approach for Accelerating
Projective and Position-based Dynamics", ACM TOG 34(6), 2015 (for Jacobi and
Gauss-Seidel passes alike); A. Sommer, U. Schwanecke, E. Schömer, "Chebyshev's
Method on Projective Fluids", WSCG 2020 (the same for particle fluids). A
fixed-point iteration x̂_{k+1} = F(x_k) whose error contracts by the spectral
radius ρ per pass converges in fewer passes when each result is extrapolated
along the last two:

    x_{k+1} = ω_{k+1} (γ (x̂_{k+1} - x_k) + x_k - x_{k-1}) + x_{k-1},
    ω = 1 for k < S,  ω_S = 2 / (2 - ρ²),  ω_{k+1} = 4 / (4 - ρ² ω_k),

with γ ≤ 1 under-relaxing each pass's own step (Wang's γ; 1 is the plain Chebyshev step).

Where we differ, and why:

* Our passes are Gauss-Seidel sweeps that alternate their direction, and the
  constraints are one-sided (P = k (ρ - ρ0)⁺), so the iteration is only
  piecewise linear and ρ is not an eigenvalue bound but a measured setting
  (``RELAXATION_CHEBYSHEV_RHO``; passes, the resting pool's noise and the dam
  break's front against it are in BENCHMARKS.md). γ = 0.9 leaves the resting
  pool stiller than plain passes do (90th percentile at 4 s 0.65 cm/s against
  0.95; γ = 1: 1.07) for 7.2 passes a substep instead of 6.6 (plain: 10.4), at 6 substeps a frame
  (since frames are re-planned the pool runs at 5: CHANGELOG.md, method notes, "The pool since the re-planning").
* A pass whose largest compression came out above the one before restarts the
  sequence (that pass is kept as it is, the next one starts again at ω_S): at
  impacts the extrapolation overshoots (at ρ = 0.85, γ = 1, without the restart,
  water dropped on a clipped mesh lost particles out of the domain; with it, none).
* The colliders' share of each particle's displacement (``wall_dx``, what the
  colliders receive equal and opposite) is extrapolated with the positions, so
  the contact impulse stays the exact counterpart of what the passes moved; so is
  what the passes would have moved the solids' particles they hold (``held_dx``).

Every extrapolation is a linear combination of iterates with weights summing to
1, so a pass that conserves the particles' momentum (pairs moved equal and
opposite) keeps conserving it.
"""

from __future__ import annotations

import numpy as np

# Spectral radius ρ assumed for the passes (0 switches the acceleration off).
RELAXATION_CHEBYSHEV_RHO = 0.8
# Under-relaxation of each pass's own step inside the extrapolation (Wang's γ).
RELAXATION_CHEBYSHEV_GAMMA = 0.9
# The pass the extrapolation starts with (Wang's S): the first pass of a substep removes the
# compression the prediction made, not a contracting error, so it is kept as it is.
RELAXATION_CHEBYSHEV_DELAY = 2
# ``held_dx`` of a world without solids.
NO_HELD = np.zeros((0, 3))


class ChebyshevPasses:
    """The extrapolation of a substep's passes: :meth:`start` it for each substep, call :meth:`before`
    ahead of each pass and :meth:`after` once the pass has run and the substep is not yet converged.

    ``extrapolate(now, last, back, ω, γ)`` is the kernel that sets
    now = ω (γ (now - last) + last - back) + back in place and copies the result into ``back``
    (``relaxation_clavet2005_chebyshev_kernels.extrapolate``; passed in so this module needs no numba):
    that buffer is where the next pass's start is kept, so :meth:`before` has nothing to copy after an
    extrapolation.
    The two iterates it keeps live from one substep to the next: allocated afresh every substep,
    their page faults cost a millisecond a substep on the bench's dam break.
    """

    def __init__(self, extrapolate, rho: float | None = None, gamma: float | None = None,
                 delay: int = RELAXATION_CHEBYSHEV_DELAY):
        rho = RELAXATION_CHEBYSHEV_RHO if rho is None else rho
        self.gamma = RELAXATION_CHEBYSHEV_GAMMA if gamma is None else gamma
        self.rho2 = rho * rho
        self.delay = delay
        self._extrapolate = extrapolate
        # Two (x, wall_dx, held_dx) iterates: the one before this pass and the one before the last.
        self._bufs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.start(0)

    def start(self, n: int, n_held: int = 0) -> None:
        """Begin a substep of ``n`` particles (``n_held`` rows of ``held_dx``: n with solids, else 0)."""
        self.omega = 1.0
        self.passes = 0
        self.error = np.inf
        self._prev = -1  # which of the two buffers holds the iterate two passes back (-1: none yet)
        self._kept = False  # the last extrapolation left the coming pass's start in its buffer
        if self.rho2 > 0.0 and (not self._bufs or len(self._bufs[0][0]) != n or len(self._bufs[0][2]) != n_held):
            self._bufs = [(np.empty((n, 3)), np.empty((n, 3)), np.empty((n_held, 3))) for _ in range(2)]

    def before(self, x: np.ndarray, wall_dx: np.ndarray, held_dx: np.ndarray = NO_HELD) -> None:
        """Remember the iterate the coming pass starts from (nothing is kept while ρ = 0)."""
        if self._kept:
            self._kept = False
            return
        if self._bufs:
            from ..numerics.array_kernels import copy_rows

            bx, bw, bh = self._bufs[self._last()]
            copy_rows(x, bx)
            copy_rows(wall_dx, bw)
            if len(bh):
                copy_rows(held_dx, bh)

    def after(self, x: np.ndarray, wall_dx: np.ndarray, error: float, held_dx: np.ndarray = NO_HELD) -> None:
        """Extrapolate the pass's result ``x`` (and the colliders' share ``wall_dx``, the held particles'
        ``held_dx``) in place; ``error`` is the largest compression the pass measured (on the last
        extrapolation's result)."""
        self.passes += 1
        if not self._bufs:
            return
        if self.passes > 1 and error > self.error:
            self.passes = 1
        self.error = error
        if self.passes < self.delay:
            self.omega = 1.0
        elif self.passes == self.delay:
            self.omega = 2.0 / (2.0 - self.rho2)
        else:
            self.omega = 4.0 / (4.0 - self.rho2 * self.omega)
        if self.omega != 1.0 and self._prev >= 0:
            bx, bw, bh = self._bufs[self._prev]
            lx, lw, lh = self._bufs[self._last()]
            self._extrapolate(x, lx, bx, self.omega, self.gamma)
            self._extrapolate(wall_dx, lw, bw, self.omega, self.gamma)
            if len(bh):
                self._extrapolate(held_dx, lh, bh, self.omega, self.gamma)
            self._kept = True  # bx, bw, bh: the buffer the next pass's start goes to (below)
        self._prev = self._last()

    def _last(self) -> int:
        """The buffer of the iterate this pass started from: the one that does not hold the one before."""
        return 1 if self._prev == 0 else 0


