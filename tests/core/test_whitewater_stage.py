"""The whitewater stage over a cache (docs/whitewater.md): nothing from still liquid, emission where a dam
break's surge hits the wall, byte-identical files at any thread count and however a run is split or
interrupted, settings changes that touch only whitewater/, and bad settings refused before any work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO
from whitewater_frames import lattice, scene, splashing_frames, write_cache

from sph_addon.cli import main
from sph_addon.core.bake import bake
from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.cache.plyio import write_ply
from sph_addon.core.errors import InputError
from sph_addon.core.whitewater import read_state, whitewater_cache, whitewater_path

# Lower rates than the defaults: a few thousand particles, enough to exercise every type.
SMALL = {"trapped_air_rate": 100.0, "wave_crest_rate": 1000.0}


def _bytes(root, frames=range(1, 7)) -> dict[int, bytes]:
    return {f: whitewater_path(root, f).read_bytes() for f in frames}


@pytest.mark.parametrize("ranges", ["paper", "automatic"])
def test_still_liquid_emits_nothing(tmp_path, ranges):
    """A pool whose particles jitter at 1 mm/s (a baked pool at rest) emits nothing over 6 frames, with the
    paper's ranges and with automatic ones (their floors keep round-off from being normalised to 1):
    every potential stays far below τ_min (kinetic energy 5e-7 J/kg against 0.5)."""
    rng = np.random.default_rng(1)
    x = lattice((0, 0, 0), (0.6, 0.6, 0.4))
    frames = {f: (x + rng.normal(0, 1e-4, x.shape), rng.normal(0, 1e-3, x.shape)) for f in range(1, 7)}
    ww = {} if ranges == "paper" else {"trapped_air_max": 0.0, "wave_crest_max": 0.0, "kinetic_energy_max": 0.0}
    root = write_cache(tmp_path / "pool", frames, scene(ww))
    rep = whitewater_cache(root)
    assert rep["written"] == [1, 2, 3, 4, 5, 6]
    assert all(c == [0, 0, 0] for c in rep["counts"].values())
    if ranges == "automatic":
        assert rep["ranges"]["kinetic_energy"] == [0.5, 5.0]


def test_dam_break_emits_where_the_surge_hits_the_wall(tmp_path):
    """A 0.3 m x 0.6 m water column (2.5 cm spacing) collapses in a 0.8 m tank: the liquid emits only where
    its surge runs into the far wall (x > 0.7 m, measured 0.725-0.79), never on the column (x < 0.3 m)
    nor before the surge arrives (frame 9 of 16). Every whitewater particle stays in the tank: foam and
    bubbles pushed back onto a wall sit on it, to the float32 rounding of the files (1e-6 m)."""
    data = {"format": "sph_addon.scene/2", "name": "tiny_dam", "particle_spacing": 0.025, "frame_start": 1,
            "frame_end": 16, "fps": 30, "materials": [{"name": "water", "preset": "water"}],
            "sources": [{"type": "box", "material": "water", "min": [0, 0, 0], "max": [0.3, 0.1, 0.6]}],
            "colliders": [{"type": "box_container", "name": "tank", "size": [0.8, 0.1, 1.2],
                           "position": [0.4, 0.05, 0.6]}],
            "whitewater": {"enable": True, "kinetic_energy_min": 1.0, "kinetic_energy_max": 10.0}}
    path = tmp_path / "dam.json"
    path.write_text(json.dumps(data))
    root = tmp_path / "dam"
    bake(path, root)
    rep = whitewater_cache(root)
    assert rep["written"] == list(range(1, 17))
    first = min(f for f, c in rep["counts"].items() if sum(c) > 0)
    assert first >= 9
    born = {}
    for f in range(first, 17):
        state = read_state(whitewater_path(root, f))
        for i, x in zip(state.ids, state.x):
            born.setdefault(int(i), x)
        lo, hi = state.x.min(axis=0), state.x.max(axis=0)
        assert (lo >= -1e-6).all() and hi[0] <= 0.8 + 1e-6 and hi[1] <= 0.1 + 1e-6
    start = np.array(list(born.values()))
    assert len(start) > 20 and start[:, 0].min() > 0.6


def _run_threads(root, threads: int) -> None:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONPATH=str(REPO))
    code = "import sys; from sph_addon.core.whitewater import whitewater_cache; whitewater_cache(sys.argv[1])"
    r = subprocess.run([sys.executable, "-c", code, str(root)], env=env, capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr


def test_same_bytes_at_one_and_two_threads(tmp_path):
    """Six frames of a splashing block (thousands of spray, foam and bubble particles) give the same bytes
    at NUMBA_NUM_THREADS=1 and 2: emission draws from one generator per frame and every particle is
    updated from its own values."""
    one = write_cache(tmp_path / "one", splashing_frames(), scene(SMALL))
    two = write_cache(tmp_path / "two", splashing_frames(), scene(SMALL))
    _run_threads(one, 1)
    _run_threads(two, 2)
    state = read_state(whitewater_path(one, 6))
    assert min(state.counts()) > 10, state.counts()
    assert _bytes(one) == _bytes(two)


def test_split_killed_and_removed_runs_give_the_same_bytes(tmp_path):
    """Frames 1-3 then 4-6 equal one run 1-6 byte for byte (the second continues from frame 3's file,
    float32 as written); a run killed after frame 3 (frames 4-6 gone, a temp file left) resumes to the
    same bytes; a removed frame 4 is rewritten identically and frames 5-6 are then skipped."""
    whole = write_cache(tmp_path / "whole", splashing_frames(), scene(SMALL))
    split = write_cache(tmp_path / "split", splashing_frames(), scene(SMALL))
    assert whitewater_cache(whole)["written"] == [1, 2, 3, 4, 5, 6]
    assert whitewater_cache(split, frames=range(1, 4))["written"] == [1, 2, 3]
    assert whitewater_cache(split, frames=range(4, 7))["written"] == [4, 5, 6]
    assert _bytes(whole) == _bytes(split)

    for f in (4, 5, 6):
        whitewater_path(split, f).unlink()
    (whitewater_path(split, 4).parent / ".whitewater_0004.ply.abc.tmp").write_bytes(b"half")
    rep = whitewater_cache(split, frames=range(5, 7))
    assert rep["written"] == [4, 5, 6] and rep["skipped"] == []
    assert _bytes(whole) == _bytes(split)

    whitewater_path(split, 4).unlink()
    rep = whitewater_cache(split)
    assert rep["written"] == [4] and rep["skipped"] == [1, 2, 3, 5, 6]
    assert _bytes(whole) == _bytes(split)


def _stat(root):
    return {p.relative_to(root): (p.read_bytes(), p.stat().st_mtime_ns)
            for d in ("particles", "surface") for p in sorted((root / d).iterdir())}


def test_changed_settings_touch_only_whitewater_and_force_reruns(tmp_path):
    """A new seed rewrites every whitewater frame (their stamp changed) and leaves particles/ and surface/
    byte for byte with their mtimes; run again, everything is skipped; --force writes it all again."""
    root = write_cache(tmp_path / "c", splashing_frames(4), scene(SMALL))
    for f in range(1, 5):
        rec = np.zeros(3, [(n, "<f4") for n in ("x", "y", "z")])
        write_ply(root / "surface" / f"surface_{f:04d}.ply", rec, np.array([[0, 1, 2]]))
    assert whitewater_cache(root)["written"] == [1, 2, 3, 4]
    before, old = _stat(root), _bytes(root, range(2, 5))
    data = json.loads((root / "scene.json").read_text())
    data["whitewater"]["seed"] = 7
    (root / "scene.json").write_text(json.dumps(data))
    assert whitewater_cache(root)["written"] == [1, 2, 3, 4]
    assert _stat(root) == before
    assert all(old[f] != new for f, new in _bytes(root, range(2, 5)).items())
    assert whitewater_cache(root)["skipped"] == [1, 2, 3, 4]
    assert main(["whitewater", str(root), "--frames", "3-4", "--force", "--quiet"]) == 0
    assert _stat(root) == before


@pytest.mark.parametrize("block, field", [
    ({"lifetime_min": 4.0, "lifetime_max": 3.0}, "whitewater.lifetime_max"),
    ({"trapped_air_min": 30.0}, "whitewater.trapped_air_max"),
    ({"bubble_drag": -1.0}, "whitewater.bubble_drag"),
    ({"sprya": True}, "whitewater.sprya"),
    ({"enable": False}, "whitewater.enable"),
])
def test_bad_settings_are_refused_before_any_work(tmp_path, capsys, block, field):
    """Each bad field is named (library: InputError.where; command line: exit 2, one line on stderr) and
    nothing is written: no whitewater folder appears."""
    root = write_cache(tmp_path / "c", splashing_frames(2), scene({**SMALL, **block}))
    with pytest.raises(InputError) as err:
        whitewater_cache(root)
    assert err.value.where == field
    assert main(["whitewater", str(root)]) == 2
    assert field in capsys.readouterr().err
    assert not (root / "whitewater").exists()


def test_info_counts_and_command_line(tmp_path, capsys):
    """``whitewater`` prints its summary, the cache's summary counts its frames (the Domain panel's status),
    and ``info`` lists the counts of each type per frame, read from the files' headers, equal to the types
    the files hold."""
    src = write_cache(tmp_path / "c", splashing_frames(3), scene(SMALL))
    data = json.loads((src / "scene.json").read_text())
    data["frame_end"] = 3
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({**data, "sources": [{"type": "box", "material": "water", "min": [0, 0, 0],
                                                      "max": [0.2, 0.2, 0.2]}]}))
    root = tmp_path / "baked"
    bake(path, root)
    shutil.rmtree(root / "particles")
    shutil.copytree(src / "particles", root / "particles")
    assert main(["whitewater", str(root), "--quiet"]) == 0
    assert "wrote 3 frames" in capsys.readouterr().out
    assert CacheDir(root).summary().frames_whitewater == 3
    assert main(["info", str(root), "--every", "1"]) == 0
    out = capsys.readouterr().out
    state = read_state(whitewater_path(root, 3))
    spray, foam, bubbles = state.counts()
    assert any(line.split() == ["3", str(spray), str(foam), str(bubbles)] for line in out.splitlines())


def test_max_particles_caps_every_frame(tmp_path):
    """With max_particles 300 the splashing block (thousands of particles uncapped) holds at most 300 on
    every frame (it fills to at least 250), and its ids stay unique."""
    root = write_cache(tmp_path / "c", splashing_frames(4), scene({**SMALL, "max_particles": 300}))
    rep = whitewater_cache(root)
    assert max(sum(c) for c in rep["counts"].values()) <= 300
    assert sum(rep["counts"][4]) >= 250
    ids = read_state(whitewater_path(root, 4)).ids
    assert len(np.unique(ids)) == len(ids)
