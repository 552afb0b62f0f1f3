"""The grid projection's face kernels (``terms/pressure_projection_zhu2005_faces.py``) against the numpy
statements they replaced, bit for bit, on random grids: every kind of cell next to every other, the
content spread over (0, 1.2), faces with and without weights."""

from __future__ import annotations

import numpy as np
import pytest

from sph_addon.core.terms import pressure_projection_zhu2005_faces as kf
from sph_addon.core.terms import pressure_projection_zhu2005_kernels as k
from sph_addon.core.terms.pressure_projection_zhu2005_ghost_fluid import (
    SURFACE_FILL,
    THETA_MIN,
    face_sides,
    surface_factor,
)

# The held velocity of static solids only (an empty array: the kernels hold their faces at 0).
STATIC = np.zeros((0, 0, 0))


def _grid(seed: int, dims=(9, 7, 8)):
    rng = np.random.default_rng(seed)
    kind = rng.choice(np.array([k.FLUID, k.AIR, k.SOLID], np.int8), size=dims, p=[0.6, 0.25, 0.15])
    fill = rng.uniform(0.0, 1.2, dims)
    faces = [tuple(n + (a == axis) for a, n in enumerate(dims)) for axis in range(3)]
    u = [rng.normal(size=f) for f in faces]
    w = [np.where(rng.uniform(size=f) < 0.3, 0.0, rng.uniform(0.1, 2.0, f)) for f in faces]
    return rng, kind, fill, faces, u, w


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_face_terms_are_the_numpy_statements(seed):
    _, kind, fill, faces, u, w = _grid(seed)
    # numpy, as the projection read before the kernels
    ref_u, ref_div, ref_solved, ref_held, ref_ghost = [a.copy() for a in u], np.zeros(kind.shape), [], [], []
    for axis in range(3):
        np.divide(ref_u[axis], w[axis], out=ref_u[axis], where=w[axis] > 0)
        lo, hi = face_sides(kind, axis, k.AIR)
        fluid, solid = (lo == k.FLUID) | (hi == k.FLUID), (lo == k.SOLID) | (hi == k.SOLID)
        ref_solved.append(fluid & ~solid)
        ref_held.append(fluid & solid)
        ref_ghost.append(surface_factor(kind, fill, axis))
        ref_div += np.diff(np.where(ref_held[-1], 0.0, ref_u[axis]), axis=axis)
    div = np.zeros(kind.shape)
    for axis in range(3):
        solved, held, ghost = np.empty(faces[axis], bool), np.empty(faces[axis], bool), np.empty(faces[axis])
        kf.face_terms(kind, (k.FLUID, k.AIR, k.SOLID), fill, axis, SURFACE_FILL, THETA_MIN, u[axis], w[axis],
                      STATIC, solved, held, ghost, div)
        assert np.array_equal(u[axis], ref_u[axis])
        assert np.array_equal(solved, ref_solved[axis]) and np.array_equal(held, ref_held[axis])
        assert np.array_equal(ghost, ref_ghost[axis])
        assert (ghost > 1.0).any() and (solved.any() and held.any())
    assert np.array_equal(div, ref_div)


@pytest.mark.parametrize("seed", [3, 4])
def test_solve_rows_and_face_changes_are_the_numpy_statements(seed):
    rng, kind, fill, faces, u, _ = _grid(seed)
    flat = kind.reshape(-1).copy()
    row = np.empty(flat.size, np.int64)
    nbr = np.empty((flat.size, 6), np.int64)
    m = k.fluid_rows(flat, *kind.shape, row, nbr)
    kind = flat.reshape(kind.shape)
    div, d = rng.normal(size=kind.shape), 0.05
    ghost = [rng.uniform(1.0, 100.0, f) for f in faces]
    rhs, surface = np.empty(m), np.empty((m, 6))
    kf.solve_rows(row, div, *ghost, d, rhs, surface)
    cells = np.flatnonzero(row >= 0)
    assert m > 10 and np.array_equal(rhs[row[cells]], -d * div.reshape(-1)[cells])
    at = np.unravel_index(cells, kind.shape)
    for axis in range(3):
        assert np.array_equal(surface[row[cells], 2 * axis], ghost[axis][at])
        high = tuple(c + (a == axis) for a, c in enumerate(at))
        assert np.array_equal(surface[row[cells], 2 * axis + 1], ghost[axis][high])
    pressure = np.where(kind == k.FLUID, rng.normal(size=kind.shape), 0.0)
    for axis in range(3):
        lo, hi = face_sides(kind, axis, k.AIR)
        solved = ((lo == k.FLUID) | (hi == k.FLUID)) & ~((lo == k.SOLID) | (hi == k.SOLID))
        held = ((lo == k.FLUID) | (hi == k.FLUID)) & ((lo == k.SOLID) | (hi == k.SOLID))
        p_lo, p_hi = face_sides(pressure, axis, 0.0)
        change = np.where(solved, -ghost[axis] * (p_hi - p_lo) * (1.0 / d), 0.0)
        change[held] = -u[axis][held]
        du, new = np.empty(faces[axis]), np.empty(faces[axis])
        kf.face_changes(pressure, axis, solved, held, ghost[axis], u[axis], STATIC, 1.0 / d, du, new)
        assert np.array_equal(du, change) and np.array_equal(new, u[axis] + change)
        # A moving solid's faces (a keyframed collider's cells) are held at its velocity instead of 0.
        us = rng.normal(size=faces[axis])
        change[held] = us[held] - u[axis][held]
        kf.face_changes(pressure, axis, solved, held, ghost[axis], u[axis], us, 1.0 / d, du, new)
        assert np.array_equal(du, change) and np.array_equal(new, u[axis] + change)
