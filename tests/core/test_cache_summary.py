"""One reader of a cache's state, one existing-bake check, one validation per bake."""

import json

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core import bake as core_bake
from sph_addon.core.cache.cache_dir import CacheDir, CacheSummary
from sph_addon.core.durations import eta_seconds, format_duration
from sph_addon.core.errors import InputError
from sph_addon.core.scene import preflight
from sph_addon.core.scene.scene_file import parse_scene


def _manifest(cache: CacheDir, **fields) -> None:
    m = cache.new_manifest("test", 1, 5)
    m.update(fields)
    cache.root.mkdir(parents=True, exist_ok=True)
    cache.write_manifest(m)


# ---------------------------------------------------------------------------- summary

def test_summary_of_a_missing_cache_is_not_baked(tmp_path):
    assert CacheDir(tmp_path / "nowhere").summary() == CacheSummary(baked=False)
    assert CacheDir(tmp_path).summary() == CacheSummary(baked=False)


def test_summary_of_a_partial_bake(tmp_path):
    cache = CacheDir(tmp_path)
    _manifest(cache, frames_done=[1, 2, 3], checkpoint=2)
    (tmp_path / "surface").mkdir()
    for f in (1, 2):
        cache.surface_path(f).write_bytes(b"")
    (tmp_path / "surface" / "notes.txt").write_text("not a mesh")
    assert cache.summary() == CacheSummary(baked=True, complete=False, first_frame=1, last_frame=3,
                                           frames_done=3, checkpoint=2, frames_meshed=2)


def test_summary_of_an_empty_complete_bake(tmp_path):
    cache = CacheDir(tmp_path)
    _manifest(cache, complete=True)
    s = cache.summary()
    assert s.baked and s.complete and s.frames_done == 0 and s.first_frame is None and s.checkpoint is None


@pytest.mark.parametrize("content,expected", [
    ("{not json", "unreadable manifest"),
    (b"\xff\xfe\x00garbage", "unreadable manifest"),
    ("[1, 2]", "unknown cache format"),
    (json.dumps({"format": "other/1"}), "unknown cache format"),
    (json.dumps({"format": "sph_addon.cache/1", "frames_done": "1-3"}), "frames_done"),
    (json.dumps({"format": "sph_addon.cache/1", "frames_done": [1, True]}), "frames_done"),
    (json.dumps({"format": "sph_addon.cache/1", "frames_done": [1], "checkpoint": "1"}), "checkpoint"),
    (json.dumps({"format": "sph_addon.cache/1", "frames_done": [1], "complete": "yes"}), "complete"),
], ids=["not json", "not utf-8", "not an object", "other format", "frames not a list", "bool frame",
        "checkpoint text", "complete text"])
def test_summary_of_a_damaged_manifest_names_the_file(tmp_path, content, expected):
    path = tmp_path / "manifest.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError) as info:
        CacheDir(tmp_path).summary()
    assert info.value.where == str(path) and expected in info.value.message


# ---------------------------------------------------------------------------- has_bake

def test_has_bake(tmp_path):
    cache = CacheDir(tmp_path / "c")
    assert not cache.has_bake(), "a missing folder holds no bake"
    cache.root.mkdir()
    (cache.root / "notes.txt").write_text("mine")
    assert not cache.has_bake(), "other files are not a bake"
    # A bake killed before its first manifest write leaves a particle frame: still a bake.
    cache.particles_path(7).parent.mkdir()
    cache.particles_path(7).write_bytes(b"")
    assert cache.has_bake()
    cache.particles_path(7).unlink()
    _manifest(cache)
    assert not cache.has_bake(), "a bake stopped before its first frame holds nothing to lose"
    _manifest(cache, frames_done=[1])
    assert cache.has_bake()


# ---------------------------------------------------------------------------- durations

@pytest.mark.parametrize("seconds,text", [(0, "00:00"), (59.4, "00:59"), (61, "01:01"), (3599, "59:59"),
                                          (3600, "1:00:00"), (36000 + 62, "10:01:02"),
                                          (float("nan"), "--:--"), (float("inf"), "--:--")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_eta_seconds():
    assert eta_seconds(10.0, 2, 3) == 15.0
    assert np.isnan(eta_seconds(10.0, 0, 3))


# ---------------------------------------------------------------------------- one validation per bake

@pytest.fixture
def count_parses(monkeypatch):
    calls = []
    real = preflight.parse_scene  # the bake reads a scene through preflight.check_bake

    def counting(data, base_dir):
        calls.append((data.get("frame_start"), data.get("frame_end")))
        return real(data, base_dir)

    monkeypatch.setattr(preflight, "parse_scene", counting)
    return calls


def test_a_scene_file_with_frames_is_validated_once(tmp_path, write_scene, count_parses):
    prepared = core_bake.prepare(write_scene(scene_dict(frame_end=3)), tmp_path / "out", frames=(2, 9))
    assert count_parses == [(2, 9)]
    assert (prepared.scene.frame_start, prepared.scene.frame_end) == (2, 9)
    assert not (tmp_path / "out").exists(), "prepare writes nothing"


def test_a_validated_scene_is_not_validated_again(tmp_path, count_parses):
    scene = parse_scene(scene_dict(frame_end=2), tmp_path)
    prepared = core_bake.prepare(scene, tmp_path / "out")
    assert prepared.scene is scene and count_parses == []
    # Another frame range is another scene: that one is validated.
    assert core_bake.prepare(scene, tmp_path / "out", frames=(1, 4)).scene.frame_end == 4
    assert count_parses == [(1, 4)]


def test_bake_of_a_prepared_scene_then_resume(tmp_path, count_parses):
    """The Blender path: a Scene validated by the export, prepared, baked, then resumed; one parse in all."""
    out = tmp_path / "out"
    scene = parse_scene(json.loads(json.dumps(scene_dict(frame_end=2))), tmp_path)
    manifest = core_bake.bake(core_bake.prepare(scene, out))
    assert manifest["complete"] and manifest["frames_done"] == [1, 2]
    with pytest.raises(InputError, match="already holds a bake"):
        core_bake.prepare(scene, out)
    # Resume compares the stored scene.json with the Scene's raw JSON, as a file-based resume does.
    assert core_bake.bake(core_bake.prepare(scene, out, resume=True))["complete"]
    assert count_parses == []
    changed = parse_scene(scene_dict(frame_end=2, fps=24), tmp_path)
    with pytest.raises(InputError, match="scene changed"):
        core_bake.prepare(changed, out, resume=True)


def test_bake_of_a_prepared_scene_takes_no_second_set_of_options(tmp_path):
    prepared = core_bake.prepare(parse_scene(scene_dict(frame_end=2), tmp_path), tmp_path / "out")
    with pytest.raises(TypeError):
        core_bake.bake(prepared, tmp_path / "elsewhere")
    with pytest.raises(TypeError):
        core_bake.bake(prepared, force=True)
    with pytest.raises(TypeError):
        core_bake.bake(tmp_path / "scene.json")
