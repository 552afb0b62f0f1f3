"""Contacts between solid particles (Macklin, Müller, Chentanez & Kim 2014, "Unified Particle Physics for
Real-Time Applications", section 6.1): two particles of elastic materials closer than the spacing that
are not rest partners (two bodies, or two folds of one), or that are melting (``phase``), are pushed apart
on the predicted positions.

The elastic forces act between rest partners only, so without this two jellies would pass through
each other. A pair's separation is shared by mass, m_j / (m_i + m_j) for i, so momentum is kept; the
passes are Jacobi (each particle moves by the sum of its shares), ``PASSES`` of them a substep. No
friction between solids (they slide); their contacts with colliders have the colliders' friction.

Acts on every material of the ``elastic`` model (density from ``density``).
"""

from __future__ import annotations

import numpy as np

from .base import POSITION, Term

PASSES = 2


class ContactMacklin2014(Term):
    """Solid-solid contacts (position stage)."""

    name = "contact_macklin2014"
    citation = ("M. Macklin, M. Müller, N. Chentanez, T.-Y. Kim, Unified Particle Physics for Real-Time "
                "Applications, ACM TOG 33(4), 2014")
    stage = POSITION
    parameters = ("density",)

    def __init__(self, setup):
        super().__init__(setup)
        self.solid = self.owned.astype(np.uint8)
        self.mass = self.per_material("density") * setup.spacing ** 3

    def apply(self, ctx) -> None:
        a = ctx.arrays
        if "elastic_bonded" not in a or not self.owned.any():
            return
        from .contact_macklin2014_kernels import contact_push

        melt = a["melt"] if "melt" in a else np.zeros(ctx.n)
        with ctx.workspace.borrow((3,)) as (dx,):
            for _ in range(PASSES):
                contact_push(ctx.x, a["rest_position"], ctx.material, a["source"], self.solid, a["elastic_bonded"],
                             melt, ctx.nbr, ctx.count, self.mass, ctx.spacing, ctx.h, dx)
                np.add(ctx.x, dx, out=ctx.x)
