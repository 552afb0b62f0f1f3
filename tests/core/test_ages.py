"""Particle ages in the cache's particle frames (core/cache/ages.py, written by core/bake.py)."""

import json

import numpy as np
import pytest
from conftest import scene_dict

from sph_addon.core.bake import bake
from sph_addon.core.cache.ages import Births
from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.errors import InputError

FPS = 30


def test_births_step_function():
    b = Births()
    b.record(1, 100)
    b.record(2, 100)  # nothing emitted: no new pair
    b.record(5, 130)
    assert b.pairs == [[1, 100], [5, 130]]
    ages = b.ages(np.array([0, 99, 100, 129]), 7, 30.0)
    np.testing.assert_allclose(ages, [6 / 30, 6 / 30, 2 / 30, 2 / 30], rtol=1e-6)
    assert ages.dtype == np.float32
    b.truncate(4)
    assert b.pairs == [[1, 100]]


@pytest.mark.parametrize("pairs", ["1-3", [[1, 5], [1, 7]], [[1, 5], [2, 3]], [[1, True]], [[1, 2, 3]]])
def test_malformed_births_are_refused(pairs):
    with pytest.raises(InputError, match="births"):
        Births.from_manifest({"births": pairs}, "manifest.json")


def test_old_manifest_has_no_births():
    assert Births.from_manifest({"frames_done": [1]}, "manifest.json") is None


def _inflow_scene(frame_end: int) -> dict:
    return scene_dict(frame_end=frame_end, fps=FPS, particle_spacing=0.04, colliders=[],
                      sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.2, 0.2, 0.12]},
                               {"type": "inflow", "material": "water", "shape": "disc", "center": [0.1, 0.1, 0.6],
                                "radius": 0.05, "velocity": [0, 0, -1], "rate": 0.02, "frame_start": 1,
                                "frame_end": frame_end}],
                      domain={"min": [-0.5, -0.5, 0.0], "max": [0.7, 0.7, 1.0]})


def test_ages_count_from_the_first_frame_a_particle_appears_in(tmp_path, write_scene):
    scene = write_scene(_inflow_scene(5))
    bake(scene, tmp_path / "c")
    cache = CacheDir(tmp_path / "c")
    first_seen: dict[int, int] = {}
    emitted_later = 0
    for frame in range(1, 6):
        v = cache.read_particles(frame)
        np.testing.assert_array_equal(v["particle_id"], v["id"])
        for i in v["id"]:
            first_seen.setdefault(int(i), frame)
        expected = np.array([(frame - first_seen[int(i)]) / FPS for i in v["id"]], np.float32)
        np.testing.assert_allclose(v["age"], expected, atol=1e-6)
        emitted_later += int(np.sum(v["age"] == 0)) if frame > 1 else 0
    assert emitted_later > 0, "the inflow emitted during the bake: some particles are 0 s old"
    births = json.loads(cache.manifest_path.read_text())["births"]
    assert births[0] == [1, int(cache.read_particles(1)["id"].max()) + 1]
    assert len(births) > 1, "the inflow's particles got later frames"


def test_resumed_bake_writes_the_same_ages(tmp_path, write_scene):
    scene = write_scene(_inflow_scene(5))
    bake(scene, tmp_path / "full")
    calls = {"n": 0}

    def stop_after_two_frames():
        calls["n"] += 1
        return calls["n"] > 2

    bake(scene, tmp_path / "resumed", should_stop=stop_after_two_frames)
    assert not CacheDir(tmp_path / "resumed").read_manifest()["complete"]
    bake(scene, tmp_path / "resumed", resume=True)
    for frame in range(1, 6):
        a = CacheDir(tmp_path / "full").read_particles(frame)
        b = CacheDir(tmp_path / "resumed").read_particles(frame)
        np.testing.assert_array_equal(a["age"], b["age"])
        np.testing.assert_array_equal(a["id"], b["id"])


def test_a_bake_started_without_ages_resumes_without_them(tmp_path, write_scene):
    """A cache begun by an older version (no births in its manifest) keeps its format when resumed."""
    scene = write_scene(_inflow_scene(4))
    out = tmp_path / "c"
    calls = {"n": 0}

    def stop_after_one_frame():
        calls["n"] += 1
        return calls["n"] > 1

    bake(scene, out, should_stop=stop_after_one_frame)
    cache = CacheDir(out)
    manifest = cache.read_manifest()
    del manifest["births"]
    cache.write_manifest(manifest)
    bake(scene, out, resume=True)
    assert "age" not in cache.read_particles(4).dtype.names
    assert "age" in cache.read_particles(1).dtype.names  # written before the "upgrade": untouched
