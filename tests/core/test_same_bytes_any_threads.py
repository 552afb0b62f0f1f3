"""A bake is the same bytes at any thread count (DESIGN.md section 6, "same scene, same cache").

The sample scenes (``scripts/scenes``: the dam break, the honey coil, the jelly drop) are baked
for four frames by the command line at 1 and 2 threads, each in its own process (numba fixes its
thread pool when it starts), and every particle frame, every checkpoint array and every frame's
statistics compared. ``SPH_SAME_BYTES_THREADS`` names other counts (``1,2,16`` on a many-core
machine, where more threads split every parallel loop differently).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCENES = sorted((REPO / "scripts" / "scenes").glob("*.json"))
THREADS = [int(t) for t in os.environ.get("SPH_SAME_BYTES_THREADS", "1,2").split(",")]
# Fields of a frame's statistics that time the bake rather than describe its result.
TIMINGS = {"sdf_build_s"}


def _bake(scene: Path, out: Path, threads: int) -> None:
    env = {**os.environ, "NUMBA_NUM_THREADS": str(threads)}
    proc = subprocess.run([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(out),
                           "--frames", "1-4", "--quiet"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _result(cache: Path) -> dict:
    """Every particle frame's bytes, every checkpoint array's bytes, the statistics without timings."""
    out = {p.name: p.read_bytes() for p in sorted((cache / "particles").iterdir())}
    for p in sorted((cache / "state").glob("*.npz")):
        with np.load(p) as z:
            out.update({f"{p.name}:{k}": z[k].tobytes() for k in z.files})
    stats = json.loads((cache / "manifest.json").read_text())["stats"]
    out["stats"] = json.dumps({f: {k: v for k, v in s.items() if k not in TIMINGS} for f, s in stats.items()},
                              sort_keys=True)
    return out


@pytest.mark.parametrize("scene", SCENES, ids=[s.stem for s in SCENES])
def test_a_bake_is_the_same_bytes_at_any_thread_count(scene, tmp_path):
    results = {}
    for t in THREADS:
        _bake(scene, tmp_path / f"t{t}", t)
        results[t] = _result(tmp_path / f"t{t}")
    first = results[THREADS[0]]
    assert len(first) >= 5  # four frames and a checkpoint at least
    for t in THREADS[1:]:
        assert results[t].keys() == first.keys()
        differ = [k for k in first if results[t][k] != first[k]]
        assert not differ, f"{scene.stem}: {THREADS[0]} and {t} threads differ in {differ}"
