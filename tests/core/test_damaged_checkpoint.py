"""Checkpoints of the newer features, tampered: ``bake --resume`` exits 2 with one sentence naming the
checkpoint and the field, no traceback, no crash, nothing written (so no NaN in a new frame).

Two small bakes stopped after frame 2 of 3 (``stopped_jelly``, ``stopped_box`` in tests/conftest.py: a
jelly cube melting on a hot plate, a dynamic box floating in water). Each test copies one, changes one
field of its checkpoint and resumes it.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from conftest import copied_cache, file_hashes, run_main

from sph_addon.core.cache.cache_dir import CacheDir


def _rewrite(cache: CacheDir, change) -> None:
    """Apply ``change(members, meta)`` to the checkpoint's arrays (``a_`` names) and state record."""
    path = cache.checkpoint_path(cache.read_manifest()["checkpoint"])
    with np.load(path, allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    meta = json.loads(members["meta"].tobytes())
    change(members, meta)
    members["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez(path, **members)


def _array(name, value, where=(0, 0)):
    def change(members, meta):
        members[f"a_{name}"] = members[f"a_{name}"].copy()
        members[f"a_{name}"][where] = value
    return change


def _half_a_row(name):
    """One entry of a row changed between NaN (not evaluated yet) and a value: neither state."""
    def change(members, meta):
        a = members[f"a_{name}"] = members[f"a_{name}"].copy()
        a[0, 1] = 1.0 if np.isnan(a[0, 0]) else math.nan
    return change


def _resume(cache: CacheDir):
    return run_main("bake", cache.root.parent / "scene.json", "--out", cache.root, "--resume", "--quiet")


def _refused(cache: CacheDir, field: str) -> None:
    before = file_hashes(cache.root)
    code, _, err = _resume(cache)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "checkpoint_0002.npz" in err and field in err, err
    assert file_hashes(cache.root) == before, "nothing written, nothing repaired"


JELLY_CASES = {
    # An id past the (next_id,) table a compiled kernel looks partners up in crashed the process.
    "rest-partner-10e12": (_array("rest_partner", 10**12), "rest_partner"),
    "rest-partner-negative": (_array("rest_partner", -7), "rest_partner"),
    "rest-partner-next-id": (lambda m, meta: _array("rest_partner", meta["next_id"])(m, meta), "rest_partner"),
    "temperature-nan": (_array("temperature", math.nan, 3), "temperature"),
    "temperature-infinite": (_array("temperature", math.inf, 3), "temperature"),
    "temperature-below-absolute-zero": (_array("temperature", -1000.0, 3), "temperature"),
    "melt-5": (_array("melt", 5.0, 3), "melt"),
    "melt-negative": (_array("melt", -0.5, 3), "melt"),
    "melt-nan": (_array("melt", math.nan, 3), "melt"),
    "rotation-nan": (_array("rotation", math.nan), "rotation"),
    "rotation-1e308": (_array("rotation", 1e308), "rotation"),
    "elastic-dv-nan": (_array("elastic_dv", math.nan), "elastic_dv"),
    "elastic-dv-1e308": (_array("elastic_dv", 1e308), "elastic_dv"),
    "liquid-push-infinite": (_array("liquid_push", -math.inf), "liquid_push"),
    "rest-position-nan": (_array("rest_position", math.nan), "rest_position"),
    "rest-position-1e308": (_array("rest_position", 1e308), "rest_position"),
    "elastic-bonded-7": (_array("elastic_bonded", 7, 0), "elastic_bonded"),
    "acceleration-1e308": (_array("acceleration", 1e308), "acceleration"),
    "acceleration-infinite": (_array("acceleration", math.inf), "acceleration"),
    "acceleration-nan-in-part-of-a-row": (_half_a_row("acceleration"), "acceleration"),
    "time-level-255": (_array("time_level", 255, 0), "time_level"),
    "sph-density-infinite": (_array("sph_density", math.inf, 0), "sph_density"),
    "speed-above-max-speed": (_array("v", 1e5), "'v'"),
    "position-1e29": (_array("x", 1e29), "'x'"),
    "source-beyond-the-scene": (_array("source", 999, 0), "'source'"),
    "source-negative": (_array("source", -2, 0), "'source'"),
}


@pytest.mark.parametrize("damage", sorted(JELLY_CASES))
def test_resume_refuses_a_tampered_elastic_heat_or_leapfrog_state(stopped_jelly, tmp_path, damage):
    change, field = JELLY_CASES[damage]
    cache = copied_cache(stopped_jelly, tmp_path)
    _rewrite(cache, change)
    _refused(cache, field)


def _body(change):
    def edit(members, meta):
        change(meta["bodies"]["1"])
    return edit


def _bodies(value):
    def edit(members, meta):
        meta["bodies"] = value
    return edit


BODY_CASES = {
    "bodies-missing": (lambda m, meta: meta.pop("bodies"), "bodies"),
    "bodies-empty": (_bodies({}), "bodies"),
    "bodies-a-list": (_bodies([{"frame": 2.0}]), "bodies"),
    "bodies-a-string": (_bodies("crate"), "bodies"),
    "body-keyed-to-a-static-collider": (lambda m, meta: meta["bodies"].update({"0": meta["bodies"]["1"]}),
                                        "bodies['0'] is not a dynamic collider"),
    "body-keyed-to-a-missing-collider": (lambda m, meta: meta["bodies"].update({"7": meta["bodies"]["1"]}),
                                         "bodies['7'] is not a collider"),
    "body-moved-to-a-static-collider": (lambda m, meta: meta["bodies"].update({"0": meta["bodies"].pop("1")}),
                                        "bodies['0']"),
    "body-null": (lambda m, meta: meta["bodies"].update({"1": None}), "bodies['1']"),
    "body-quaternion-not-unit": (_body(lambda b: b.update(q=[2.0, 0.0, 0.0, 0.0])), "bodies['1'].q"),
    "body-frame-1e308": (_body(lambda b: b.update(frame=1e308)), "bodies['1'].frame"),
    "body-far-away": (_body(lambda b: b.update(com=[1e13, 0.0, 0.0])), "bodies['1'].com"),
}
for _field in ("frame", "com", "q", "v", "omega", "momentum", "impulse", "torque"):
    for _name, _value in (("nan", math.nan), ("1e308", 1e308), ("string", "fast"), ("null", None)):
        _vector = _value if _field == "frame" else [_value] * (4 if _field == "q" else 3)
        BODY_CASES[f"body-{_field}-{_name}"] = (_body(lambda b, f=_field, v=_vector: b.update({f: v})),
                                                f"bodies['1'].{_field}")
    BODY_CASES[f"body-{_field}-missing"] = (_body(lambda b, f=_field: b.pop(f)), f"bodies['1'].{_field}")
    if _field != "frame":
        BODY_CASES[f"body-{_field}-short"] = (_body(lambda b, f=_field: b.update({f: b[f][:2]})),
                                              f"bodies['1'].{_field}")


@pytest.mark.parametrize("damage", sorted(BODY_CASES))
def test_resume_refuses_a_tampered_body_state(stopped_box, tmp_path, damage):
    change, field = BODY_CASES[damage]
    cache = copied_cache(stopped_box, tmp_path)
    _rewrite(cache, change)
    _refused(cache, field)


# The water preset's grid projection keeps its last step for the substep plan.
_PROJECTION = ("viscoelastic", "pressure_projection_zhu2005")
MODEL_CASES = {}
for _name, _value in (("string", "soon"), ("nan", math.nan), ("negative", -1.0), ("a-list", [0.01])):
    MODEL_CASES[f"model-state-{_name}"] = (
        lambda m, meta, v=_value: meta["models"][_PROJECTION[0]][_PROJECTION[1]].update(projection_dt=v),
        "models['viscoelastic'].pressure_projection_zhu2005.projection_dt")
MODEL_CASES["model-state-not-an-object"] = (lambda m, meta: meta["models"].update(viscoelastic=[1]),
                                            "models['viscoelastic']")


@pytest.mark.parametrize("damage", sorted(MODEL_CASES))
def test_resume_refuses_a_tampered_model_record(stopped_box, tmp_path, damage):
    change, field = MODEL_CASES[damage]
    cache = copied_cache(stopped_box, tmp_path)
    _rewrite(cache, change)
    _refused(cache, field)


@pytest.mark.parametrize("folder", ["bodies", "particles", "state"])
def test_resume_refuses_a_file_where_the_cache_keeps_a_folder(stopped_box, tmp_path, folder):
    cache = copied_cache(stopped_box, tmp_path)
    shutil.rmtree(cache.root / folder)
    (cache.root / folder).write_text("not a folder")
    before = file_hashes(cache.root)
    code, _, err = _resume(cache)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(cache.root / folder) in err and "is not a folder" in err, err
    assert file_hashes(cache.root) == before


def _pose(change):
    def edit(path):
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return edit


BODIES_FILE_CASES = {
    "location-a-string": _pose(lambda d: d["bodies"][0].update(location="here")),
    "location-nan": _pose(lambda d: d["bodies"][0].update(location=[math.nan, 0.0, 0.0])),
    "quaternion-short": _pose(lambda d: d["bodies"][0].update(rotation_quaternion=[1.0])),
    "velocity-missing": _pose(lambda d: d["bodies"][0].pop("velocity")),
    "name-null": _pose(lambda d: d["bodies"][0].update(name=None)),
    "body-a-number": _pose(lambda d: d["bodies"].__setitem__(0, 5)),
    "bodies-a-dict": _pose(lambda d: d.update(bodies={"crate": d["bodies"][0]})),
    "not-utf8": lambda path: path.write_bytes(b'{"frame": 2, "bodies": ["\xff"]}'),
}


@pytest.mark.parametrize("damage", sorted(BODIES_FILE_CASES))
def test_info_refuses_a_damaged_bodies_file(stopped_box, tmp_path, damage):
    cache = copied_cache(stopped_box, tmp_path)
    BODIES_FILE_CASES[damage](cache.bodies_path(2))
    code, _, err = run_main("info", cache.root)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "bodies_0002.json" in err, err


@pytest.mark.parametrize("scene", ["stopped_jelly", "stopped_box"])
def test_an_intact_checkpoint_still_resumes(request, tmp_path, scene):
    """The checks accept what the bake writes: the resume writes frame 3, finite, the same bytes as a bake
    that was never stopped (the particles, and the body's pose), whatever the energy watch and the
    bodies keep across the stop."""
    cache = copied_cache(request.getfixturevalue(scene), tmp_path)
    code, _, err = _resume(cache)
    assert code == 0, err
    assert cache.read_manifest()["frames_done"] == [1, 2, 3]
    frame = cache.read_particles(3)
    assert all(np.isfinite(frame[k]).all() for k in ("x", "y", "z", "vx", "vy", "vz"))
    straight = tmp_path / "straight"
    code, _, err = run_main("bake", cache.root.parent / "scene.json", "--out", straight, "--quiet")
    assert code == 0, err
    assert cache.particles_path(3).read_bytes() == CacheDir(straight).particles_path(3).read_bytes()
    if scene == "stopped_box":
        assert cache.bodies_path(3).read_bytes() == CacheDir(straight).bodies_path(3).read_bytes()
    code, out, err = run_main("info", cache.root)
    assert code == 0 and ("body 'crate'" in out) == (scene == "stopped_box"), (out, err)
