"""Flat walls as mirrors: the liquid behind a tank's face or a ground plane is the image of the liquid in front.

The relaxation needs the density of the fluid a wall stands for. ``lattice_fill.wall_terms`` gives
it as the simple cubic lattice continued into the solid, fixed for the substep; that fluid never
moves, so in every pass the second layer's turns push the first into the wall and only the first
layer's own turn pushes back: measured on the 0.5 m pool, the two layers along a side wall held
3-6 % more particles than the lattice, the larger part of the pool's lost depth. A flat wall can
instead mirror the real liquid (the method of images): a particle's density counts the images of
its neighbours and of itself, and its turn pushes them too, each image's push moving the particle
it mirrors (``mirror_kernels.push_images``). Whatever arrangement the liquid takes,
the wall takes it too, and the first layer's turn pushes the second off the wall. Measured on the
pool: the side-wall layers at 1.002, 1.000 and 1.000 of the lattice's counts, the first second's
largest speed 15.3 cm/s against 45.7 with the continued lattice (CHANGELOG.md, method notes, "The liquid's
own packing, and walls as mirrors").

Mirrored here: a closed ``box_container``'s six faces (from the inside) and the ``plane``
collider, whose faces are exactly flat. Every other collider (solid boxes, spheres, meshes,
open tanks) keeps the continued lattice; a particle near both gets both. A particle within reach
of two or three faces (a tank's edge or corner) mirrors in each and in each pair and triple:
the images of a corner's three faces fill the seven octants behind it. The same plane twice (a
ground plane along a tank's floor) is mirrored once; two parallel walls closer than h (a ground
plane a little below a tank's floor) would both be, and count the fluid between them twice.
"""

from __future__ import annotations

import numpy as np

# How far (m, in units of the spacing beyond h) a wall may be from a particle at the substep's
# start and still be mirrored: the particle moves during the passes, and a wall that comes within
# h must already be in its list.
REACH_MARGIN = 0.25
_EMPTY = np.zeros((0, 4))


def flat_faces(c, rot: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
    """(k,4) world planes n·x = c (n into the liquid) of a mirrored collider, or None."""
    from ..colliders.shapes.sdf_dispatch import BOX_CONTAINER, PLANE

    code = c.shape.code
    if code == PLANE:
        local = np.array([[0.0, 0.0, 1.0, 0.0]])
    elif code == BOX_CONTAINER:
        half = c.shape.params[:3]
        local = np.zeros((6, 4))
        for a in range(3):
            local[2 * a, a], local[2 * a + 1, a] = 1.0, -1.0
            local[2 * a:2 * a + 2, 3] = -half[a]
    else:
        return None
    out = np.empty_like(local)
    for k, (nx, ny, nz, cl) in enumerate(local):
        n = rot[:, 0] * nx + rot[:, 1] * ny + rot[:, 2] * nz  # rot @ n without BLAS (walls.py)
        out[k, :3] = n
        out[k, 3] = cl + float(n[0] * pos[0] + n[1] * pos[1] + n[2] * pos[2])
    return out


def wall_mirror(x: np.ndarray, walls, spacing: float, h: float):
    """The mirrored walls of ``walls`` and the particles each one reaches, and the other colliders.

    Returns (planes, plane_of, others): planes (P,4) float64 as n·x = c with n into the liquid;
    plane_of (n,3) int64, the nearest three planes within h + REACH_MARGIN s of each particle
    (-1 for none); others, a ``Walls`` of the colliders that are not mirrored (None if none).
    A tank's faces count only for the particles inside it (one that escaped is the collider's).
    """
    from .mirror_kernels import nearest_planes

    plane_of = np.full((len(x), 3), -1, np.int64)
    if walls is None:
        return _EMPTY, plane_of, None
    planes, group, others = [], [], []
    for placed in walls.placed:
        c, rot, pos = placed
        faces = flat_faces(c, np.asarray(rot, np.float64), np.asarray(pos, np.float64))
        if faces is None:
            others.append(placed)
            continue
        planes.append(faces)
        group += [len(planes)] * len(faces)
    others_walls = walls.subset(others) if others else None
    if not planes:
        return _EMPTY, plane_of, others_walls
    planes_arr = np.ascontiguousarray(np.concatenate(planes))
    nearest_planes(x, planes_arr, np.asarray(group, np.int64), h + REACH_MARGIN * spacing, plane_of,
                   np.empty((len(x), 3)))
    return planes_arr, plane_of, others_walls


def relaxation_walls(x: np.ndarray, walls, spacing: float, h: float):
    """What the relaxation takes from the colliders: the mirrored planes and each particle's
    (:func:`wall_mirror`), and the other colliders' fluid (``lattice_fill.wall_terms``)."""
    from .lattice_fill import wall_terms

    planes, plane_of, others = wall_mirror(x, walls, spacing, h)
    return planes, plane_of, wall_terms(x, others, spacing, h)
