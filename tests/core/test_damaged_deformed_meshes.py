"""Deformed meshes of a cache (``deformed/source_<k>_####.ply``), damaged: ``info``, ``preview`` and
``bake --resume`` exit 2 with one sentence naming the file and what is wrong, no traceback, nothing
written; an intact cache is reported (frames and vertices of each bound source) and previewed.

One small bake (in-process, module scope) of a 0.2 m jelly cube whose own mesh (a box, 8 vertices) is
bound to its particles, stopped after frame 2 of 3 so that a resume has a frame to write; each test
copies it and damages one file.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import copied_cache, file_hashes, run_main, scene_dict
from reference.analytic_sdf import box_mesh, write_mesh_ply

from sph_addon.core.bake import bake
from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.cache.deformed_meshes import VERTEX_DTYPE
from sph_addon.core.cache.plyio import write_ply

S = 0.05  # particle spacing, m: the coarsest at which the cube is 4 particles wide
BOUND = 1  # the bound source's index in the scene


@pytest.fixture(scope="module")
def baked(tmp_path_factory):
    root = tmp_path_factory.mktemp("jelly")
    write_mesh_ply(root / "cube.ply", *box_mesh((0.0, 0.0, 0.05), (4 * S, 4 * S, 0.05 + 4 * S)))
    data = scene_dict(
        particle_spacing=S, frame_end=3, materials=[{"name": "jelly", "model": "elastic", "preset": "jelly"}],
        sources=[{"type": "box", "material": "jelly", "min": [0.3, 0.0, 0.05], "max": [0.4, 0.1, 0.15]},
                 {"type": "mesh", "material": "jelly", "path": "cube.ply", "bind_mesh": True}],
        colliders=[{"type": "box_container", "name": "tank", "size": [1.0, 1.0, 1.0], "position": [0.2, 0.1, 0.45]}])
    (root / "scene.json").write_text(json.dumps(data))
    done = []
    bake(root / "scene.json", root / "cache", progress=lambda p: done.append(p.frame), should_stop=lambda: 2 in done)
    assert CacheDir(root / "cache").read_manifest()["checkpoint"] == 2
    return root


@pytest.fixture
def cache(baked, tmp_path):
    copy = copied_cache(baked, tmp_path)
    (tmp_path / "cube.ply").write_bytes((baked / "cube.ply").read_bytes())  # the scene's mesh, for a resume
    return copy


def _vertices(cache: CacheDir, frame: int, change) -> None:
    """Rewrite ``frame``'s deformed mesh (a well-formed PLY) with ``change`` applied to its vertices."""
    rec = change(cache.read_deformed(BOUND, frame))
    out = np.empty(len(rec), VERTEX_DTYPE)
    out["x"], out["y"], out["z"] = rec[:, 0], rec[:, 1], rec[:, 2]
    write_ply(cache.deformed_path(BOUND, frame), out)


def _set(value):
    def change(x):
        x[3, 1] = value
        return x
    return change


def _cut(cache: CacheDir, frame: int) -> None:
    path = cache.deformed_path(BOUND, frame)
    path.write_bytes(path.read_bytes()[:-5])


def _other_fields(cache: CacheDir, frame: int) -> None:
    rec = np.zeros(8, [("x", "<f4"), ("y", "<f4"), ("q", "<f4")])
    write_ply(cache.deformed_path(BOUND, frame), rec)


# damage -> (change of a frame's file, what the message says)
CASES = {
    "cut": (_cut, "truncated"),
    "empty": (lambda c, f: c.deformed_path(BOUND, f).write_bytes(b""), "damaged deformed mesh"),
    "not-a-ply": (lambda c, f: c.deformed_path(BOUND, f).write_text("solid cube\nendsolid\n"),
                  "damaged deformed mesh"),
    "nan-vertex": (lambda c, f: _vertices(c, f, _set(np.nan)), "NaN or infinite"),
    "inf-vertex": (lambda c, f: _vertices(c, f, _set(np.inf)), "NaN or infinite"),
    "a-vertex-fewer": (lambda c, f: _vertices(c, f, lambda x: x[:-1]), "7 vertices where its source has 8"),
    "a-vertex-more": (lambda c, f: _vertices(c, f, lambda x: np.concatenate([x, x[:1]])),
                      "9 vertices where its source has 8"),
    "other-fields": (_other_fields, "not x y z"),
}


def _one_sentence(code: int, err: str, cache: CacheDir, frame: int, says: str) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert cache.deformed_path(BOUND, frame).name in err and says in err, err


@pytest.mark.parametrize("damage", sorted(CASES))
@pytest.mark.parametrize("command", ["info", "preview"])
def test_info_and_preview_refuse_a_damaged_deformed_mesh(cache, damage, command):
    change, says = CASES[damage]
    change(cache, 1)
    before = file_hashes(cache.root)
    code, out, err = run_main(command, cache.root, *(["--out", cache.root.parent / "p.png"] if command == "preview"
                                                     else []))
    _one_sentence(code, err, cache, 1, says)
    assert file_hashes(cache.root) == before
    assert not (cache.root.parent / "p.png").exists()


@pytest.mark.parametrize("damage", sorted(CASES))
def test_resume_refuses_a_damaged_deformed_mesh_of_the_checkpoint_frame(cache, damage):
    """The vertices a resume starts from are the checkpoint frame's file: a NaN there would be written
    into every later frame of a vertex whose particles are gone."""
    change, says = CASES[damage]
    change(cache, 2)
    before = file_hashes(cache.root.parent)
    code, _, err = run_main("bake", cache.root.parent / "scene.json", "--out", cache.root, "--resume", "--quiet")
    _one_sentence(code, err, cache, 2, says)
    assert file_hashes(cache.root.parent) == before, "nothing written"


def test_an_intact_cache_reports_its_deformed_meshes(cache):
    code, out, err = run_main("info", cache.root)
    assert code == 0, err
    assert f"deformed mesh of sources[{BOUND}]: 2 of 2 frames, 8 vertices each" in out, out
    code, out, err = run_main("preview", cache.root, "--out", cache.root.parent / "p.png")
    assert code == 0 and (cache.root.parent / "p.png").stat().st_size > 0, err
    code, _, err = run_main("bake", cache.root.parent / "scene.json", "--out", cache.root, "--resume", "--quiet")
    assert code == 0, err
    assert np.isfinite(cache.read_deformed(BOUND, 3, 8)).all()


@pytest.mark.parametrize("record", [[8], {"1": "eight"}, {"one": 8}, {"1": -8}])
def test_info_refuses_a_damaged_record_of_vertex_counts(cache, record):
    manifest = json.loads(cache.manifest_path.read_text())
    manifest["deformed_vertices"] = record
    cache.manifest_path.write_text(json.dumps(manifest))
    code, _, err = run_main("info", cache.root)
    assert code == 2 and "manifest.json" in err and "deformed_vertices" in err, err
    assert len(err.strip().splitlines()) == 1, err
