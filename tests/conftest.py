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
