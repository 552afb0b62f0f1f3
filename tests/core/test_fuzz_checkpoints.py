"""Property-based fuzzing of the newer features' checkpoints and bodies files.

Two small bakes stopped after frame 2 of 3 (``stopped_jelly``, ``stopped_box`` in tests/conftest.py: a
jelly cube melting on a hot plate, with its elastic rest state, heat, melt and the sph liquid's time
levels; a dynamic box floating in water) are tampered one value at a time: an entry of any checkpoint
array, any slot of the checkpoint's bodies or models record, any slot of a bodies file. ``bake --resume``
(and ``info`` for a bodies file) must end in exit 0, or exit 2 with one line and nothing written; after
exit 0 the frame it wrote reads back finite (``CacheDir.read_particles`` refuses a NaN). The seed is
fixed (``derandomize``) and the examples bounded, so the suite runs the same cases every time.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import copied_cache, file_hashes, run_main
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_damaged_checkpoint import _rewrite
from test_fuzz_inputs import _hostile, _slots

FUZZ = settings(derandomize=True, database=None, deadline=None, print_blob=True, max_examples=24,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# Array entries that broke earlier versions or sit on the edge of a check (cast to the array's type).
_FLOATS = [np.nan, np.inf, -np.inf, 1e308, -1e308, 1e29, -1000.0, -273.15, -273.16, 5.0, -0.5, 1.0, 0.0, 1e-300]
_INTEGERS = [-(2**63), -7, -2, -1, 0, 1, 7, 255, 999, 10**12, 2**63 - 1]


@pytest.fixture
def baked(stopped_jelly, stopped_box):
    return {"jelly": stopped_jelly, "box": stopped_box}


def _entry(draw, array: np.ndarray):
    """An index of ``array`` and a hostile value of its type."""
    index = tuple(draw(st.integers(0, n - 1)) for n in array.shape) if array.size else None
    if np.issubdtype(array.dtype, np.integer):
        info = np.iinfo(array.dtype)
        value = draw(st.one_of(st.sampled_from(_INTEGERS), st.integers(-(2**40), 2**40)))
        return index, int(min(max(value, info.min), info.max))
    return index, draw(st.one_of(st.sampled_from(_FLOATS), st.floats(allow_nan=True, allow_infinity=True)))


@st.composite
def _damage(draw, members: dict, meta: dict):
    """A change to the checkpoint: one array entry, or one slot of its bodies or models record."""
    records = {k: v for k, v in meta.items() if k in ("bodies", "models") and v}
    where = draw(st.sampled_from(["array", "record"] if records else ["array"]))
    if where == "array":
        name = draw(st.sampled_from(sorted(k for k in members if k.startswith("a_") and members[k].size)))
        index, value = _entry(draw, members[name])
        event(f"array {name[2:]}")

        def change(m, _meta):
            m[name] = m[name].copy()
            m[name][index] = value
        return change
    slots = _slots(records)
    at = draw(st.integers(0, len(slots) - 1))
    value = draw(_hostile)
    event("record")

    def change(_m, md):
        container, key = _slots({k: md[k] for k in records})[at]
        container[key] = copy.deepcopy(value)
    return change


def _clean(code: int, err: str, before: dict, root: Path) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
        assert file_hashes(root) == before, "a refused command must not write anything"


@settings(FUZZ)
@given(data=st.data())
def test_resume_survives_any_tampered_checkpoint(baked, data):
    which = data.draw(st.sampled_from(sorted(baked)))
    root = Path(tempfile.mkdtemp(prefix="sph_fuzz_checkpoint_"))
    try:
        cache = copied_cache(baked[which], root)
        path = cache.checkpoint_path(cache.read_manifest()["checkpoint"])
        with np.load(path, allow_pickle=False) as z:
            members = {k: z[k] for k in z.files}
        meta = json.loads(members["meta"].tobytes())
        _rewrite(cache, data.draw(_damage(members, meta)))
        before = file_hashes(cache.root)
        code, _, err = run_main("bake", root / "scene.json", "--out", cache.root, "--resume", "--quiet")
        event(f"resume exit {code}")
        _clean(code, err, before, cache.root)
        if code == 0:
            cache.read_particles(3)  # refuses a non-finite record
    finally:
        shutil.rmtree(root)


@settings(FUZZ)
@given(data=st.data())
def test_info_survives_any_tampered_bodies_file(baked, data):
    root = Path(tempfile.mkdtemp(prefix="sph_fuzz_bodies_"))
    try:
        cache = copied_cache(baked["box"], root)
        path = cache.bodies_path(data.draw(st.sampled_from([1, 2])))
        record = json.loads(path.read_text())
        slots = _slots(record)
        container, key = slots[data.draw(st.integers(0, len(slots) - 1))]
        container[key] = data.draw(_hostile)
        try:
            path.write_text(json.dumps(record))
        except ValueError:  # a value JSON cannot hold
            return
        before = file_hashes(cache.root)
        code, _, err = run_main("info", cache.root)
        event(f"info exit {code}")
        _clean(code, err, before, cache.root)
    finally:
        shutil.rmtree(root)
