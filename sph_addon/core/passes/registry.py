"""The world passes of a bake, in the order they run: the one list a pass is added to (``passes.base``)."""

from __future__ import annotations

from ..sources.outflows import Outflows
from .base import WorldPass
from .bodies import Bodies
from .heat import Heat
from .phase import Phase

# Heat before phase: a substep's melting reads the temperatures conducted in it.
WORLD_PASSES: dict[str, type[WorldPass]] = {cls.name: cls for cls in (Heat, Phase, Bodies, Outflows)}
