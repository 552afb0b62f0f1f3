"""One writer per cache: an OS lock, released by a crash, naming its holder; tried with real
processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from conftest import REPO, run_main, scene_dict, wait_until

from sph_addon.core.cache.cache_dir import free_cache
from sph_addon.core.cache.lock import LOCK_NAME, OWNER_NAME, CacheBusy, lock_cache

_HOLD = ("import sys, time\n"
         "from sph_addon.core.cache.lock import lock_cache\n"
         "lock = lock_cache(sys.argv[1], 'bake', shared=sys.argv[2] == 'shared')\n"
         "print('locked', flush=True)\n"
         "time.sleep(120)\n")


def _holder(root, shared=False) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(root), "shared" if shared else "exclusive"], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    proc = _holder(tmp_path / "c")
    try:
        with pytest.raises(CacheBusy) as info:
            lock_cache(tmp_path / "c", "bake")
        assert f"bake by pid {proc.pid}" in str(info.value)
        with pytest.raises(CacheBusy):
            lock_cache(tmp_path / "c", "mesh", shared=True)
    finally:
        _stop(proc)


def test_a_killed_holder_leaves_no_lock(tmp_path):
    proc = _holder(tmp_path / "c")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (tmp_path / "c" / OWNER_NAME).exists(), "the crash left its companion file"
    with lock_cache(tmp_path / "c", "bake"):
        owner = json.loads((tmp_path / "c" / OWNER_NAME).read_text())
        assert owner["pid"] == os.getpid()
    assert not (tmp_path / "c" / LOCK_NAME).exists() and not (tmp_path / "c" / OWNER_NAME).exists(), \
        "an exclusive holder leaves the directory as it found it"


def test_meshing_processes_share_the_lock_but_exclude_writers(tmp_path):
    proc = _holder(tmp_path / "c", shared=True)
    try:
        with lock_cache(tmp_path / "c", "mesh", shared=True):
            pass
        with pytest.raises(CacheBusy, match="meshing run"):
            lock_cache(tmp_path / "c", "bake")
        with pytest.raises(CacheBusy):
            free_cache(tmp_path / "c")
    finally:
        _stop(proc)


def test_free_and_mesh_refuse_a_cache_being_baked(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=2))
    assert run_main("bake", scene, "--out", tmp_path / "c", "--quiet")[0] == 0
    files = sorted(p.name for p in (tmp_path / "c" / "particles").iterdir())
    proc = _holder(tmp_path / "c")
    try:
        with pytest.raises(CacheBusy):
            free_cache(tmp_path / "c")
        code, _, err = run_main("mesh", tmp_path / "c", "--quiet")
        assert code == 2 and f"pid {proc.pid}" in err, err
        code, _, err = run_main("bake", scene, "--out", tmp_path / "c", "--force", "--quiet")
        assert code == 2 and f"bake by pid {proc.pid}" in err, err
        assert sorted(p.name for p in (tmp_path / "c" / "particles").iterdir()) == files, "--force deleted nothing"
    finally:
        _stop(proc)
    assert free_cache(tmp_path / "c") > 0


def test_two_concurrent_bakes_one_wins_force_does_not_replace(tmp_path, write_scene):
    """Two real bakes into one directory: the second (plain or --force) is refused while the first runs,
    and the first finishes with its own cache intact. The first bakes 240 frames (about 5 s here) so
    that it is still running when both others have started and been refused: 30 frames took 0.8 s
    once the relaxation's loops were balanced across threads, less than a second process's start."""
    scene = write_scene(scene_dict(frame_end=240, particle_spacing=0.03,
                                   materials=[{"name": "goo", "preset": "mud"}],
                                   sources=[{"type": "box", "material": "goo", "min": [0, 0, 0.1],
                                             "max": [0.3, 0.3, 0.4]}],
                                   colliders=[{"type": "box_container", "size": [0.6, 0.6, 1.0],
                                               "position": [0.15, 0.15, 0.5]}]))
    out = tmp_path / "c"
    first = subprocess.Popen([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(out), "--quiet"],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: (out / "manifest.json").exists(), first)
        for extra in ((), ("--force",)):
            second = subprocess.run([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(out),
                                     "--quiet", *extra], cwd=REPO, capture_output=True, text=True, timeout=300)
            assert second.returncode == 2, second.stderr
            assert f"bake by pid {first.pid}" in second.stderr and "Traceback" not in second.stderr
        _, err = first.communicate(timeout=600)
        assert first.returncode == 0, err
    finally:
        if first.poll() is None:
            _stop(first)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and manifest["frames_done"] == list(range(1, 241))

