"""The collider SDFs behind integer codes (colliders/sdf_dispatch.py): every code evaluates exactly
its function and every registered collider resolves to a code."""

from __future__ import annotations

import numpy as np
import pytest
from reference.analytic_sdf import box_mesh

from sph_addon.core.colliders import COLLIDERS, BuildContext, Shape
from sph_addon.core.colliders.sdf_dispatch import SDF_CODES, SDF_FUNCTIONS, sdf_eval
from sph_addon.core.colliders.sdf_mesh import build_mesh_sdf

NO_GRID = np.zeros((1, 1, 1), np.float32)


def _mesh_params_grid():
    s = build_mesh_sdf(*box_mesh(), cell_size=0.1, padding=0.2)
    return s.params, s.grid


# Params and grid for each code's function: the numbers its builder would give.
CASES = {
    "sdf_plane": lambda: (np.zeros(0), NO_GRID),
    "sdf_sphere": lambda: (np.array([0.4]), NO_GRID),
    "sdf_box": lambda: (np.array([0.3, 0.2, 0.1]), NO_GRID),
    "sdf_box_container": lambda: (np.array([0.3, 0.2, 0.1]), NO_GRID),
    "sdf_box_open": lambda: (np.array([0.3, 0.2, 0.1, 0, 1, 0, 0, 0, 1], np.float64), NO_GRID),
    "sdf_grid": _mesh_params_grid,
}


def test_every_code_has_a_case_and_the_table_is_one_to_one():
    assert sorted(SDF_FUNCTIONS) == list(range(len(SDF_FUNCTIONS)))
    assert {fn.__name__ for fn in SDF_FUNCTIONS.values()} == set(CASES)
    assert len(SDF_CODES) == len(SDF_FUNCTIONS)


@pytest.mark.parametrize("code", sorted(SDF_FUNCTIONS))
def test_sdf_eval_is_the_function_of_its_code_bit_for_bit(code):
    fn = SDF_FUNCTIONS[code]
    params, grid = CASES[fn.__name__]()
    rng = np.random.default_rng(code)
    points = np.ascontiguousarray(rng.uniform(-0.7, 0.7, (300, 3)))
    want = np.array([fn(params, grid, *p) for p in points])
    got = np.array([sdf_eval(code, params, grid, *p) for p in points])
    assert got.tobytes() == want.tobytes()


def test_an_unknown_code_is_never_inside():
    d = sdf_eval(len(SDF_FUNCTIONS), np.zeros(3), NO_GRID, 0.0, 0.0, 0.0)[0]
    assert np.isnan(d)


@pytest.mark.parametrize("kind", sorted(k for k in COLLIDERS if k != "mesh"))
def test_registered_colliders_resolve_to_the_code_of_their_function(kind):
    from sph_addon.core.params import resolve

    shape = COLLIDERS[kind].build(resolve(COLLIDERS[kind].parameters, {}, kind), BuildContext())
    assert SDF_FUNCTIONS[shape.code] is shape.sdf


def test_a_shape_without_a_code_is_refused():
    from numba import njit

    from sph_addon.core import config

    @njit(**{**config.NJIT, "cache": False})
    def sdf_unlisted(params, grid, px, py, pz):
        return pz, 0.0, 0.0, 1.0

    with pytest.raises(ValueError, match="sdf_dispatch"):
        Shape(sdf_unlisted, np.zeros(0))
