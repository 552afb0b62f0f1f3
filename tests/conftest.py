"""Shared fixtures: small scenes built in code, so each test states its own setup."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENES = REPO / "scripts" / "scenes"


def scene_dict(**overrides) -> dict:
    """A small water box in a tank; override any top-level key."""
    base = {
        "format": "sph_addon.scene/2",
        "name": "test",
        "particle_spacing": 0.05,
        "frame_start": 1,
        "frame_end": 3,
        "fps": 30,
        "materials": [{"name": "water", "preset": "water"}],
        "sources": [{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.4, 0.4, 0.3]}],
        "colliders": [{"type": "box_container", "name": "tank", "size": [0.4, 0.4, 1.0],
                       "position": [0.2, 0.2, 0.5]}],
    }
    base.update(copy.deepcopy(overrides))
    return base


@pytest.fixture
def write_scene(tmp_path):
    def _write(data: dict, name: str = "scene.json") -> Path:
        p = tmp_path / name
        p.write_text(json.dumps(data))
        return p

    return _write


def copied_cache(baked: Path, tmp_path: Path):
    """A copy of the bake in ``baked`` (its scene.json and cache/) under ``tmp_path``, as a ``CacheDir``."""
    from sph_addon.core.cache.cache_dir import CacheDir

    shutil.copy(baked / "scene.json", tmp_path / "scene.json")
    shutil.copytree(baked / "cache", tmp_path / "cache")
    return CacheDir(tmp_path / "cache")


def file_hashes(root: Path) -> dict:
    """Every file under ``root`` and its SHA-256: what a refused command must leave as it was."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def run_main(*args) -> tuple[int, str, str]:
    """``python -m sph_addon ARGS`` in this process (fast: no interpreter start, numba already loaded).

    Returns (exit code, stdout, stderr). An exception escaping ``main`` is not caught: a
    traceback is exactly what these tests look for.
    """
    import contextlib
    import io

    from sph_addon.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def wait_until(condition, proc, timeout: float = 300.0) -> None:
    """Poll ``condition()`` every 5 ms until true; fail if the subprocess ``proc`` ends first or time runs out."""
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.005)
    raise AssertionError(f"timed out after {timeout} s")


# Two small bakes stopped after frame 2 of 3 (their checkpoints kept, as a killed bake leaves them), so a
# resume has a frame to write: a jelly cube melting on a hot plate (the elastic rest state, heat, melt,
# the sph liquid's individual time steps) and a dynamic box floating in water (a body's state, the water
# model's record). Shared by the tampered-checkpoint tests and their fuzzing.
_THERMAL = {"thermal_conductivity": 5.0, "specific_heat": 10.0}
JELLY_MELTING = scene_dict(
    particle_spacing=0.0125, frame_end=3,
    materials=[{"name": "jelly", "model": "elastic", "preset": "jelly",
                "params": {**_THERMAL, "melts_into": "melted", "liquidus": 40.0, "solidus": 30.0}},
               {"name": "melted", "model": "sph", "preset": "classic_water",
                "params": {**_THERMAL, "density": 1050.0}}],
    sources=[{"type": "box", "material": "jelly", "min": [-0.025, -0.025, 0], "max": [0.025, 0.025, 0.05],
              "temperature": 20.0}],
    colliders=[{"type": "box_container", "name": "plate", "size": [0.3, 0.3, 0.3], "position": [0, 0, 0.15],
                "heat_contact": True, "temperature": 80.0}])
BOX_FLOATING = scene_dict(
    particle_spacing=0.05, frame_end=3,
    sources=[{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.5, 0.25, 0.15]}],
    colliders=[{"type": "box_container", "name": "tank", "size": [0.5, 0.25, 0.6], "position": [0.25, 0.125, 0.3]},
               {"type": "box", "name": "crate", "size": [0.2, 0.15, 0.1], "position": [0.25, 0.125, 0.22],
                "dynamic": True, "density": 500.0}])


def _bake_two_of_three(root: Path, data: dict) -> Path:
    """``data`` baked under ``root`` (scene.json, cache/) and stopped after frame 2 of 3."""
    from sph_addon.core.bake import bake
    from sph_addon.core.cache.cache_dir import CacheDir

    scene = root / "scene.json"
    scene.write_text(json.dumps(data))
    done = []
    bake(scene, root / "cache", progress=lambda p: done.append(p.frame), should_stop=lambda: 2 in done)
    assert CacheDir(root / "cache").read_manifest()["checkpoint"] == 2
    return root


@pytest.fixture(scope="session")
def stopped_jelly(tmp_path_factory):
    return _bake_two_of_three(tmp_path_factory.mktemp("jelly"), JELLY_MELTING)


@pytest.fixture(scope="session")
def stopped_box(tmp_path_factory):
    return _bake_two_of_three(tmp_path_factory.mktemp("box"), BOX_FLOATING)
