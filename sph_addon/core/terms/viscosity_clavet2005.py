"""Clavet 2005's quadratic pair viscosity (thesis Algorithm 4, the β term): pairs approaching each
other lose the square of their approach speed times β (1/m), against interpenetration at impacts.

Algorithm 4's linear term σ is not here: a kinematic viscosity solved implicitly replaces it
(``viscosity_weiler2018``). Acts on every material whose ``stiff_viscosity`` β is above 0 (0: none).
"""

from __future__ import annotations

import numpy as np

from .base import VELOCITY, Term


class ViscosityClavet2005(Term):
    """Sequential pair impulses swept by supercell colour (velocity stage)."""

    name = "viscosity_clavet2005"
    citation = "S. Clavet, P. Beaudoin, P. Poulin, Particle-based Viscoelastic Fluid Simulation, SCA 2005"
    stage = VELOCITY
    parameters = ("stiff_viscosity",)

    def __init__(self, setup):
        super().__init__(setup)
        self.beta = self.per_material("stiff_viscosity")

    def apply(self, ctx) -> None:
        if not np.any(self.beta > 0):
            return
        from .viscosity_clavet2005_kernels import viscosity_impulses

        viscosity_impulses(ctx.x, ctx.v, ctx.nbr, ctx.count, ctx.material, self.beta, ctx.h, ctx.dt,
                           ctx.bucket_start, ctx.colour, ctx.colour_buckets, ctx.colour_units)
