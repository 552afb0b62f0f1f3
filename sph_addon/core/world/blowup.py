"""Blow-ups caught by more than NaN and the speed limit: energy, travel per substep, flying apart.

A simulation that has become unstable does not always produce NaN or cross
``simulation.max_speed``: stiff springs can fill a tank with particles at
30 m/s, and a block sent at 1e4 m/s into a wall can be stopped dead by the
collision in one substep, and either bake used to exit 0. Each check below
turns one such failure into a :class:`SimulationError` naming the frame (exit 3,
the cache up to the frame before intact):

* **Energy without a source.** The mechanical energy E = Σ m (|v|²/2 - g·x) of
  a closed liquid can only fall (viscosity, collisions and the relaxation
  dissipate), but for what its surface energy γ A turns into motion: a cube of
  liquid with a strong surface tension rounds off, and the surface it loses
  moves it. The watch keeps a budget: E at the first frame plus the surface
  energy then (γ times the free area each particle carries, as the surface
  tension term measures it: ``terms.surface_tension_brackbill1992.surface_energies``), plus
  both energies of every particle at the frame it was born (plus the lift of an
  inflow's nozzle, m |g| L), plus the work moving colliders did on the
  particles (-m J·v - m L·ω from their contact reports, J and L the impulse and
  torque they received; a dynamic body counts its own, substep by substep at its
  velocity then: ``passes.bodies.Body.work``). The surface energy counts as a store that can all be
  released, never as a charge when the measured area grows: the measure is not
  conserved (the cube above, at a stable step, measured 18 % more area within
  ten frames while its kinetic energy stayed under 1 % of its surface energy).
  A frame whose E exceeds the budget by more than the scene's energy scale (the
  particles' mass times max(|g| H, (1 m/s)²/2), H the height of the domain, or
  of the first frame's particles plus 1 m) failed. A
  deforming mesh's surface velocity is unknown, so scenes with one skip this
  check.
* **Travel per substep.** A particle that moves more than four support radii in
  one substep skips every neighbour and every collider shell in between: its
  collisions are not resolved, they stop it dead or let it tunnel. Checked at
  the start of each frame with the substeps chosen (the cap of the automatic
  rule, or the fixed count, may be too few).
* **Flying apart.** When more than :data:`ISOLATED_SHARE` of at least
  :data:`MIN_PARTICLES` particles have no neighbour within h, the material has
  turned into a gas.
* **The models' own bounds** (``MaterialModel.failure``): e.g. a mean density
  error ten times its target.

The budget is part of the checkpoint, so a resumed bake fails where the
uninterrupted one would.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SimulationError
from ..models import SOLVERS
from ..terms.surface_tension_brackbill1992 import SurfaceTensionBrackbill1992, csf_tension
from .diagnostics import material_densities

# Largest travel of a particle in one substep, in support radii: beyond it the neighbours between its
# start and its end are never seen. Not one radius: continuous collision resolves a jet crossing a
# shell in one substep (test_mesh_collider's 20 m/s jet at 4 substeps moves 2.1 radii a substep), so
# only what no collision or pressure can resolve stops the bake.
MAX_TRAVEL = 4.0
# A frame fails when more than this share of the particles has no neighbour within h ...
ISOLATED_SHARE = 0.9
# ... and there are at least this many particles (a handful of droplets is not a blow-up).
MIN_PARTICLES = 100
# Floor of the energy scale per kg, J/kg: (1 m/s)²/2, so a scene without gravity has one.
MIN_SPECIFIC_ENERGY = 0.5


def angular_velocity(r0: np.ndarray, r1: np.ndarray, dt: float) -> np.ndarray:
    """(3,) rad/s turning rotation matrix ``r0`` into ``r1`` in ``dt`` s (axis times angle over dt)."""
    rel = r1 @ r0.T
    angle = math.acos(max(-1.0, min(1.0, 0.5 * (np.trace(rel) - 1.0))))
    axis = np.array([rel[2, 1] - rel[1, 2], rel[0, 2] - rel[2, 0], rel[1, 0] - rel[0, 1]])
    norm = float(np.linalg.norm(axis))
    if angle == 0.0 or norm == 0.0:
        return np.zeros(3)
    return axis / norm * angle / dt


class BlowUpWatch:
    """The checks of the module docstring for one simulation; ``Simulation`` calls them every frame."""

    def __init__(self, scene, gravity: np.ndarray, h: float, energy_check: bool):
        self.scene = scene
        self.gravity = np.asarray(gravity, np.float64)
        self.h = h
        self.energy_check = energy_check
        self.densities = material_densities(scene.materials)
        # γ/K per material (N/m): the surface energy a surface tension stores (0: none).
        self.tension = np.array([csf_tension(m.params.surface_tension, scene.particle_spacing, h)
                                 if SurfaceTensionBrackbill1992 in SOLVERS[m.model].terms else 0.0
                                 for m in scene.materials])
        self.budget: float | None = None   # J; None until the first frame is seen
        self.scale_per_kg = 0.0              # J/kg
        self.seen_id = 0                     # particles with smaller ids are in the budget

    # -- state ------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"budget": self.budget, "scale_per_kg": self.scale_per_kg, "seen_id": self.seen_id}

    def load_state_dict(self, state: dict | None) -> None:
        """Restore :meth:`state_dict`; a checkpoint from before the watch starts a new budget."""
        state = state or {}
        self.budget = None if state.get("budget") is None else float(state["budget"])
        self.scale_per_kg = float(state.get("scale_per_kg", 0.0))
        self.seen_id = int(state.get("seen_id", 0))

    # -- checks -----------------------------------------------------------------------------
    def energies(self, x: np.ndarray, v: np.ndarray, material: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(n,) mechanical energy m (|v|²/2 - g·x), J, and (n,) masses, kg, of the particles."""
        from ..numerics.array_kernels import mechanical_energies

        # Written out in a kernel, not einsum: einsum's summation order varies with numpy's version and
        # SIMD dispatch, and the budget is saved in checkpoints that must not depend on either.
        e, m = np.empty(len(x)), np.empty(len(x))
        mechanical_energies(np.ascontiguousarray(x, np.float64), np.ascontiguousarray(v, np.float64),
                            np.ascontiguousarray(material), np.ascontiguousarray(self.densities, np.float64),
                            self.scene.particle_spacing**3, np.ascontiguousarray(self.gravity, np.float64), e, m)
        return e, m

    def surface_energies(self, search, x: np.ndarray, material: np.ndarray) -> np.ndarray:
        """(n,) surface energy of each particle, J (0 where no material has surface tension).

        ``search``: a ``neighbors.NeighborSearch`` whose buffers may be overwritten (the simulation's,
        which sorts again at its next substep); the particles' arrays are not reordered.
        """
        if not len(x) or not self.tension.any() or not self.energy_check:
            return np.zeros(len(x))
        from ..terms.surface_tension_brackbill1992 import surface_energies

        order = search.sort(x)
        xs = x[order]
        nbr, count = search.lists(xs, self.h)
        out = np.empty(len(x))
        out[order] = surface_energies(xs, nbr, count, material[order], self.tension, self.scene.particle_spacing,
                                      self.h)
        return out

    def check_travel(self, frame: int, v: np.ndarray, dt: float, substeps: int, fixed: bool) -> None:
        """Refuse a frame whose fastest particle would cross more than MAX_TRAVEL support radii per substep."""
        if not len(v):
            return
        speed = float(np.sqrt(np.max(np.einsum("ij,ij->i", v, v))))
        travel = speed * dt
        if travel <= MAX_TRAVEL * self.h:
            return
        field = "simulation.substeps" if fixed else "simulation.max_substeps"
        need = math.ceil(substeps * travel / (MAX_TRAVEL * self.h))
        raise SimulationError(frame, f"a particle at {speed:.3g} m/s would move {travel:.3g} m in one of the "
                                     f"{substeps} substeps, more than {MAX_TRAVEL:g} support radii "
                                     f"({MAX_TRAVEL:g} x {self.h:g} m): "
                                     f"its collisions cannot be resolved; raise {field} to at least {need} or "
                                     "lower the speeds")

    def check_frame(self, frame: int, x: np.ndarray, v: np.ndarray, material: np.ndarray, ids: np.ndarray,
                    next_id: int, collider_work: float, nozzle_lift: float, count: np.ndarray | None,
                    search) -> None:
        """The end-of-frame checks: energy against the budget, and flying apart (``count``: the
        neighbour counts of the frame's last substep, in the same order as ``x``; None if unknown).

        ``collider_work`` (J) is what moving colliders did on the particles during the frame;
        ``nozzle_lift`` (J/kg) is the most an inflow's nozzle can lift a particle after its birth;
        ``search``: for the surface energy (:meth:`surface_energies`).
        """
        isolated = float(np.count_nonzero(count == 0)) / len(count) \
            if count is not None and len(count) == len(x) >= MIN_PARTICLES else 0.0
        e, m = self.energies(x, v, material)
        born = ids >= self.seen_id
        # The exact sum rounded once (math.fsum's result, array_kernels.exact_sum): the same budget
        # whatever order numpy would sum in.
        if self.budget is None:
            self.budget = _exact_sum(e) + _exact_sum(self.surface_energies(search, x, material))
            height = self._height(x)
            self.scale_per_kg = max(float(np.linalg.norm(self.gravity)) * height, MIN_SPECIFIC_ENERGY)
        else:
            surface = _exact_sum(self.surface_energies(search, x, material)[born]) if born.any() else 0.0
            self.budget += _exact_sum(e[born]) + surface + nozzle_lift * _exact_sum(m[born]) + collider_work
        self.seen_id = int(next_id)
        total = _exact_sum(e)
        scale = self.scale_per_kg * _exact_sum(m)
        if self.energy_check and total - self.budget > scale:
            raise SimulationError(frame, f"the particles' energy grew to {total:.3g} J, {total - self.budget:.3g} J "
                                         f"more than the start (its surface energy included), the sources and the "
                                         f"moving colliders supplied "
                                         f"(a blow-up); try more substeps, a lower youngs_modulus or lower speeds")
        if isolated > ISOLATED_SHARE:
            raise SimulationError(frame, f"{isolated:.0%} of the particles have no neighbour within "
                                         f"{self.h:g} m: the material flew apart (a blow-up); try more "
                                         "substeps or a lower youngs_modulus")

    def _height(self, x: np.ndarray) -> float:
        """Height (m) along gravity that the particles can fall: the domain's, or the first frame's + 1 m."""
        g = self.gravity
        gn = float(np.linalg.norm(g))
        down = g / gn if gn > 0 else np.array([0.0, 0.0, -1.0])
        dom = self.scene.domain
        if dom is not None:
            corners = np.array([[a, b, c] for a in (dom["min"][0], dom["max"][0])
                                for b in (dom["min"][1], dom["max"][1]) for c in (dom["min"][2], dom["max"][2])])
            along = corners @ down
        elif len(x):
            heights = np.einsum("ij,j->i", x, down)  # not x @ down: BLAS threads (response.placed_distances)
            along = np.concatenate([heights, [float(heights.max()) + 1.0]])
        else:
            return 1.0
        return float(along.max() - along.min())


def collider_work(colliders, contacts, frame: float, fps: float, particle_mass: float,
                  given: dict[int, float] | None = None) -> float:
    """Work (J) the moving colliders did on the particles over the frame from ``frame`` to ``frame + 1``.

    ``contacts`` are the colliders' reports (impulse J and torque L they received, per unit
    particle mass, L about their origin at the frame's end); the particles received -J and -L,
    so the work is -m (J·v + L·ω) with the collider's mean velocity v and angular velocity ω over
    the frame. ``particle_mass`` (kg) is the heaviest particle's, so the estimate errs high.
    ``given``: collider index -> the work (J) a dynamic body counted itself, substep by substep at its
    velocity then (``passes.bodies.Body.work``): a heavy body slowed by the liquid within the frame
    gives it what its frame's end velocity would not show (a 100 kg box thrown at 99 m/s into water).
    """
    work = 0.0
    dt = 1.0 / fps
    given = given or {}
    for k, (c, report) in enumerate(zip(colliders, contacts)):
        if k in given:
            work += max(0.0, given[k])
            continue
        if not c.moving:
            continue
        r0, t0 = c.transform(frame)
        r1, t1 = c.transform(frame + 1)
        v = (np.asarray(t1) - np.asarray(t0)) / dt
        omega = angular_velocity(np.asarray(r0), np.asarray(r1), dt)
        # A collider that took energy out does not pay for another that put energy in.
        work += max(0.0, -particle_mass * (float(np.dot(report.impulse, v)) + float(np.dot(report.torque, omega))))
    return work


def _exact_sum(values: np.ndarray) -> float:
    from ..numerics.array_kernels import exact_sum

    return float(exact_sum(np.ascontiguousarray(values, np.float64)))
