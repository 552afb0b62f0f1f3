"""The collider SDFs behind integer codes (colliders/sdf_dispatch.py): every code evaluates exactly
its function, every registered collider resolves to a code, and the collision kernels that take
the code are loaded from numba's disk cache by a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import REPO
from reference.analytic_sdf import box_mesh

from sph_addon.core.colliders import COLLIDERS, BuildContext, Shape
from sph_addon.core.colliders.contact.response import distances
from sph_addon.core.colliders.shapes.sdf_dispatch import SDF_CODES, SDF_FUNCTIONS, sdf_eval
from sph_addon.core.colliders.shapes.sdf_mesh import build_mesh_sdf

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
    # And inside a cached parallel kernel, where sdf_eval is inlined.
    d = np.empty(len(points))
    distances(code, params, grid, points, d)
    assert d.tobytes() == want[:, 0].copy().tobytes()


def test_an_unknown_code_is_never_inside():
    d = sdf_eval(len(SDF_FUNCTIONS), np.zeros(3), NO_GRID, 0.0, 0.0, 0.0)[0]
    assert np.isnan(d)


@pytest.mark.parametrize("kind", sorted(k for k in COLLIDERS if k != "mesh"))
def test_registered_colliders_resolve_to_the_code_of_their_function(kind):
    from sph_addon.core.scene.params import resolve

    shape = COLLIDERS[kind].build(resolve(COLLIDERS[kind].parameters, {}, kind), BuildContext())
    assert SDF_FUNCTIONS[shape.code] is shape.sdf


def test_a_shape_without_a_code_is_refused():
    from numba import njit

    from sph_addon.core.numerics import config

    @njit(**{**config.NJIT, "cache": False})
    def sdf_unlisted(params, grid, px, py, pz):
        return pz, 0.0, 0.0, 1.0

    with pytest.raises(ValueError, match="sdf_dispatch"):
        Shape(sdf_unlisted, np.zeros(0))


# The kernels that took the SDF function as an argument before (and recompiled in every process).
COLLISION_KERNELS = (("colliders.contact.response", "collide"), ("colliders.contact.response", "distances"),
                     ("boundary.solid_share_kernels", "solid_share"),
                     ("colliders.contact.overlaps", "push_out_of_solid"))


@pytest.mark.parametrize("module, name", COLLISION_KERNELS)
def test_collision_kernels_have_a_disk_cache(module, name):
    import importlib

    from numba.core.caching import FunctionCache

    kernel = getattr(importlib.import_module(f"sph_addon.core.{module}"), name)
    assert isinstance(kernel._cache, FunctionCache), kernel._cache


# collide and distances in a fresh process (the other two add ~2.5 s of compilation and are
# built the same way: checked above).
_RUN_KERNELS = textwrap.dedent("""
    import json
    import numpy as np
    from sph_addon.core.colliders import COLLIDERS, BuildContext
    from sph_addon.core.colliders.contact import response

    shape = COLLIDERS["box_container"].build({"size": (1.0, 1.0, 1.0)}, BuildContext())
    eye, zero = np.eye(3), np.zeros(3)
    x = np.array([[0.0, 0.0, -0.49], [0.1, 0.2, 0.0]])
    dv = np.zeros_like(x)
    response.collide(shape.code, shape.params, shape.grid, eye, zero, eye, zero, x, x, x.copy(), 0.01, 0.025,
                     0.0, np.zeros(0, np.uint8), 0.0, 0.0, True, dv)
    d = np.empty(len(x))
    response.distances(shape.code, shape.params, shape.grid, x, d)
    print(json.dumps({f.__name__: [sum(f._cache_hits.values()), sum(f._cache_misses.values())]
                      for f in (response.collide, response.distances)}))
""")


def test_collision_kernels_are_loaded_from_the_disk_cache_by_a_fresh_process(tmp_path):
    """Two processes with one empty NUMBA_CACHE_DIR: the first compiles and saves the collision
    kernels (their index and data files appear), the second loads them and compiles none."""
    import json

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": "1"}

    def run() -> dict[str, list[int]]:
        r = subprocess.run([sys.executable, "-c", _RUN_KERNELS], cwd=REPO, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    first = run()
    assert all(misses > 0 for _, misses in first.values()), first  # compiled, not found
    files = {p.name for p in tmp_path.rglob("response.*")}
    for name in first:
        assert any(f.startswith(f"response.{name}-") and f.endswith(".nbi") for f in files), (name, files)
        assert any(f.startswith(f"response.{name}-") and f.endswith(".nbc") for f in files), (name, files)
    second = run()
    assert all(hits > 0 and misses == 0 for hits, misses in second.values()), second
