"""Clavet 2005's double density relaxation (thesis Algorithm 3, eqs. 4.1-4.6), run to a tolerance:
the liquid's incompressibility, as constraints on the predicted positions.

Units (derivations in ``lattice`` and below). The artist sets the largest mean compression
(``density_error``, as a share of Clavet's density Σ (1-q)²) and a cap on the passes
(``max_iterations``); Clavet's constants follow from the spacing s, the radius h and the substep Δt:

* the relaxation runs on Clavet's near density ρ^near = Σ (1-q)³ alone (eq. 4.3), ρ0^near its sum
  over the simple cubic lattice every source fills (a fill is at rest); Clavet's density Σ (1-q)²
  (eq. 4.1) has no gain (``RELAXATION`` = 0): a resting liquid settles into the cubic lattice with
  every other column shifted by s/2, where Σ (1-q)² is 2 % smaller at the same number density and
  the pool packed 1.6 % more particles than it was filled with (Σ (1-q)³: 0.5 %);
* P^near = k^near (ρ^near - ρ0^near)⁺ (eq. 4.4 made one-sided): a liquid has no tension of its own,
  so without surface tension it spreads to a film; Clavet's two-sided form gives every liquid a
  cohesion that grows with k, i.e. with the substep and the spacing;
* k^near Δt² = 0.45 h / (3 Σ (1-q)⁴) (:func:`relaxation_gains`): under half the Newton step of one
  particle's constraint per pass, each pair's push capped at 0.01 h
  (``relaxation_clavet2005_kernels.PAIR_CAP``); passes repeat until the target is met, which makes
  the compression a property of the material rather than of k, Δt and s, each extrapolated along
  the last two (Chebyshev, ``relaxation_clavet2005_chebyshev``); the density error keeps its meaning
  (Clavet's density's), the near density moving ``lattice.near_error_ratio`` times as much;
* flat walls mirror the liquid, other colliders add the fluid missing behind them
  (``ctx.walls.relaxation_walls``: ``boundary.mirror``, ``boundary.lattice_fill``), and what the
  passes moved at the walls goes to the colliders (``ctx.walls.received``).

Acts on every material of its model (a liquid's incompressibility has no "none"). A solid's particles
(a model that ``keeps_shape``) count in the liquid's densities but the passes do not move them: what
they would have moved each (``held_dx``) goes to the solid's own solve as a velocity (``LIQUID_PUSH``).
"""

from __future__ import annotations

import logging

import numpy as np

from ..numerics.lattice import near_error_ratio, offsets, rest_densities
from .base import POSITION, Term
from .relaxation_clavet2005_chebyshev import NO_HELD, ChebyshevPasses

log = logging.getLogger(__name__)

# Under-relaxation of the Gauss-Seidel passes (see the module docstring). The overlapping
# neighbourhoods make the single-constraint Newton step far too long: measured on a 0.5 m
# pool at h = 2 s, ω = 0.5 (with ω_near = 0.5) blows up within 3 frames, ω = 0.25 still
# rattles the bottom layers; 0.2 and 0.1 hold it (the old code's stable limit,
# Δt² (k + k_near) <= 0.12 h, is the same bound).
# The relaxation runs on the near density alone: Clavet's density has no gain, and
# the near density's share is larger. 0.45 with the per-pair cap (``relaxation_clavet2005_kernels.PAIR_CAP``)
# holds the pool, the dam break's impacts, the paddle and the rubber cube (their core tests pass; 0.55
# threw a burst to 8 cm/s in the resting pool: CHANGELOG.md, method notes, "The liquid's own packing").
RELAXATION = 0.0
RELAXATION_NEAR = 0.45

# The per-particle array (m/s, declared by the solid's term, ``elasticity_becker2009``) that receives the
# velocity the passes would have given each of a solid's particles in the last substep.
LIQUID_PUSH = "liquid_push"


def relaxation_gains(spacing: float, h: float) -> tuple[float, float]:
    """k Δt² and k^near Δt² (m per unit density error) of one under-relaxed Newton step."""
    a = 1.0 - np.linalg.norm(offsets(spacing, h), axis=1) / h
    return RELAXATION * h / (2.0 * float(np.sum(a**2))), RELAXATION_NEAR * h / (3.0 * float(np.sum(a**4)))


def density_errors(sums: np.ndarray, counts: np.ndarray, tops: np.ndarray, targets: np.ndarray,
                   owned: np.ndarray) -> tuple[float, float, bool]:
    """The worst material's mean compression over its compressed particles, the largest compression,
    and whether every material is under its target (mean) and 10 times it (largest).

    ``sums``, ``counts``, ``tops`` : per material, the sum and number of the positive compressions
    (ρ/ρ0 - 1)⁺ and the largest (``relaxation_clavet2005_kernels.compression_sums``); ``targets`` : per-material
    density error; ``owned`` : per-material bool, the materials the test covers. A material without
    compressed particles counts as 0 in both figures.
    """
    err_mean = err_max = 0.0
    done = True
    for m in np.flatnonzero(owned):
        mean = float(sums[m] / counts[m]) if counts[m] else 0.0
        top = float(tops[m])
        err_mean, err_max = max(err_mean, mean), max(err_max, top)
        done &= mean <= targets[m] and top <= 10.0 * targets[m]
    return err_mean, err_max, bool(done)


# A frame fails when a substep ends with a material's mean compression this many times its target
# (``failure``): the relaxation's passes are capped, so a liquid squeezed that far has come apart.
DENSITY_BLOWUP = 10.0
# ... and at least this compression (10 %), so a strict target (0.1 %) with a low iteration cap is
# reported as capped, not as a blow-up, where the liquid still holds together.
DENSITY_BLOWUP_FLOOR = 0.1


class RelaxationClavet2005(Term):
    """Relaxation passes to the materials' density error (position stage, last)."""

    name = "relaxation_clavet2005"
    citation = "S. Clavet, P. Beaudoin, P. Poulin, Particle-based Viscoelastic Fluid Simulation, SCA 2005"
    stage = POSITION
    parameters = ("density_error", "max_iterations")

    def __init__(self, setup):
        from . import relaxation_clavet2005_chebyshev_kernels, relaxation_clavet2005_kernels

        super().__init__(setup)
        self.relaxation = relaxation_clavet2005_kernels.double_density_relaxation
        self.compression_sums = relaxation_clavet2005_kernels.compression_sums
        s, h = setup.spacing, setup.h
        rho0, rho0_near = rest_densities(s, h)
        gain, gain_near = relaxation_gains(s, h)
        # Materials of other models get zero gains: they exert no pressure of their own.
        self.gain = np.where(self.owned, gain, 0.0)
        self.gain_near = np.where(self.owned, gain_near, 0.0)
        self.rho0 = np.full(setup.n_materials, rho0)
        self.rho0_near = np.full(setup.n_materials, rho0_near)
        # density_error is Clavet's density's error; the passes measure the near density's.
        self.near_ratio = near_error_ratio(s, h)
        self.target = self.per_material("density_error")
        # A solid's particles are held where their own solve put them (``apply`` says why).
        self.held = np.zeros(setup.n_materials, np.uint8)
        self.held[:len(setup.solids)] = setup.solids
        self.held[self.owned] = 0
        # Every material's density (any model's): pairs of different masses share their displacements by
        # mass; with one density and no solid the kernel gets none and keeps the plain whole shares.
        mass = np.asarray(setup.densities, np.float64)
        self.mass = mass if len(np.unique(mass)) > 1 or self.held.any() else np.zeros(0)
        self.cap = int(max((p.max_iterations for p in setup.materials.values()), default=1))
        # Iterations the last substep needed and its length: the cost model's estimate.
        self.last_iterations, self.last_dt = 1, 0.0
        self.accel = ChebyshevPasses(relaxation_clavet2005_chebyshev_kernels.extrapolate)
        self.rho = self.rho_near = np.zeros(0)
        self._reset_stats()

    def expected_iterations(self, dt: float) -> float:
        """Relaxation passes a substep of ``dt`` s is expected to need, from the last one measured.

        The compression a substep must undo grows with Δt² (gravity and impacts
        predict x + Δt v), and each pass removes a fixed share of it; measured on
        the dam break, passes grow about linearly with Δt (``config.ITERATIONS_DT_EXPONENT``).

        Before any substep was measured (a bake's first frame): from the compression gravity adds
        per substep, g Δt² in spacings, over the density error (``config.FIRST_FRAME_PASSES``).
        """
        from ..numerics import config

        if self.last_dt <= 0.0:
            target = float(np.min(self.target[self.owned]))
            compression = self.setup.gravity * dt**2 / self.setup.spacing
            return max(1.0, config.FIRST_FRAME_PASSES * compression / target)
        return max(1.0, self.last_iterations * (dt / self.last_dt) ** config.ITERATIONS_DT_EXPONENT)

    def work_per_substep(self, dt: float) -> float:
        """The passes a substep of ``dt`` is expected to need (:meth:`expected_iterations`), each costing
        ``config.RELAXATION_PASS_COST`` of the fixed work (measured): shorter substeps need fewer."""
        from ..numerics import config

        return config.RELAXATION_PASS_COST * self.expected_iterations(dt)

    def apply(self, ctx) -> None:
        """Relaxation passes until every material's mean compression over its compressed particles
        (near density, in Clavet's density's units: ``lattice.near_error_ratio``) is at most its
        ``density_error`` and the largest at most 10 times that. Averaging over the compressed ones
        only (DFSPH counts the surface as 0) makes the target the volume the bulk loses. At least one
        pass runs; a substep that reaches the cap is counted and logged, never passed off as converged.
        """
        x = ctx.x
        if len(self.rho) != ctx.n:
            self.rho, self.rho_near = np.zeros(ctx.n), np.zeros(ctx.n)
        if ctx.walls is not None:
            planes, plane_of, walls = ctx.walls.relaxation_walls(x)
        else:
            from ..boundary.mirror import relaxation_walls

            planes, plane_of, walls = relaxation_walls(x, None, ctx.spacing, ctx.h)
        mat = ctx.material
        n_mat = len(self.owned)
        sums, counts, tops = np.empty(n_mat), np.empty(n_mat, np.int64), np.empty(n_mat)
        # Passes alternate their sweep direction, and so do successive substeps' first passes: a
        # one-way Gauss-Seidel order drifts particles along it (measured on a resting pool: the
        # layer on the first-swept wall moved at 5.5 cm/s, the others at 1-3 cm/s).
        parity = self.stats["substeps"] % 2
        accel = self.accel
        # What the passes would move a solid's particles goes to its own solve, as a velocity (``LIQUID_PUSH``).
        held_dx = ctx.arrays.get(LIQUID_PUSH, NO_HELD) if self.held.any() else NO_HELD
        held_dx.fill(0.0)
        accel.start(ctx.n, len(held_dx))
        it = 0
        with ctx.workspace.borrow((3,), (3,)) as (wall_dx, x_ref):
            wall_dx.fill(0.0)
            np.copyto(x_ref, x)
            while it < self.cap:
                accel.before(x, wall_dx, held_dx)
                self.relaxation(x, ctx.nbr, ctx.count, mat, self.gain, self.gain_near, self.rho0, self.rho0_near,
                                ctx.h, ctx.bucket_start, ctx.colour, ctx.colour_buckets, ctx.colour_units, x_ref,
                                *walls, planes, plane_of, (it + parity) % 2 == 1, self.mass, self.held, held_dx,
                                self.rho, self.rho_near, wall_dx)
                it += 1
                self.compression_sums(self.rho_near, mat, self.rho0_near, self.owned, sums, counts, tops)
                err_mean, err_max, done = density_errors(sums, counts, tops, self.target * self.near_ratio,
                                                         self.owned)
                if done:
                    break
                if it < self.cap:  # the last pass's result stays as measured
                    accel.after(x, wall_dx, err_max, held_dx)
            else:
                self.stats["capped"] += 1
                log.warning("density relaxation stopped at its cap of %d passes with mean density error %.3g "
                            "(raise max_iterations or the substeps)", self.cap, err_mean / self.near_ratio)
            if ctx.walls is not None:
                ctx.walls.received(x, wall_dx, ctx.dt)
        held_dx /= ctx.dt
        self.last_iterations, self.last_dt = it, ctx.dt
        st = self.stats
        st["iterations"] += it
        st["substeps"] += 1
        st["iterations_max"] = max(st["iterations_max"], it)
        st["error_mean"] = max(st["error_mean"], err_mean / self.near_ratio)
        st["error_max"] = max(st["error_max"], err_max / self.near_ratio)

    def _reset_stats(self) -> None:
        self.stats = {"iterations": 0, "substeps": 0, "iterations_max": 0, "capped": 0, "error_mean": 0.0,
                      "error_max": 0.0}

    def frame_stats(self, world) -> dict[str, int | float]:
        """Relaxation passes (mean and largest per substep, substeps that hit the cap) and the density
        errors they reached (largest over the frame's substeps of the material-mean and of the
        per-particle error)."""
        st = self.stats
        out = {"density_iterations": round(st["iterations"] / max(st["substeps"], 1), 3),
               "density_iterations_max": st["iterations_max"], "density_capped": st["capped"],
               "density_error_mean": round(st["error_mean"], 6), "density_error_max": round(st["error_max"], 6)}
        self._reset_stats()
        return out

    def failure(self, stats: dict) -> str | None:
        """A blow-up when a substep ended with its material-mean compression over DENSITY_BLOWUP times
        the largest target (and DENSITY_BLOWUP_FLOOR): the relaxation could not hold the liquid together."""
        limit = max(DENSITY_BLOWUP * float(self.target[self.owned].max(initial=0.0)), DENSITY_BLOWUP_FLOOR)
        if stats["density_error_mean"] > limit:
            return (f"the mean density error reached {stats['density_error_mean']:.1%}, over {limit:.0%} (a "
                    "blow-up: the relaxation could not hold the liquid together); try more substeps or a higher "
                    "max_iterations")
        return None

    def state_dict(self) -> dict:
        """The cost model's last measurement, so a resumed bake chooses the same substeps."""
        return {"last_iterations": self.last_iterations, "last_dt": self.last_dt}

    def load_state_dict(self, state: dict) -> None:
        self.last_iterations = int(state.get("last_iterations", 1))
        self.last_dt = float(state.get("last_dt", 0.0))
