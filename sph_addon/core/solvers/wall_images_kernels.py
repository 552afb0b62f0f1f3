"""Numba kernel of ``wall_images``: which mirrored walls each particle reaches."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import config


@njit(**config.NJIT_PARALLEL)
def nearest_planes(x, planes, group, reach, plane_of, best):
    """The nearest three planes within ``reach`` (m) of each particle, nearest first, into plane_of.

    x : (n,3) positions; planes : (P,4) n·x = c with n into the liquid; group : (P,) int64, the
    collider each plane belongs to (a tank's faces share one: a particle beyond any of them is
    outside that tank and mirrors none of them); plane_of : (n,3) int64, filled with -1 by the
    caller, out; best : (n,3) float64 scratch, the listed planes' distances (rows in place of
    small arrays allocated per particle, which took most of the call's time).
    """
    n_planes = planes.shape[0]
    for i in prange(x.shape[0]):
        for b in range(3):
            best[i, b] = np.inf
        p0 = 0
        while p0 < n_planes:
            p1 = p0
            while p1 < n_planes and group[p1] == group[p0]:
                p1 += 1
            inside = True
            for a in range(p0, p1):
                if planes[a, 0] * x[i, 0] + planes[a, 1] * x[i, 1] + planes[a, 2] * x[i, 2] - planes[a, 3] < 0.0:
                    inside = False
            if inside:
                for a in range(p0, p1):
                    d = planes[a, 0] * x[i, 0] + planes[a, 1] * x[i, 1] + planes[a, 2] * x[i, 2] - planes[a, 3]
                    if d < reach and d < best[i, 2] and not _listed(planes, plane_of, i, a):
                        b = 2
                        while b > 0 and d < best[i, b - 1]:
                            best[i, b] = best[i, b - 1]
                            plane_of[i, b] = plane_of[i, b - 1]
                            b -= 1
                        best[i, b] = d
                        plane_of[i, b] = a
            p0 = p1


@njit(**config.NJIT)
def _listed(planes, plane_of, i, a):
    """Whether plane a is already in particle i's list (the same plane from another collider)."""
    for b in range(3):
        o = plane_of[i, b]
        if o >= 0 and (abs(planes[o, 0] - planes[a, 0]) + abs(planes[o, 1] - planes[a, 1])
                       + abs(planes[o, 2] - planes[a, 2]) + abs(planes[o, 3] - planes[a, 3])) < 1e-9:
            return True
    return False
