"""The term contract: one method, from one paper, acting on the particles during a substep.

A material model (``models``) is a declared list of terms plus its parameters and presets. Each
term lives in a file named after its method and paper (``viscosity_weiler2018.py``), its numba
kernels beside it (``viscosity_weiler2018_kernels.py``, imported when the term is built), and has
one small lifecycle, after SPlisHSPlasH's ``NonPressureForceBase`` (STYLE.md):

* built once per bake from the model's :class:`~sph_addon.core.models.base.ModelSetup`: it reads
  the parameters it names in ``parameters`` from the owned materials and packs them into
  per-material arrays (zeros for materials of other models); which materials it acts on is data
  (a parameter's value, a choice with an explicit "none"), never a module global;
* :meth:`Term.apply` once per substep, in its model's ``velocity`` or ``position`` stage (in the
  order the model lists its terms), with the substep's :class:`StepContext`: the colliders come
  sampled once for the substep (``ctx.walls``, ``boundary.walls.Walls``), and what a term gives the
  particles at a wall goes back through ``ctx.walls.received``;
* :meth:`Term.max_dt`, :meth:`Term.work_per_substep`: what it asks of the substep policy;
* :meth:`Term.frame_stats` and :meth:`Term.failure`: the frame's numbers, collected by the model;
* :meth:`Term.state_dict` / :meth:`Term.load_state_dict`: its non-array state, checkpointed under
  its name.

Scratch memory comes from ``ctx.workspace`` (:class:`Workspace`): buffers borrowed for one call
and kept from one substep to the next, so no term owns memory it uses for a moment and no page
faults are paid every substep.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

VELOCITY, POSITION = "velocity", "position"


@dataclass(frozen=True)
class ArraySpec:
    """A per-particle array a model adds to the world.

    Attributes
    ----------
    trailing : shape after the particle axis, () for one value per particle.
    dtype : numpy dtype.
    fill : value of new particles and of new columns when the array is widened.
    description : what it holds, with units.
    """

    trailing: tuple[int, ...]
    dtype: Any
    fill: float | int = 0
    description: str = ""


def per_material(setup, attr: str, dtype=np.float64, convert=float, fill=0) -> np.ndarray:
    """(n_materials,) array of parameter ``attr`` of the materials ``setup`` owns, ``fill`` elsewhere."""
    out = np.full(setup.n_materials, fill, dtype)
    for m, p in setup.materials.items():
        out[m] = convert(getattr(p, attr))
    return out


class Workspace:
    """Scratch arrays of the current particle count, lent for the length of one call.

    ``borrow(*trailing)`` yields one float64 array of shape (n, *trailing) per argument, contents
    undefined; they go back to the pool when the ``with`` block ends and are handed to the next
    borrower. The pool is emptied when the particle count changes.
    """

    def __init__(self):
        self.n = -1
        self._free: dict[tuple[int, ...], list[np.ndarray]] = {}

    def resize(self, n: int) -> None:
        if n != self.n:
            self.n = n
            self._free.clear()

    @contextmanager
    def borrow(self, *trailing: tuple[int, ...]) -> Iterator[list[np.ndarray]]:
        got = []
        for t in trailing:
            free = self._free.setdefault(t, [])
            got.append(free.pop() if free else np.empty((self.n, *t)))
        try:
            yield got
        finally:
            for t, a in zip(trailing, got):
                self._free[t].append(a)


class Term:
    """Base class of every term; subclasses set the declarations and override what they need.

    Class attributes
    ----------------
    name : the file's name (method and paper), the key of its state in checkpoints.
    citation : the paper, as in the module docstring's first line.
    stage : ``"velocity"`` (impulses on v before prediction) or ``"position"`` (constraints on the
        predicted positions).
    parameters : names of the material parameters it reads (a model listing the term declares them).
    arrays : per-particle arrays it may add (:class:`ArraySpec`; see :meth:`active_arrays`).
    """

    name: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    stage: ClassVar[str] = VELOCITY
    parameters: ClassVar[tuple[str, ...]] = ()
    arrays: ClassVar[Mapping[str, ArraySpec]] = {}

    def __init__(self, setup):
        self.setup = setup
        owned = np.zeros(setup.n_materials, bool)
        owned[list(setup.materials)] = True
        self.owned = owned

    # -- helpers ----------------------------------------------------------------------------------
    def per_material(self, attr: str, dtype=np.float64, convert=float, fill=0) -> np.ndarray:
        """:func:`per_material` of this term's setup."""
        return per_material(self.setup, attr, dtype, convert, fill)

    # -- lifecycle --------------------------------------------------------------------------------
    def link(self, terms: list[Term]) -> None:
        """See the model's other terms once they are all built (a solve that takes another term's
        implicit forces finds it here)."""

    def active_arrays(self) -> Mapping[str, ArraySpec]:
        """The arrays this bake needs (default: none of the declared ones)."""
        return {}

    def apply(self, ctx) -> None:
        """Act on the particles for one substep (``ctx``: ``models.base.StepContext``)."""

    def max_dt(self, world) -> float:
        """Longest stable substep this term allows, s (inf: no limit)."""
        return math.inf

    def accelerations(self, ctx, idx: np.ndarray, out: np.ndarray) -> None:
        """Force-based schemes (leapfrog): add the accelerations (m/s², gravity excluded) this term gives
        particles ``idx`` at the current positions into ``out`` (len(idx), 3)."""

    def particle_dt(self, world, idx: np.ndarray) -> np.ndarray | None:
        """Force-based schemes: the longest stable step of each particle ``idx``, s, or None when the
        term has no limit of its own beyond :meth:`max_dt`."""
        return None

    def work_per_substep(self, dt: float) -> float:
        """Work of one substep of ``dt`` s beyond the fixed per-substep work (neighbour search,
        collisions), in units of that fixed work (the substep policy adds the fixed work once)."""
        return 0.0

    def frame_stats(self, world) -> dict[str, int | float]:
        """The frame's numbers for the manifest (JSON-safe); counters restart."""
        return {}

    def failure(self, stats: dict) -> str | None:
        """Why the frame's statistics show a blow-up (one sentence saying what to try), or None."""
        return None

    def state_dict(self) -> dict:
        """Non-array state, JSON-safe, for checkpoints."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore what :meth:`state_dict` returned."""


class ViscosityModifier(Term):
    """A term that adds to the viscosity of the implicit viscosity solve (a yield stress, a temperature);
    the solve finds it among its model's terms and asks for its share when :attr:`acts`."""

    @property
    def acts(self) -> bool:
        return False

    def materials(self) -> np.ndarray:
        """(n_materials,) bool: the materials it adds viscosity to."""
        return np.zeros(self.setup.n_materials, bool)

    def added_viscosity(self, ctx, v: np.ndarray) -> np.ndarray:
        """(n,) kinematic viscosity added to each particle's for this substep at velocities ``v`` (n, 3), m²/s."""
        return np.zeros(ctx.n)


class ImplicitForces(Term):
    """A term whose pair forces join the implicit viscosity solve, linearised (springs, elastic stress):
    backward Euler on their force at x + θ Δt v. The solve finds it among its model's terms."""

    theta: ClassVar[float] = 1.0

    @property
    def acts(self) -> bool:
        return True

    def implicit_blocks(self, ctx):
        """(partners (n,w) int64, weights (n,w,2), directions (n,w,3), a (n,3) Δt a(x)) for this substep,
        or None when it has no pair to add (``viscosity_weiler2018_kernels``' pair-block form)."""
        return None
