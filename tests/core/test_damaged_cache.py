"""Hostile or damaged caches: every kind is exit 2 naming the file, one line, no traceback,
nothing written and nothing "repaired", for ``bake --resume``, ``info``, ``preview`` and ``mesh``.

One small bake (in-process, module scope) is copied and damaged per test.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from conftest import copied_cache, file_hashes, run_main, scene_dict

from sph_addon.core.cache.cache_dir import CacheDir


@pytest.fixture(scope="module")
def baked(tmp_path_factory):
    root = tmp_path_factory.mktemp("baked")
    scene = root / "scene.json"
    scene.write_text(json.dumps(scene_dict(frame_end=2)))
    code, _, err = run_main("bake", scene, "--out", root / "cache", "--quiet")
    assert code == 0, err
    return root


@pytest.fixture
def cache(baked, tmp_path):
    return copied_cache(baked, tmp_path)



def _rewrite_checkpoint(cache: CacheDir, change) -> None:
    frame = cache.read_manifest()["checkpoint"]
    path = cache.checkpoint_path(frame)
    with np.load(path, allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    change(members)
    np.savez(path, **members)


def _npz_with_huge_header(cache: CacheDir) -> None:
    path = cache.checkpoint_path(cache.read_manifest()["checkpoint"])
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 3)})
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("a_x_huge.npy", buf.getvalue() + b"\0" * 64)
    # Replace the real x by the lying one.
    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["a_x.npy"] = members.pop("a_x_huge.npy")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def _edit_manifest(cache: CacheDir, change) -> None:
    m = json.loads(cache.manifest_path.read_text())
    m = change(m) or m
    cache.manifest_path.write_text(json.dumps(m))


def _set(key, value):
    def change(m):
        m[key] = value
    return change


def _edit_ply(cache: CacheDir, frame: int, change) -> None:
    path = cache.particles_path(frame)
    head, body = path.read_bytes().split(b"end_header\n", 1)
    path.write_bytes(change(head.decode()).encode() + b"end_header\n" + body)


RESUME_CASES = {
    "checkpoint-wrong-shape": lambda c: _rewrite_checkpoint(c, lambda m: m.update(a_x=m["a_x"][:, :2].copy())),
    "checkpoint-wrong-dtype": lambda c: _rewrite_checkpoint(c, lambda m: m.update(a_x=m["a_x"].astype("f4"))),
    "checkpoint-missing-x": lambda c: _rewrite_checkpoint(c, lambda m: m.pop("a_x")),
    "checkpoint-nan-positions": lambda c: _rewrite_checkpoint(c, lambda m: m["a_x"].__setitem__((0, 0), np.nan)),
    "checkpoint-duplicate-ids": lambda c: _rewrite_checkpoint(c, lambda m: m["a_id"].__setitem__(slice(None), 0)),
    "checkpoint-no-meta": lambda c: _rewrite_checkpoint(c, lambda m: m.pop("meta")),
    "checkpoint-meta-not-json": lambda c: _rewrite_checkpoint(
        c, lambda m: m.update(meta=np.frombuffer(b"[[[", np.uint8))),
    "checkpoint-other-frame": lambda c: _rewrite_checkpoint(c, lambda m: m.update(meta=np.frombuffer(
        json.dumps(dict(json.loads(m["meta"].tobytes()), frame=1)).encode(), np.uint8))),
    "checkpoint-watch-mistyped": lambda c: _rewrite_checkpoint(c, lambda m: m.update(meta=np.frombuffer(
        json.dumps(dict(json.loads(m["meta"].tobytes()), watch={"budget": "lots"})).encode(), np.uint8))),
    "checkpoint-substeps-mistyped": lambda c: _rewrite_checkpoint(c, lambda m: m.update(meta=np.frombuffer(
        json.dumps(dict(json.loads(m["meta"].tobytes()), substeps=-4)).encode(), np.uint8))),
    "checkpoint-10e12-elements": _npz_with_huge_header,
    "checkpoint-not-zip": lambda c: c.checkpoint_path(2).write_bytes(b"not a zip file at all"),
    "checkpoint-missing": lambda c: c.checkpoint_path(2).unlink(),
    "checkpoint-entry-escapes": lambda c: _edit_manifest(c, _set("checkpoint", "../../etc/passwd")),
}


@pytest.mark.parametrize("damage", sorted(RESUME_CASES))
def test_resume_refuses_a_damaged_checkpoint(cache, damage):
    RESUME_CASES[damage](cache)
    before = file_hashes(cache.root.parent)
    code, _, err = run_main("bake", cache.root.parent / "scene.json", "--out", cache.root, "--resume", "--quiet")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "checkpoint" in err or "manifest" in err, err
    assert str(cache.root) in err, "the message names the file"
    assert file_hashes(cache.root.parent) == before, "nothing written, nothing repaired"


MANIFEST_CASES = {
    "manifest-a-list": lambda c: c.manifest_path.write_text("[1, 2, 3]"),
    "manifest-frames-a-string": lambda c: _edit_manifest(c, _set("frames_done", "abc")),
    "manifest-stats-mistyped": lambda c: _edit_manifest(c, lambda m: m["stats"]["2"].update(particles="many")),
    "manifest-bounds-mistyped": lambda c: _edit_manifest(c, lambda m: m["stats"]["1"].update(bounds_min=[1])),
    "manifest-deep": lambda c: c.manifest_path.write_text("[" * 3000 + "]" * 3000),
    "manifest-not-utf8": lambda c: c.manifest_path.write_bytes(b'{"format": "\xff"}'),
    "manifest-frame-outside-range": lambda c: _edit_manifest(c, _set("frames_done", [1, 2, 99])),
}


@pytest.mark.parametrize("command", ["info", "preview"])
@pytest.mark.parametrize("damage", sorted(MANIFEST_CASES))
def test_info_and_preview_refuse_a_damaged_manifest(cache, damage, command):
    MANIFEST_CASES[damage](cache)
    before = file_hashes(cache.root)
    code, out, err = run_main(command, cache.root)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "manifest.json" in err, err
    assert file_hashes(cache.root) == before


PLY_CASES = {
    "ply-count-lowered": lambda c: _edit_ply(c, 2, lambda h: h.replace("element vertex 384", "element vertex 100")),
    "ply-count-raised": lambda c: _edit_ply(c, 2, lambda h: h.replace("element vertex 384", "element vertex 999")),
    "ply-no-x": lambda c: _edit_ply(c, 2, lambda h: h.replace("property float x\n", "property float q\n")),
    "ply-empty": lambda c: c.particles_path(2).write_bytes(b""),
    # The header reader refuses a property declared twice, for every command (preview raised ValueError).
    "ply-x-twice": lambda c: _edit_ply(c, 2, lambda h: h.replace("property float y\n", "property float x\n")),
}


@pytest.mark.parametrize("damage", sorted(PLY_CASES))
def test_preview_refuses_a_damaged_particle_frame(cache, damage):
    PLY_CASES[damage](cache)
    before = file_hashes(cache.root)
    code, _, err = run_main("preview", cache.root, "--frames", "2-2")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "particles_0002.ply" in err, err
    assert file_hashes(cache.root) == before


@pytest.mark.parametrize("damage", ["ply-no-x", "ply-count-raised", "ply-empty", "ply-x-twice"])
def test_mesh_reports_a_damaged_particle_frame(cache, damage):
    PLY_CASES[damage](cache)
    code, out, err = run_main("mesh", cache.root, "--frames", "2-2", "--quiet")
    assert code == 2 and "frame 2" in err and "Traceback" not in err, (out, err)
    assert not cache.surface_path(2).exists()


def test_an_intact_cache_still_resumes_and_reads(cache):
    """The checks accept what the bake writes."""
    code, _, err = run_main("bake", cache.root.parent / "scene.json", "--out", cache.root, "--resume", "--quiet")
    assert code == 0, err
    assert run_main("info", cache.root)[0] == 0
    arrays, meta = cache.read_checkpoint(2)
    assert arrays["x"].flags.writeable and meta["frame"] == 2
