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
# (BLENDER_NOTES.md section 6). cache: compiled kernels are written to
# NUMBA_CACHE_DIR so the second bake starts in well under a second.
NJIT = dict(nogil=True, fastmath=FASTMATH, cache=True)
NJIT_PARALLEL = dict(NJIT, parallel=True)
# Kernels that take another compiled function as an argument (the collider's SDF) are not
# disk-cached: numba 0.68 fails while saving their cache index ("ReferenceError: underlying
# object has vanished") when a second specialisation is compiled in the same process
# (measured: two Simulations with a box container in one process). They recompile per
# process (~1 s per collider shape).
NJIT_FUNCARG = dict(nogil=True, fastmath=FASTMATH)
NJIT_FUNCARG_PARALLEL = dict(NJIT_FUNCARG, parallel=True)

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
# 4.3 passes (exponent 1.8-2.1).
ITERATIONS_DT_EXPONENT = 2.0
# Cost of one relaxation pass relative to the rest of a substep (neighbour search, boundary terms,
# surface tension, XSPH, collisions), measured on the dam break (24,000 particles): 3.5 ms against
# 32 ms.
RELAXATION_PASS_COST = 0.11

# Largest magnitude of any number in a scene file whose field declares no bound (coordinates,
# radii, rates, velocities): 1e12 m is far beyond any scene, and cubes of ratios of such values
# (particle counts) stay finite in float64.
MAX_MAGNITUDE = 1e12
