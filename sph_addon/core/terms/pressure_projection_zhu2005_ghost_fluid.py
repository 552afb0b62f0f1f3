"""A helper of the term ``pressure_projection_zhu2005``: the ghost fluid free surface of Gibou et al. 2002.

The ghost fluid free surface (Gibou, Fedkiw, Cheng & Kang 2002) on the pressure projection's cells:
where the liquid's surface lies, each cell's content over what a full cell holds beside the walls,
the cell kinds it gives, and the ghost fluid's factors at the faces between fluid and air.

Why. A cell's content is the particles' trilinear weights at its centre, 1 in the bulk. A resting
pool's top row of cells holds 0.875 and the row above 0.125: the surface, where the content
crosses 1/2, lies exactly at the lattice's top (a full cell's 8 particles, 2 a spacing along each
axis). Two things went wrong when the surface was placed at the centre of the first cell without
particles:

* A surface particle that rose by a fraction of a spacing into the cell above made that cell fluid
  and moved the surface of its column up by a whole cell: the pressure below it jumped by a cell's
  hydrostatic head, and the surface layer around it was kicked sideways (bursts of 20-40 particles at
  1-2 cm/s in a resting pool, about once a second). With the surface placed where the content
  crosses 1/2 (Gibou, Fedkiw, Cheng & Kang 2002, "A second-order-accurate symmetric discretization
  of the Poisson equation on irregular domains"; Enright, Nguyen & Fedkiw 2003 for free surfaces),
  the pressure moves with the particles, continuously.
* Beside a wall the particles beyond it are missing, so a cell there holds 0.875 of a full one (a
  wall at its face): the surface read from the raw content sits a tenth of a cell lower along every
  wall, a pressure drop that pulled liquid up the walls (a false meniscus, 3 cm/s at 1.25 cm
  spacing). The content is divided by the share of the cell's weights that falls outside the
  static colliders (``WallCells``), measured once per cell and kept: static colliders never move.
"""

from __future__ import annotations

import numpy as np

# The cells' content (1: full) at which the free surface lies.
SURFACE_FILL = 0.5
# The smallest θ, the fraction of the way from a fluid cell's centre to an air cell's where the
# surface lies: 1 / θ is the face's weight in the solve, and its clamp keeps the matrix's diagonal
# within 100 times its neighbours'. Measured before the walls' share was added: the pool and the
# dam break read the same at 0.001 and 0.01; at 0.15 and above the dam break's coarse front moves
# by 4 %; at 1 (no ghost fluid) the resting pool's bursts come back.
THETA_MIN = 0.01


def face_sides(a: np.ndarray, axis: int, outside) -> tuple[np.ndarray, np.ndarray]:
    """The values of the cell array ``a`` on the low and on the high side of every face normal to
    ``axis`` (arrays one longer along it), ``outside`` beyond the grid."""
    pad = [(0, 0)] * 3
    pad[axis] = (1, 1)
    p = np.pad(a, pad, constant_values=outside)
    return (p[tuple(slice(0, -1) if b == axis else slice(None) for b in range(3))],
            p[tuple(slice(1, None) if b == axis else slice(None) for b in range(3))])


def surface_factor(kind: np.ndarray, fill: np.ndarray, axis: int) -> np.ndarray:
    """1 / θ on the faces normal to ``axis`` between a fluid and an air cell, 1 elsewhere: θ the
    fraction of the way from the fluid cell's centre to the air cell's at which ``fill`` (the cells'
    content over a full cell's) crosses ``SURFACE_FILL`` (the ghost fluid's Dirichlet condition:
    Gibou et al. 2002, eq. 5; Enright et al. 2003), clipped below at ``THETA_MIN``.

    The statement in numpy of what ``pressure_projection_zhu2005_faces.face_terms`` computes in the
    projection, kept as the tests' reference."""
    from .pressure_projection_zhu2005_kernels import AIR, FLUID

    k_lo, k_hi = face_sides(kind, axis, AIR)
    f_lo, f_hi = face_sides(fill, axis, 0.0)
    low_fluid = k_lo == FLUID
    inner = np.where(low_fluid, f_lo, f_hi)
    outer = np.where(low_fluid, f_hi, f_lo)
    surface = (low_fluid & (k_hi == AIR)) | ((k_lo == AIR) & (k_hi == FLUID))
    theta = (inner - SURFACE_FILL) / np.maximum(inner - outer, 1e-12)
    return np.where(surface, 1.0 / np.clip(theta, THETA_MIN, 1.0), 1.0)
