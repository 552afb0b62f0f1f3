"""The meshing stage over a cache directory (docs/surface.md, "The meshing stage")."""

from __future__ import annotations

import json

import numpy as np
import pytest
from reference.surface_mesh_checks import lattice_ball, topology

from sph_addon.core.cache.plyio import read_ply, write_ply
from sph_addon.core.errors import InputError
from sph_addon.core.surface import mesh_cache

S = 0.05
FIELDS = [("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("vx", "<f4"), ("vy", "<f4"), ("vz", "<f4"),
          ("id", "<u4"), ("material", "u1")]


def _write_particles(path, x, v, mat):
    rec = np.zeros(len(x), FIELDS)
    for d, n in enumerate("xyz"):
        rec[n] = x[:, d]
        rec["v" + n] = v[:, d]
    rec["id"] = np.arange(len(x))
    rec["material"] = mat
    write_ply(path, rec)


def _make_cache(tmp_path, frames=(1, 2, 3), surface=None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    scene = {"format": "sph_addon.scene/2", "particle_spacing": S}
    if surface is not None:
        scene["surface"] = surface
    (tmp_path / "scene.json").write_text(json.dumps(scene))
    ball = lattice_ball(3 * S, S)
    for f in frames:
        water = ball + [0.01 * f, 0, 0]
        jelly = ball + [0.4, 0, 0]
        x = np.vstack([water, jelly])
        v = np.tile([0.01 * f, 0.0, -1.0], (len(x), 1))
        mat = np.r_[np.zeros(len(water), np.uint8), np.ones(len(jelly), np.uint8)]
        _write_particles(tmp_path / "particles" / f"particles_{f:04d}.ply", x, v, mat)
    return tmp_path


def test_meshes_skips_and_forces(tmp_path):
    cache = _make_cache(tmp_path)
    seen = []
    rep = mesh_cache(cache, progress=lambda done, total, frame: seen.append((done, total, frame)))
    assert rep["meshed"] == [1, 2, 3] and rep["skipped"] == [] and rep["failed"] == {}
    assert sorted(f for _, _, f in seen) == [1, 2, 3] and seen[-1][:2] == (3, 3)
    per_frame = rep["seconds"]  # wall time recorded for each meshed frame (its value is not asserted)
    assert set(per_frame) == {1, 2, 3}
    ply = read_ply(cache / "surface" / "surface_0002.ply")
    names = set(ply.vertices.dtype.names)
    assert names == {"x", "y", "z", "vx", "vy", "vz", "material"}, "normals only when asked for (off by default)"
    assert ply.vertices["x"].dtype == np.float32 and ply.vertices["material"].dtype == np.uint8
    pos = ply.positions()
    top = topology(pos, ply.faces)
    assert top["closed_manifold_edges"] and top["oriented"] and top["components"] == 2
    assert set(np.unique(ply.vertices["material"])) == {0, 1}  # water and jelly, one file
    np.testing.assert_allclose(ply.vertices["vz"], -1.0, atol=1e-6)
    np.testing.assert_allclose(ply.vertices["vx"], 0.02, atol=1e-6)
    mtime = (cache / "surface" / "surface_0002.ply").stat().st_mtime_ns

    rep2 = mesh_cache(cache)
    assert rep2["skipped"] == [1, 2, 3] and rep2["meshed"] == []
    assert (cache / "surface" / "surface_0002.ply").stat().st_mtime_ns == mtime

    rep3 = mesh_cache(cache, frames=[2], force=True)
    assert rep3["meshed"] == [2] and rep3["skipped"] == []


def test_changed_settings_or_particles_remesh(tmp_path):
    cache = _make_cache(tmp_path, frames=(1, 2))
    mesh_cache(cache)
    scene = json.loads((cache / "scene.json").read_text())
    scene["surface"] = {"smoothing_iterations": 0, "normals": True}
    (cache / "scene.json").write_text(json.dumps(scene))
    assert mesh_cache(cache)["meshed"] == [1, 2]
    ply = read_ply(cache / "surface" / "surface_0001.ply")
    normals = np.column_stack([ply.vertices[n] for n in ("nx", "ny", "nz")])
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-5)
    ball = lattice_ball(2 * S, S)
    _write_particles(cache / "particles" / "particles_0001.ply", ball, np.zeros_like(ball),
                     np.zeros(len(ball), np.uint8))
    rep = mesh_cache(cache)
    assert rep["meshed"] == [1] and rep["skipped"] == [2]


def test_truncated_file_fails_alone_and_names_the_file(tmp_path):
    cache = _make_cache(tmp_path)
    bad = cache / "particles" / "particles_0002.ply"
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    rep = mesh_cache(cache, frames=[1, 2, 3, 7])
    assert rep["meshed"] == [1, 3]
    assert set(rep["failed"]) == {2, 7}
    assert str(bad) in rep["failed"][2] and "truncated" in rep["failed"][2]
    assert "particles_0007.ply" in rep["failed"][7] and "missing" in rep["failed"][7]
    assert not (cache / "surface" / "surface_0002.ply").exists()


def test_empty_or_bad_cache_is_input_error(tmp_path):
    (tmp_path / "scene.json").write_text(json.dumps({"particle_spacing": S}))
    with pytest.raises(InputError) as exc:
        mesh_cache(tmp_path)
    assert str(tmp_path) in str(exc.value)
    with pytest.raises(InputError, match="not a directory"):
        mesh_cache(tmp_path / "nope")
    _make_cache(tmp_path, frames=(1,), surface={"feild": "clavet"})
    with pytest.raises(InputError, match=r"surface\.feild"):
        mesh_cache(tmp_path)
    (tmp_path / "scene.json").write_text(json.dumps({"surface": {}}))
    with pytest.raises(InputError, match="particle_spacing"):
        mesh_cache(tmp_path)


def test_two_jobs_give_identical_files(tmp_path):
    a = _make_cache(tmp_path / "a", frames=(1, 2))
    b = _make_cache(tmp_path / "b", frames=(1, 2))
    assert mesh_cache(a, jobs=1)["meshed"] == [1, 2]
    rep = mesh_cache(b, jobs=2)
    assert rep["meshed"] == [1, 2] and rep["failed"] == {}
    for f in (1, 2):
        name = f"surface/surface_{f:04d}.ply"
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_the_temperature_and_melt_fraction_reach_the_surface(tmp_path):
    """A cache with heat's fields: the surface's vertices carry the temperature and melt fraction averaged from
    the particles near them: in a ball whose temperature rises linearly across it by 1000 °C, each vertex
    within one spacing's rise (125 °C) of the value at its own place (a surface vertex averages a one-sided
    neighbourhood, which leans inwards)."""
    (tmp_path / "scene.json").write_text(json.dumps({"format": "sph_addon.scene/2", "particle_spacing": S}))
    x = lattice_ball(4 * S, S)
    fields = FIELDS + [("temperature", "<f4"), ("melt", "<f4")]
    rec = np.zeros(len(x), fields)
    for d, n in enumerate("xyz"):
        rec[n] = x[:, d]
    rec["temperature"] = 500.0 + 1000.0 * x[:, 0] / (8 * S)
    rec["melt"] = 0.25
    write_ply(tmp_path / "particles" / "particles_0001.ply", rec)
    assert mesh_cache(tmp_path)["meshed"] == [1]
    v = read_ply(tmp_path / "surface" / "surface_0001.ply").vertices
    expected = 500.0 + 1000.0 * v["x"] / (8 * S)
    assert np.abs(v["temperature"] - expected).max() < 1000.0 * S / (8 * S), np.abs(v["temperature"] - expected).max()
    np.testing.assert_allclose(v["melt"], 0.25, rtol=1e-6)
    assert v["temperature"].max() - v["temperature"].min() > 700.0
