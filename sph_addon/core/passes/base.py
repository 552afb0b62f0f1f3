"""The world pass contract: what acts on every model's particles around the schemes, in one lifecycle.

A world pass is not a model's term: it sees every particle whatever its material (heat conducts from a
jelly into the water around it, a rigid body is pushed by every liquid), so ``Simulation.step`` reads
"the passes begin, the schemes advance, the passes apply, the colliders report, the passes end":

* :meth:`WorldPass.on_emitted` — new particles of a source (a source's temperature);
* :meth:`WorldPass.begin` — before the schemes move anything (the bodies take last substep's impulses,
  Clavet 2005 Algorithm 7 stages 1-3);
* :meth:`WorldPass.apply` — after the schemes, at the substep's end positions (conduction, melting);
* :meth:`WorldPass.end` — after the colliders' reports (the bodies move to the substep's end);
* :meth:`WorldPass.removed` — which particles leave the world (outflows), with the domain box;
* :meth:`WorldPass.frame_stats`, :meth:`WorldPass.cache_fields`, :meth:`WorldPass.state_dict` /
  :meth:`WorldPass.load_state_dict` — as the terms'.

Every registered pass is built for every scene (``WORLD_PASSES``, in the order they run); one the scene
gives nothing to do is **none** for it (``active`` false): it adds no array, no field to the cache, no
statistic and no checkpoint entry, and ``Simulation.passes`` leaves it out.

The arrays the passes and the terms share across models are declared here with the one module that writes
each and the ones that read it (``WORLD_ARRAYS``; ``tests/core/test_world_passes.py`` holds the code to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np


@dataclass(frozen=True)
class WorldArray:
    """A per-particle array that passes and terms of several models share.

    name : the key in the state's arrays; writer : the module that writes it (a pass or a term's
    file name); readers : the modules that read it; unit : SI or °C; description : what it holds;
    adders : other modules that add their share to what the writer wrote.
    """

    name: str
    writer: str
    readers: tuple[str, ...]
    unit: str
    description: str
    adders: tuple[str, ...] = ()


WORLD_ARRAYS: tuple[WorldArray, ...] = (
    WorldArray("temperature", "heat", ("phase",), "°C",
               "each particle's temperature, conducted between particles and from held surfaces; set by its "
               "source on emission (present when some material conducts)"),
    WorldArray("melt", "phase", ("elasticity_becker2009", "contact_macklin2014"), "",
               "the melt fraction φ, 0 solid to 1 liquid: an elastic particle's elastic energy is weighed by "
               "1 - φ and melting rest partners are kept apart in proportion to φ (present when something "
               "melts or solidifies)"),
    WorldArray("liquid_push", "relaxation_clavet2005", ("elasticity_becker2009",), "m/s",
               "what a liquid's density relaxation would have moved a solid's particle, handed to the solid's "
               "own solve as a velocity at the next substep; the sph liquid adds the reaction to its pair forces",
               adders=("density_pressure_desbrun1996",)),
    WorldArray("grid_push", "pressure_projection_zhu2005", ("elasticity_becker2009",), "m/s",
               "the velocity change a liquid's grid projection gave a solid's particle (solids are one fluid with "
               "the liquid on its cells), handed to the solid's own solve as a velocity at the next substep"),
)


@dataclass(frozen=True)
class PassSetup:
    """What a pass is built from: the validated scene, the particle state, the scene's colliders (in the
    scene's order) and the mesh distance fields' cache (None: build every field)."""

    scene: Any
    state: Any
    colliders: list
    sdf_cache: Any = None


class WorldPass:
    """Base class of the world passes: every hook does nothing, so a pass overrides only its own."""

    name: ClassVar[str] = ""
    checkpointed: ClassVar[bool] = False  # its state_dict goes into checkpoints under its name
    active: bool = False

    @classmethod
    def build(cls, setup: PassSetup) -> WorldPass:
        """The pass for a scene (``Simulation`` builds every registered pass, before the sources emit)."""
        raise NotImplementedError

    def on_emitted(self, state, new: slice, source: int) -> None:
        """Particles ``new`` were just emitted by source ``source``."""

    def begin(self, frame0: float, frame1: float, dt: float, gravity: np.ndarray) -> None:
        """Before the schemes: the substep runs from (fractional) frame ``frame0`` to ``frame1``, ``dt`` s."""

    def apply(self, state, nbr: np.ndarray, count: np.ndarray, dt: float, frame: float, walls=None) -> None:
        """After the schemes, at the substep's end positions (``frame``), with the substep's colliders as
        every consumer asks them (``boundary.walls.Walls``; None: the scene has no collider)."""

    def end(self) -> None:
        """After the colliders' reports of the substep."""

    def removed(self, state, frame: float) -> np.ndarray | None:
        """A mask of the particles that leave the world at ``frame``, or None for none."""
        return None

    def frame_stats(self, state) -> dict:
        return {}

    def cache_fields(self, state) -> dict:
        """Extra per-particle fields for the particle frames: name -> (values, PLY dtype)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """The pass's non-array state for a checkpoint (JSON-safe)."""
        return {}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""
