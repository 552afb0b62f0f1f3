"""A source's own mesh carried by its particles (``bound_mesh``, ``deformed_meshes``): binding, rigid motion,
removed particles, the cache's files, and validation of ``bind_mesh``."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import scene_dict
from reference.analytic_sdf import box_mesh, write_mesh_ply

from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.cache.deformed_meshes import DeformedMeshes
from sph_addon.core.cache.plyio import read_ply
from sph_addon.core.errors import InputError
from sph_addon.core.scene.scene_file import parse_scene
from sph_addon.core.sources.bound_mesh import K_NEAREST, bind, deform, nearest

S = 0.05  # particle spacing, m


def _lattice(n: int = 4) -> np.ndarray:
    """n³ particles at the centres of the cells of a cube of side n s from the origin."""
    a = (np.arange(n) + 0.5) * S
    return np.stack(np.meshgrid(a, a, a, indexing="ij"), -1).reshape(-1, 3)


def _surface_vertices(n: int = 4) -> np.ndarray:
    """A grid of points on the cube's faces (half a spacing outside the outermost particles) and a few inside."""
    rng = np.random.default_rng(3)
    side = n * S
    pts = rng.uniform(0.0, side, (120, 3))
    axis = rng.integers(0, 3, len(pts))
    pts[np.arange(len(pts)), axis] = np.where(rng.random(len(pts)) < 0.5, 0.0, side)
    return np.concatenate([pts, rng.uniform(0.2 * side, 0.8 * side, (10, 3))])


def _rotation(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def test_nearest_matches_brute_force_with_ties_to_the_lower_index():
    p = _lattice(5)  # a lattice: many equal distances
    q = np.concatenate([_surface_vertices(5), p[:7], [[2.0, -1.0, 0.3]]])  # far outside the cloud too
    idx, dist = nearest(q, p, 9, S)
    diff = p[None] - q[:, None]
    d2 = diff[..., 0] * diff[..., 0] + diff[..., 1] * diff[..., 1] + diff[..., 2] * diff[..., 2]  # as summed there
    ref = np.lexsort((np.broadcast_to(np.arange(len(p)), d2.shape), d2), axis=1)[:, :9]
    assert np.array_equal(idx, ref)
    assert np.allclose(dist, np.sqrt(np.take_along_axis(d2, ref, axis=1)))


def test_weights_sum_to_one_and_every_vertex_is_bound():
    v = _surface_vertices()
    ids = np.arange(64) * 5 + 11
    b = bind(v, _lattice(), ids, S)
    assert b.ids.shape == (len(v), K_NEAREST) and (b.ids >= 0).all() and np.isin(b.ids, ids).all()
    assert np.allclose(b.weights.sum(axis=1), 1.0, atol=1e-12) and (b.weights >= 0).all()
    # The nearest particle weighs most.
    assert (b.weights[:, 0] >= b.weights.max(axis=1) - 1e-12).all()


def test_binding_depends_on_ids_not_the_order_of_the_world():
    v, p = _surface_vertices(), _lattice()
    ids = np.arange(len(p)) + 100
    perm = np.random.default_rng(1).permutation(len(p))
    a, b = bind(v, p, ids, S), bind(v, p[perm], ids[perm], S)
    assert np.array_equal(a.ids, b.ids) and np.array_equal(a.weights, b.weights)
    assert np.array_equal(a.offsets, b.offsets)


@pytest.mark.parametrize("angle", [0.0, 0.9, 2.5])
def test_rigid_motion_of_the_particles_moves_the_mesh_rigidly(angle):
    v, p = _surface_vertices(), _lattice()
    ids = np.arange(len(p))
    b = bind(v, p, ids, S)
    r, t = _rotation((1.0, -2.0, 0.5), angle), np.array([0.3, -1.2, 2.0])
    perm = np.random.default_rng(2).permutation(len(p))  # reordered, as every substep does
    x = (p @ r.T + t)[perm]
    rot = np.tile(r.ravel(), (len(p), 1))
    out = deform(b, ids[perm], x, rot, v)
    assert out.shape == v.shape
    assert np.abs(out - (v @ r.T + t)).max() < 1e-6


def test_removed_particles_drop_out_and_orphans_keep_their_last_position():
    v, p = _surface_vertices(), _lattice()
    ids = np.arange(len(p))
    b = bind(v, p, ids, S)
    shift = np.array([0.0, 0.0, -0.1])
    keep = p[:, 2] > 2 * S  # the lower half is gone
    last = v + 7.0  # where the previous frame left them
    out = deform(b, ids[keep], p[keep] + shift, np.tile(np.eye(3).ravel(), (keep.sum(), 1)), last)
    follows = np.isin(b.ids, ids[keep]).any(axis=1)
    assert follows.any() and (~follows).any()
    # Renormalised: a translation still carries every vertex that has a particle left.
    assert np.abs(out[follows] - (v[follows] + shift)).max() < 1e-12
    assert np.array_equal(out[~follows], last[~follows])


def test_a_source_with_fewer_particles_than_k():
    v, p = _surface_vertices(), _lattice(1)
    b = bind(v, p, [4], S)
    assert (b.ids[:, 0] == 4).all() and (b.ids[:, 1:] == -1).all() and np.allclose(b.weights[:, 0], 1.0)


def _jelly_scene(tmp_path, model: str = "elastic", bind_mesh: bool = True) -> dict:
    write_mesh_ply(tmp_path / "cube.ply", *box_mesh((0.0, 0.0, 0.0), (4 * S, 4 * S, 4 * S)))
    preset = "jelly" if model == "elastic" else "water"
    return scene_dict(particle_spacing=S, materials=[{"name": "jelly", "model": model, "preset": preset}],
                      sources=[{"type": "box", "material": "jelly", "min": [1, 1, 1], "max": [1.2, 1.2, 1.2]},
                               {"type": "mesh", "material": "jelly", "path": "cube.ply", "bind_mesh": bind_mesh}],
                      colliders=[])


def test_bind_mesh_needs_an_elastic_material(tmp_path):
    with pytest.raises(InputError) as err:
        parse_scene(_jelly_scene(tmp_path, model="viscoelastic"), tmp_path)
    assert err.value.where == "sources[1].bind_mesh"
    assert "elastic" in err.value.message and "viscoelastic" in err.value.message


def _world(scene, p: np.ndarray) -> dict:
    """Synthetic world arrays of the elastic model's layout: the box source's 8 particles, then the mesh's."""
    n = len(p)
    return {"x": np.concatenate([p + 1.0, p]), "id": np.arange(2 * n, dtype=np.int64),
            "source": np.repeat(np.array([0, 1], np.int16), n),
            "rest_position": np.zeros((2 * n, 3)), "rotation": np.zeros((2 * n, 9)),
            "elastic_bonded": np.zeros(2 * n, np.uint8)}


def test_deformed_frames_in_the_cache(tmp_path, monkeypatch):
    import sph_addon.core.scene.scene_file as scene_mod

    monkeypatch.setattr(scene_mod, "_check_bound_meshes", lambda *a: None)  # no elastic model needed here
    scene = parse_scene(_jelly_scene(tmp_path, model="viscoelastic"), tmp_path)
    p = _lattice()
    world = _world(scene, p)
    meshes = DeformedMeshes(scene, world)
    cache = CacheDir(tmp_path / "cache")
    meshes.write(cache, world, 1)
    # Bonded and turned a quarter about z, moved, reordered.
    r, t = _rotation((0, 0, 1), np.pi / 2), np.array([0.5, 0.0, 0.25])
    order = np.random.default_rng(0).permutation(2 * len(p))
    moved = {k: a.copy() for k, a in world.items()}
    moved["rest_position"] = moved["x"].copy()
    moved["x"][len(p):] = p @ r.T + t
    moved["rotation"][len(p):] = r.ravel()
    moved["elastic_bonded"][:] = 1
    meshes.write(cache, {k: a[order] for k, a in moved.items()}, 2)
    v0, _ = box_mesh((0.0, 0.0, 0.0), (4 * S, 4 * S, 4 * S))
    first, second = (read_ply(cache.deformed_path(1, f)) for f in (1, 2))
    assert first.vertices.dtype.names == ("x", "y", "z") and first.vertices.dtype["x"] == np.float32
    assert len(first.vertices) == len(second.vertices) == len(v0) and len(first.faces) == 0
    assert np.abs(first.positions() - v0).max() < 1e-6  # unchanged at rest, in the file's vertex order
    assert np.abs(second.positions() - (v0 @ r.T + t)).max() < 1e-6
    assert not cache.deformed_path(0, 1).exists()  # the box source has no mesh
    assert cache.deformed_path(1, 2) in cache.owned_files()
    cache.free()
    assert not (cache.root / "deformed").exists()


# ---------------------------------------------------------------------------- bakes with the elastic model

def _dropped_jelly(tmp_path, frame_end: int) -> dict:
    """A 0.2 m jelly cube (64 particles) with a second, unbound box beside it, falling onto a tank's floor."""
    data = _jelly_scene(tmp_path)
    data["sources"][0].update(min=[0.3, 0.0, 0.05], max=[0.4, 0.1, 0.15])
    data["sources"][1]["velocity"] = [0.5, 0.0, 0.0]
    data.update(frame_end=frame_end, colliders=[{"type": "box_container", "name": "tank", "size": [1.0, 1.0, 1.0],
                                                 "position": [0.2, 0.1, 0.45]}])
    write_mesh_ply(tmp_path / "cube.ply", *box_mesh((0.0, 0.0, 0.05), (4 * S, 4 * S, 0.05 + 4 * S)))
    return data


def test_a_baked_jelly_writes_its_mesh_every_frame(tmp_path, write_scene):
    from sph_addon.core.bake import bake

    bake(write_scene(_dropped_jelly(tmp_path, 4)), tmp_path / "c")
    cache = CacheDir(tmp_path / "c")
    v0, _ = box_mesh((0.0, 0.0, 0.05), (4 * S, 4 * S, 0.05 + 4 * S))
    frames = [read_ply(cache.deformed_path(1, f)).positions() for f in range(1, 5)]
    assert all(len(f) == len(v0) for f in frames) and all(np.isfinite(f).all() for f in frames)
    assert np.abs(frames[0] - v0).max() < 1e-6  # the first frame is the mesh itself, in its vertex order
    assert frames[-1][:, 0].mean() > v0[:, 0].mean() + 0.02  # thrown along +x: the mesh went with it
    assert not list((cache.root / "deformed").glob("source_0_*.ply"))


def test_resume_after_sigkill_rewrites_the_deformed_frames_byte_for_byte(tmp_path, write_scene):
    import json
    import os
    import signal
    import subprocess
    import sys

    from conftest import REPO, wait_until

    from sph_addon.core.bake import bake

    scene = write_scene(_dropped_jelly(tmp_path, 16))
    full, killed = tmp_path / "full", tmp_path / "killed"
    bake(scene, full)

    def done() -> int:
        try:
            return len(json.loads((killed / "manifest.json").read_text())["frames_done"])
        except (OSError, ValueError):
            return 0

    proc = subprocess.Popen([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(killed), "--quiet"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: done() >= 3, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 3 <= done() < 16, "the kill must land mid-bake"
    bake(scene, killed, resume=True)
    names = sorted(p.name for p in (full / "deformed").iterdir())
    assert names == [f"source_1_{f:04d}.ply" for f in range(1, 17)]
    assert names == sorted(p.name for p in (killed / "deformed").iterdir())
    for name in names:
        assert (full / "deformed" / name).read_bytes() == (killed / "deformed" / name).read_bytes(), name
