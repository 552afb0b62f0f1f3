"""Mesh SDF: accuracy against analytic shapes and brute force, sign robustness,
lookup, cache and bad input (sph_addon/core/colliders/shapes/sdf_mesh.py, sdf_cache.py).

Grids are small (<= ~40^3) so the file runs in well under a minute on 2 cores.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reference.analytic_sdf import (
    box_mesh,
    box_sdf,
    brute_unsigned,
    cube_sphere,
    open_tank_mesh,
    sphere_sdf,
    torus_mesh,
    torus_sdf,
)

from sph_addon.core.cache.mesh_io import load_mesh
from sph_addon.core.colliders.shapes import sdf_cache, sdf_mesh
from sph_addon.core.colliders.shapes.sdf_mesh import MeshSDF, build_mesh_sdf, sdf_grid
from sph_addon.core.errors import InputError

MESHES = Path(__file__).resolve().parents[1] / "data" / "meshes"

# float32 storage of the grid: relative 6e-8, a few 1e-7 m on unit-sized meshes.
F32_TOL = 1e-6


def _chordal_error(V, T, sdf_true, samples=6):
    """Largest |analytic distance| over points spread on the triangles (bary grid, incl. centroids)."""
    a, b, c = V[T[:, 0]], V[T[:, 1]], V[T[:, 2]]
    worst = 0.0
    for i in range(samples + 1):
        for j in range(samples + 1 - i):
            w = np.array([i, j, samples - i - j]) / samples
            worst = max(worst, np.abs(sdf_true(w[0] * a + w[1] * b + w[2] * c)).max())
    cen = (a + b + c) / 3
    return max(worst, np.abs(sdf_true(cen)).max())


SHAPES = {
    "sphere-coarse": (lambda: cube_sphere(4, 0.6), lambda p: sphere_sdf(p, 0.6), 0.08),
    "sphere-fine": (lambda: cube_sphere(8, 0.6), lambda p: sphere_sdf(p, 0.6), 0.05),
    "box": (lambda: box_mesh((-0.4, -0.3, -0.25), (0.4, 0.3, 0.25)),
            lambda p: box_sdf(p, (0.4, 0.3, 0.25)), 0.05),
    "torus-coarse": (lambda: torus_mesh(16, 8, 0.6, 0.2), lambda p: torus_sdf(p, 0.6, 0.2), 0.06),
    "torus-fine": (lambda: torus_mesh(32, 16, 0.6, 0.2), lambda p: torus_sdf(p, 0.6, 0.2), 0.04),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_accuracy_against_analytic_and_brute_force(name):
    make, sdf_true, h = SHAPES[name]
    V, T = make()
    sdf = build_mesh_sdf(V, T, cell_size=h, padding=2 * h)
    P = sdf.node_positions().reshape(-1, 3)
    g = sdf.grid.ravel().astype(np.float64)
    true = sdf_true(P)
    chord = _chordal_error(V, T, sdf_true)
    # Sign: every node farther than one cell (plus the mesh-to-shape gap) from the surface.
    far = np.abs(true) > h + chord
    assert far.sum() > 1000
    assert np.array_equal(g[far] < 0, true[far] < 0)
    # Narrow band (1.5 cells, where distances are computed exactly): error vs the
    # analytic shape within the chordal error + half a cell.
    band = np.abs(g) < 1.5 * h
    assert band.sum() > 100
    assert np.abs(g[band] - true[band]).max() <= chord + 0.5 * h
    # Stronger: against the brute-force distance to the mesh itself the band is
    # exact up to float32 storage (sign taken from the field, checked above).
    rng = np.random.default_rng(1)
    sel = rng.choice(np.flatnonzero(band), size=min(400, band.sum()), replace=False)
    u = brute_unsigned(P[sel], V, T)
    assert np.abs(np.abs(g[sel]) - u).max() <= F32_TOL
    # Far field (ids propagated by the sweep): an upper bound of the true
    # distance, within half a cell of it (measured max 0.23 h, see SWEEP_ROUNDS).
    sel = rng.choice(np.flatnonzero(~band), size=300, replace=False)
    u = brute_unsigned(P[sel], V, T)
    err = np.abs(g[sel]) - u
    assert err.min() >= -F32_TOL
    assert err.max() <= 0.5 * h


def _field(name, **kw):
    V, T = load_mesh(MESHES / name)
    kw.setdefault("cell_size", 0.05)
    kw.setdefault("padding", 0.1)
    return build_mesh_sdf(V, T, **kw)


def _d(sdf, *pts):
    return sdf.sample(np.array(pts, float))[0]


def test_box_with_internal_face_ignores_the_wall():
    sdf = _field("box_internal_face.ply")
    plain = build_mesh_sdf(*box_mesh(), cell_size=0.05, padding=0.1)
    # Next to the wall (x = 0) the distance is to the outer skin, not ~0.
    d = _d(sdf, (0.05, 0.0, 0.0), (-0.05, 0.1, 0.0), (0.3, 0.0, 0.0), (0.8, 0.0, 0.0), (0.0, 0.0, 0.7))
    assert d[0] == pytest.approx(-0.45, abs=1e-5) and d[1] == pytest.approx(-0.4, abs=1e-5)
    assert d[2] < 0 and d[3] > 0 and d[4] > 0
    # Away from where the wall meets the skin (within a cell of it), identical to the plain box.
    P = sdf.node_positions()
    far_from_rim = np.abs(P[..., 0]) > 0.06
    assert np.abs(sdf.grid - plain.grid)[far_from_rim].max() <= F32_TOL


def test_two_intersecting_boxes_form_their_union():
    sdf = _field("two_boxes.obj")
    # Inside the overlap, box A's face x = 0.5 and B's faces inside A are internal: the
    # nearest surface of the union is the edge of A's face where B leaves it, at (0.5, 0.3, 0).
    d = _d(sdf, (0.45, 0.0, 0.0), (0.0, 0.0, 0.0), (0.9, 0.0, 0.0), (0.9, 0.4, 0.0), (1.3, 0.0, 0.0),
           (0.7, 0.45, 0.0))
    # A's face triangles are only partly buried, so the field there is bounded by the
    # distance to the exterior minus two cells (see _build_solid): within 2 h = 0.1 m.
    assert d[0] == pytest.approx(-np.hypot(0.05, 0.3), abs=0.1)
    assert d[0] < -0.2
    # Same bound at the centre (B's partly buried side faces reach x = 0.2).
    assert d[1] == pytest.approx(-0.5, abs=0.1)
    assert d[2] == pytest.approx(-0.2, abs=1e-5)
    assert d[3] > 0 and d[4] > 0 and d[5] > 0


def test_box_with_duplicated_and_flipped_triangles_equals_box():
    sdf = _field("box_dup_flipped.ply")
    plain = build_mesh_sdf(*box_mesh(), cell_size=0.05, padding=0.1)
    assert np.abs(sdf.grid - plain.grid).max() <= F32_TOL
    assert _d(sdf, (0.0, 0.0, 0.0))[0] == pytest.approx(-0.5, abs=1e-5)


def test_sphere_with_small_hole_keeps_its_inside():
    # The missing triangle (legs ~0.1 m, inradius ~0.03 m) is plugged by the
    # exterior flood barrier max(h/2, hole_closing).
    sdf = _field("sphere_hole.ply", cell_size=0.05, hole_closing=0.05)
    P = sdf.node_positions().reshape(-1, 3)
    g = sdf.grid.ravel()
    true = sphere_sdf(P, 0.5)
    chord = 0.02  # cube-sphere n=8 at R=0.5: sagitta < 0.02 m (measured 0.012)
    hole = np.array([0.0, 0.0, 0.5])
    # Every node farther than a cell from the sphere and two cells from the hole has the right sign.
    ok = (np.abs(true) > 0.05 + chord) & (np.linalg.norm(P - hole, axis=1) > 0.1)
    assert np.array_equal(g[ok] < 0, true[ok] < 0)
    assert _d(sdf, (0, 0, 0))[0] == pytest.approx(-0.5, abs=chord)
    # At h = 0.05 the default barrier (h/2) plugs it too; at h = 0.03 the hole is
    # wider than the barrier, the flood gets in and nothing is inside (a shell),
    # unless hole_closing is raised.
    assert (_field("sphere_hole.ply", cell_size=0.05).grid < -0.4).any()
    assert (_field("sphere_hole.ply", cell_size=0.03).grid >= -1e-9).all()
    assert _d(_field("sphere_hole.ply", cell_size=0.03, hole_closing=0.05), (0, 0, 0))[0] < -0.45


@pytest.mark.parametrize("hole_closing", [0.0, 0.02, 0.06])
def test_hole_closing_wider_than_the_margin_keeps_the_signs(hole_closing):
    """The exterior flood starts from grid nodes farther than hole_closing from the
    surface; with a margin of 2 cells only, 0.06 m at 1 cm cells turned the whole grid inside."""
    box = build_mesh_sdf(*box_mesh((-0.2,) * 3, (0.2,) * 3), cell_size=0.01, padding=0.0,
                         hole_closing=hole_closing)
    d = _d(box, (0, 0, 0), (0.15, 0.1, 0.0), (0.3, 0.0, 0.0), (0.0, -0.25, 0.25))
    assert d[:2] == pytest.approx([-0.2, -0.05], abs=0.006)  # the nodes are up to half a cell off centre
    assert d[2:] == pytest.approx([0.1, np.sqrt(2) * 0.05], abs=0.006)
    assert np.isfinite(box.grid).all()
    # A thick-walled tank open at the top: its cavity (0.4 m wide) stays exterior, its walls solid.
    tank = build_mesh_sdf(*open_tank_mesh(), cell_size=0.01, padding=0.0, hole_closing=hole_closing)
    d = _d(tank, (0, 0, 0.15), (0.1, 0.1, 0.06), (0.225, 0.0, 0.15), (0.0, 0.0, 0.025), (0.5, 0, 0.15))
    assert d[0] == pytest.approx(0.1, abs=0.006) and d[1] > 0  # water goes here
    assert d[2] == pytest.approx(-0.025, abs=0.006) and d[3] == pytest.approx(-0.025, abs=0.006)
    assert d[4] == pytest.approx(0.25, abs=0.006)


def test_single_quad_plane_in_shell_mode_collides_from_both_sides():
    sdf = _field("plane_quad.ply", mode="shell", thickness=0.05)
    d, n = sdf.sample(np.array([[0.0, 0.0, 0.2], [0.1, 0.0, -0.2], [0.0, 0.1, 0.01], [0.0, 0.0, 0.0]]))
    assert d[:2] == pytest.approx([0.15, 0.15], abs=1e-5)
    assert d[2] == pytest.approx(-0.04, abs=1e-5) and d[3] == pytest.approx(-0.05, abs=1e-5)
    assert n[0, 2] > 0.99 and n[1, 2] < -0.99
    # Solid mode on the same sheet: nothing is enclosed, the field is a zero-thickness shell.
    # (nodes on the sheet may round to -1e-17.)
    assert (_field("plane_quad.ply").grid >= -1e-9).all()


def test_non_manifold_edge_with_three_faces():
    sdf = _field("nonmanifold_fin.obj")
    # Points beside the internal fin: distance to the skin (y = 0.5 or z = 0.5), not to the fin.
    d = _d(sdf, (0.0, 0.3, 0.2), (0.0, 0.0, 0.0), (0.0, 0.7, 0.7), (0.0, 0.55, 0.0))
    assert d[0] == pytest.approx(-0.2, abs=1e-5)
    assert d[1] == pytest.approx(-0.5, abs=1e-5)
    assert d[2] > 0 and d[3] > 0


def test_flip_normals_negates_the_field():
    V, T = box_mesh()
    a = build_mesh_sdf(V, T, cell_size=0.1, padding=0.2)
    b = build_mesh_sdf(V, T, cell_size=0.1, padding=0.2, flip_normals=True)
    assert np.array_equal(a.grid, -b.grid)


def test_build_is_deterministic():
    V, T = torus_mesh(16, 8, 0.6, 0.2)
    a = build_mesh_sdf(V, T, cell_size=0.06, padding=0.1)
    b = build_mesh_sdf(V, T, cell_size=0.06, padding=0.1)
    assert np.array_equal(a.grid, b.grid) and np.array_equal(a.params, b.params)


# --------------------------------------------------------------------------- lookup


@pytest.fixture(scope="module")
def sphere_field():
    V, T = cube_sphere(8, 0.6)
    return build_mesh_sdf(V, T, cell_size=0.05, padding=0.1)


def test_lookup_at_nodes_returns_node_values(sphere_field):
    s = sphere_field
    P = s.node_positions()
    rng = np.random.default_rng(2)
    idx = tuple(rng.integers(0, n, 500) for n in s.grid.shape)
    d, _ = s.sample(P[idx])
    # Trilinear weights at a node are exactly 0/1 up to rounding of (p - origin) / h.
    assert np.abs(d - s.grid[idx]).max() <= 1e-6
    # The scalar kernel (the collider signature) agrees with the batch.
    p = P[idx][0]
    assert sdf_grid(s.params, s.grid, *p)[0] == pytest.approx(d[0], abs=1e-12)
    assert MeshSDF.sdf_fn is sdf_grid and s.sdf_fn is sdf_grid


def test_lookup_normals_are_unit_and_outward(sphere_field):
    rng = np.random.default_rng(3)
    p = rng.uniform(-0.65, 0.65, (2000, 3))
    r = np.linalg.norm(p, axis=1)
    p = p[(r > 0.2) & (r < 0.65)]
    d, n = sphere_field.sample(p)
    assert np.abs(np.linalg.norm(n, axis=1) - 1.0).max() <= 1e-9
    # Away from the centre (the medial point), the normal is close to radial. The
    # facets of the n = 8 cube-sphere span up to ~11 degrees, so the mesh's own
    # normal is up to ~0.1 rad off radial; 0.2 rad allows for the one-cell differences.
    radial = p / np.linalg.norm(p, axis=1, keepdims=True)
    assert (np.einsum("ij,ij->i", n, radial) > np.cos(0.2)).all()
    # Values within chordal error (< 0.025 m for n=8, R=0.6) + trilinear error (< h/2).
    assert np.abs(d - sphere_sdf(p, 0.6)).max() <= 0.025 + 0.025


def test_lookup_normal_is_continuous_across_cell_faces(sphere_field):
    s = sphere_field
    h = s.cell_size
    # Cross a cell face along x near the surface; the normal must not jump.
    x_face = s.origin[0] + 20 * h
    eps = 1e-7
    a = np.array([[x_face - eps, 0.31, 0.4]])
    b = np.array([[x_face + eps, 0.31, 0.4]])
    na, nb = s.sample(a)[1], s.sample(b)[1]
    assert np.linalg.norm(na - nb) <= 1e-5


def test_lookup_outside_grid_is_safe_continuous_and_outward(sphere_field):
    s = sphere_field
    hi = s.origin + s.cell_size * (np.array(s.grid.shape) - 1)
    # Just inside and just outside the +x face of the grid box: continuous.
    pin = np.array([[hi[0] - 1e-9, 0.1, 0.2]])
    pout = np.array([[hi[0] + 1e-9, 0.1, 0.2]])
    din, nin = s.sample(pin)
    dout, nout = s.sample(pout)
    assert abs(din[0] - dout[0]) <= 1e-6 and np.linalg.norm(nin - nout) <= 1e-6
    # Far away in every direction: no index error, distance grows with offset, normal points away.
    far = np.array([[50, 0, 0], [0, -50, 3], [7, 8, -60], [1e6, 1e6, 1e6], [-3, -3, -3]], float)
    d, n = s.sample(far)
    assert np.isfinite(d).all() and (d > 0).all()
    assert (d >= np.linalg.norm(far, axis=1) - 0.6 - 1e-9).all()  # never below the true distance
    assert (np.einsum("ij,ij->i", n, far / np.linalg.norm(far, axis=1, keepdims=True)) > 0.5).all()


# --------------------------------------------------------------------------- cache


def test_cache_hit_returns_identical_arrays_without_building(tmp_path, monkeypatch):
    V, T = cube_sphere(4, 0.6)
    kw = dict(cell_size=0.1, padding=0.2)
    first = sdf_cache.cached_mesh_sdf(V, T, tmp_path, **kw)
    assert len(list(tmp_path.glob("sdf_*.npz"))) == 1

    def no_build(*a, **k):
        raise AssertionError("cache miss: the builder was called")

    monkeypatch.setattr(sdf_cache, "build_mesh_sdf", no_build)
    second = sdf_cache.cached_mesh_sdf(V, T, tmp_path, **kw)
    assert np.array_equal(first.grid, second.grid) and second.grid.dtype == np.float32
    assert np.array_equal(first.params, second.params) and second.build_s == first.build_s
    # Any change in the vertices or in a setting misses (reaches the builder).
    V2 = V.copy()
    V2[0, 0] += 1e-9
    for args, kwargs in (((V2, T), kw), ((V, T), dict(kw, cell_size=0.09)),
                         ((V, T), dict(kw, mode="shell")), ((V, T), dict(kw, flip_normals=True)),
                         ((V, T[:, ::-1]), kw)):
        with pytest.raises(AssertionError, match="cache miss"):
            sdf_cache.cached_mesh_sdf(*args, tmp_path, **kwargs)


def test_cache_rebuilds_a_corrupt_file(tmp_path):
    V, T = box_mesh()
    kw = dict(cell_size=0.1, padding=0.2)
    a = sdf_cache.cached_mesh_sdf(V, T, tmp_path, **kw)
    (f,) = tmp_path.glob("sdf_*.npz")
    f.write_bytes(b"not a zip file")
    b = sdf_cache.cached_mesh_sdf(V, T, tmp_path, **kw)
    assert np.array_equal(a.grid, b.grid)
    with np.load(f, allow_pickle=False) as z:  # rewritten, readable without pickle
        assert z["grid"].shape == a.grid.shape


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("V, T, kw, pattern", [
    (np.zeros((0, 3)), np.zeros((0, 3), int), {}, "empty"),
    (np.array([[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]]), np.array([[0, 1, 2]]), {}, "NaN"),
    (np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]]), np.array([[0, 1, 2]]), {}, "zero area"),
    (np.eye(3), np.array([[0, 1, 3]]), {}, "0..2"),
    (np.eye(3), np.array([[0, -1, 2]]), {}, "0..2"),
    (np.eye(3), np.array([[0.0, 1.0, 2.0]]), {}, "integer"),
    (np.eye(3), np.array([[0, 1, 2]]), {"cell_size": 0.0}, "positive"),
    (np.eye(3), np.array([[0, 1, 2]]), {"mode": "hollow"}, "mode"),
    (np.eye(3), np.array([[0, 1, 2]]), {"memory_budget": 10**6}, r"needs about \d+ MiB"),
])
def test_bad_input_raises_input_error_before_work(V, T, kw, pattern):
    args = dict(cell_size=0.01, padding=0.0, where="colliders[2].mesh")
    args.update(kw)
    with pytest.raises(InputError, match=pattern) as exc:
        build_mesh_sdf(V, T, **args)
    assert exc.value.where == "colliders[2].mesh"
    assert str(exc.value).startswith("colliders[2].mesh: ")


def test_memory_estimate_matches_the_grid():
    V, T = box_mesh()
    h = 0.01
    dims = np.ceil((1.0 + 2 * 2 * h) / h) + 1
    need = sdf_mesh.estimate_sdf_bytes((dims,) * 3, len(T))
    with pytest.raises(InputError, match=f"{int(dims)}x{int(dims)}x{int(dims)}"):
        build_mesh_sdf(V, T, cell_size=h, padding=0.0, memory_budget=need - 1)
    assert build_mesh_sdf(V, T, cell_size=h, padding=0.0, memory_budget=need).grid.shape == (dims,) * 3
