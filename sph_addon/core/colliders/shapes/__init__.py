"""Collider shapes: signed distance fields (analytic and mesh-sampled), their cache, clipping and dispatch."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...numerics import config


@dataclass(frozen=True)
class Shape:
    """A collider's signed distance function with its data (see sdf_analytic for the signature).

    ``code`` is the function's entry in ``sdf_dispatch.SDF_CODES``, resolved once here: the
    collision kernels take it instead of the function (``sdf_dispatch.sdf_eval``), which lets
    numba cache them on disk. A function missing from that table is refused (ValueError).
    """

    sdf: Callable
    params: np.ndarray
    grid: np.ndarray = field(default_factory=lambda: np.zeros((1, 1, 1), np.float32))
    build_s: float = 0.0
    # Largest distance of the surface from the local origin, m (inf: unbounded, a plane). A spinning
    # collider's surface moves at up to |ω| times this (Simulation.substeps_for_frame).
    radius: float = math.inf
    code: int = field(init=False)

    def __post_init__(self) -> None:
        from .sdf_dispatch import SDF_CODES

        code = SDF_CODES.get(self.sdf)
        if code is None:
            raise ValueError(f"{getattr(self.sdf, '__name__', self.sdf)!r} has no code in "
                             f"colliders/sdf_dispatch.py (SDF_FUNCTIONS): add it there and to sdf_eval")
        object.__setattr__(self, "code", code)


@dataclass(frozen=True)
class BuildContext:
    """What a collider builder needs besides its own parameters.

    Attributes
    ----------
    base_dir : folder of the scene file; relative mesh paths start here.
    where : JSON path of the collider for messages, e.g. ``colliders[1]``.
    spacing : particle spacing, m (automatic cell sizes and thicknesses derive from it).
    frame : the frame whose shape is wanted (deforming meshes have one per frame).
    memory_budget : bytes; a distance grid over it is refused.
    sdf_cache : ``sdf_cache.SDFCache`` reusing fields across bakes and frames, or None.
    reach : (lo, hi) box of the local frame particles can reach over the bake, m
        (``reach.domain_in_local_frame``); None: unbounded. Mesh grids are clipped to it.
    """

    base_dir: Path = Path(".")
    where: str = "collider"
    spacing: float = 0.05
    frame: int = 1
    memory_budget: int = config.DEFAULT_MEMORY_BUDGET
    sdf_cache: Any = None
    reach: tuple[np.ndarray, np.ndarray] | None = None
