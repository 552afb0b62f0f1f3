"""Numerical options kept in one place.

Every numba kernel takes its options from here (``@njit(**config.NJIT)``), so a
change of policy (fastmath, caching) is one edit and a test can check that no
module hard-codes them.
"""

from __future__ import annotations

import numpy as np

# fastmath would let LLVM reassociate sums: results would then differ between
# machines and between serial and parallel builds, and "same scene, same cache"
# (DESIGN.md section 6) would no longer hold. Off.
FASTMATH = False

# nogil: Blender's UI thread must keep ticking while a worker runs a kernel
# (BLENDER_NOTES.md section 6). cache: compiled kernels are written to a folder per version of
# the kernel sources (kernel_cache.py) so the second bake starts in well under a second.
NJIT = dict(nogil=True, fastmath=FASTMATH, cache=True)
NJIT_PARALLEL = dict(NJIT, parallel=True)
# No package kernel takes another compiled function as an argument: numba 0.68 cannot cache those
# (saving the index fails with "ReferenceError: underlying object has vanished" once a second
# specialisation is compiled in a process), nor closures over jitted functions, so they would
# recompile in every process. Registries resolve such choices to an integer code instead
# (colliders/sdf_dispatch.py, surface/fields.py).
# A dispatcher on such a code, inlined by numba into every kernel that calls it. As an ordinary
# call LLVM keeps it out of line (six SDFs are too large to inline), and one call per particle
# made collide 1.5x and distances 2x slower than calling the SDF directly (400,000 particles
# against a box container); inlined, they run as fast as before.
NJIT_INLINE = dict(NJIT, inline="always")

# Storage precision for particle state. Positions and velocities are float64:
# the position-based integrator forms v = (x - x_prev) / dt, which loses ~3
# digits to cancellation, and float32 positions would leave 4 significant digits
# of velocity at dt = 1/300 s. Cache files store float32.
REAL = np.float64

# Default memory budget for a bake (bytes). A request whose estimate exceeds it
# is refused before anything is allocated; the scene may raise it.
DEFAULT_MEMORY_BUDGET = 8 * 1024**3

# Relaxation passes per substep grow as (Δt)^exponent at a given flow (ViscoelasticModel.
# expected_iterations); measured on the dam break at 2, 3 and 6 substeps per frame: 32, 15 and
# 4.3 passes (exponent 1.8-2.1); with the passes accelerated (terms/relaxation_clavet2005_chebyshev.py),
# frames 3-12: 27.4, 13.2 and 3.8 (39.3, 18.9 and 5.2 plain), the same exponent (1.8).
ITERATIONS_DT_EXPONENT = 2.0
# Cost of one relaxation pass relative to the rest of a substep (neighbour search, boundary terms,
# surface tension, XSPH, collisions), measured on the dam break (24,000 particles): 3.5 ms against
# 32 ms. Re-measured after the passes were accelerated and the fixed work shrank: 3.0 against ~19 ms
# (0.16); with 0.16 the bench's dam break takes 175 substeps instead of 160 in the same time (5.45
# against 5.52 s), so the constant stays.
RELAXATION_PASS_COST = 0.11
# Relaxation passes per substep before one was measured (the first frame): this factor times the
# compression gravity adds in a substep (g Δt² / spacing) over the density error. Measured at
# 1/180 s, 1 % error: the 0.5 m pool at 2.5 cm needs 10.4 passes (8 x 0.012 / 0.01 = 9.6), the dam
# break at 5 cm 4.3 (4.8); the pool at 0.1 % error 80 (96). Taken as 1 pass, as it was, the pool's
# first frame took 2 substeps, fell freely, needed 87 passes a substep in the next frame and threw
# particles up at 1 m/s (6 substeps now, 0.36 m/s). Those were plain passes; accelerated ones need
# about a third fewer (the pool 7.1), so the estimate now errs towards more substeps in the first frame.
FIRST_FRAME_PASSES = 8.0
# A frame keeps the previous frame's substep count unless another count is estimated cheaper by
# more than this share. The estimate feeds on the passes the last substep took, which depend on the
# count chosen: without a margin a pool at rest alternated 4 / 5 substeps every frame, and the
# compression the relaxation settles at depends on the substep, so the whole column breathed
# (90th percentile speed 2.8 cm/s after 4 s in a 0.25 m pool; CHANGELOG.md, "a shallow pool breathing").
SUBSTEP_HYSTERESIS = 0.1
# A frame's substeps are planned from the last frame's passes; a substep that cost more than this
# factor times the plan's estimate has what is left of its frame planned again
# (Simulation.advance_frame). The million-particle dam break's second frame, planned from a column
# still at rest, took 3 substeps of 73 passes each; re-planned, 7 of 21 (30.9 -> 22.6 s). Twice
# leaves ordinary frame-to-frame swings of the passes (10 against 7 estimated) alone.
REPLAN_COST = 2.0

# Largest magnitude of any number in a scene file whose field declares no bound (coordinates,
# radii, rates, velocities): 1e12 m is far beyond any scene, and cubes of ratios of such values
# (particle counts) stay finite in float64.
MAX_MAGNITUDE = 1e12
