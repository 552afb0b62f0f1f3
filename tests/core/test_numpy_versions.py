"""The engine gives the same bytes on numpy 1.26 (Blender 4.2-5.0) and numpy 2 (Blender 5.1+).

``scripts/test.sh`` runs the core suite in both environments and, in each, points
``SPH_OTHER_CORE_PYTHON`` at the other's interpreter. The sample scenes are baked here and by that
interpreter (``python -m sph_addon bake``), and every particle frame (the PLY writer), every
checkpoint (the ``.npz`` writer) and the meshed surface (the PLY reader and the surface stage)
must match byte for byte: the kernels, the readers and the writers all take part.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, SCENES, run_main

OTHER = os.environ.get("SPH_OTHER_CORE_PYTHON", "")
FRAMES = "1-2"


def _numpy_of(python: str) -> str:
    return subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _files(cache: Path) -> dict[str, bytes]:
    return {p.relative_to(cache).as_posix(): p.read_bytes() for kind in ("particles", "state", "surface")
            for p in sorted((cache / kind).iterdir())}


@pytest.mark.skipif(not OTHER, reason="SPH_OTHER_CORE_PYTHON names no other environment (set in test.sh's numpy 2 run)")
def test_sample_scenes_bake_and_mesh_to_the_same_bytes_on_numpy_1_and_2(tmp_path):
    other_numpy = _numpy_of(OTHER)
    assert other_numpy.split(".")[0] != np.__version__.split(".")[0], \
        f"both environments run numpy {np.__version__} and {other_numpy}: nothing is compared"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for scene in sorted(SCENES.glob("*.json")):
        here, there = tmp_path / f"{scene.stem}_here", tmp_path / f"{scene.stem}_there"
        assert run_main("bake", scene, "--out", here, "--frames", FRAMES)[0] == 0
        assert run_main("mesh", here)[0] == 0
        for args in (("bake", scene, "--out", there, "--frames", FRAMES), ("mesh", there)):
            proc = subprocess.run([OTHER, "-m", "sph_addon", *map(str, args)], capture_output=True, text=True,
                                  env=env, cwd=REPO, timeout=1200)
            assert proc.returncode == 0, f"{scene.name} in {OTHER}: {proc.stderr[-2000:]}"
        mine, theirs = _files(here), _files(there)
        assert sorted(mine) == sorted(theirs), scene.name
        differ = [name for name in mine if mine[name] != theirs[name]]
        assert differ == [], f"{scene.name}: numpy {np.__version__} and {other_numpy} wrote different bytes"
    print(f"numpy {np.__version__} (Python {sys.version.split()[0]}) and {other_numpy}: identical")
