"""File-system faults: a file-size limit is exit 3 with a sentence and a resumable cache;
deletion never follows a symlink out of the cache and removes only files the bake wrote."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys

from conftest import REPO, run_main, scene_dict

from sph_addon.core.cache.cache_dir import CacheDir, free_cache


def _tiny_scene(frame_end: int) -> dict:
    # 8 particles: a checkpoint of a few KiB, while the manifest grows by a few hundred bytes per frame.
    return scene_dict(frame_end=frame_end, sources=[{"type": "box", "material": "water", "min": [0, 0, 0],
                                                     "max": [0.1, 0.1, 0.1]}])


def _limited(limit: int, *args) -> subprocess.CompletedProcess:
    """``python -m sph_addon ARGS`` under a file-size limit of ``limit`` bytes."""
    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "sph_addon", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=600, preexec_fn=limit_file_size)


def _bake_limited(scene, out, limit: int, *extra) -> subprocess.CompletedProcess:
    return _limited(limit, "bake", scene, "--out", out, "--quiet", *extra)


def test_a_size_limit_mid_bake_is_exit_3_and_resumes_identically(tmp_path, write_scene):
    scene = write_scene(_tiny_scene(12))
    ref = tmp_path / "ref"
    assert run_main("bake", scene, "--out", ref, "--quiet")[0] == 0
    sizes = [p.stat().st_size for p in ref.rglob("*.ply")] + [p.stat().st_size for p in ref.rglob("*.npz")]
    manifest = json.loads((ref / "manifest.json").read_text())
    limit = max(sizes) + 64
    assert (ref / "manifest.json").stat().st_size > limit, "the growing manifest must hit the limit mid-bake"

    out = tmp_path / "c"
    r = _bake_limited(scene, out, limit)
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "File too large" in r.stderr and "--resume" in r.stderr, r.stderr
    done = CacheDir(out).read_manifest()["frames_done"]
    assert 1 < len(done) < 12
    assert not list(out.rglob("*.tmp")), "no half-written file left"

    r = subprocess.run([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(out), "--resume",
                        "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert CacheDir(out).read_manifest()["frames_done"] == manifest["frames_done"]
    for f in manifest["frames_done"]:
        assert CacheDir(out).particles_path(f).read_bytes() == CacheDir(ref).particles_path(f).read_bytes()


def test_a_size_limit_at_the_first_frame_leaves_a_bake_a_plain_run_restarts(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=2))
    out = tmp_path / "c"
    r = _bake_limited(scene, out, 2048)  # scene.json and the first manifest fit, the first frame does not
    assert r.returncode == 3 and "before its first frame" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert (out / "manifest.json").exists(), "the manifest exists before the first frame"
    r = subprocess.run([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(out), "--quiet"],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr


def test_a_size_limit_while_meshing_is_exit_3_and_meshing_again_finishes(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=3))
    out = tmp_path / "c"
    assert run_main("bake", scene, "--out", out, "--quiet")[0] == 0
    r = _limited(4096, "mesh", out, "--quiet")  # a surface of this pool is tens of KiB
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "meshing stopped at frame 1" in r.stderr and "File too large" in r.stderr, r.stderr
    assert not list(out.rglob("*.tmp")), "no half-written file left"
    r = subprocess.run([sys.executable, "-m", "sph_addon", "mesh", str(out), "--quiet"], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert len(list((out / "surface").glob("surface_*.ply"))) == 3


def test_force_and_free_never_follow_a_symlink_out_of_the_cache(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=1))
    out = tmp_path / "c"
    assert run_main("bake", scene, "--out", out, "--quiet")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "particles_0001.ply").write_text("someone else's")
    for p in (out / "particles").iterdir():
        p.unlink()
    (out / "particles").rmdir()
    (out / "particles").symlink_to(elsewhere, target_is_directory=True)

    code, _, err = run_main("bake", scene, "--out", out, "--force", "--quiet")
    assert code == 2 and "symbolic link" in err and "particles" in err, err
    assert free_cache(out) > 0
    assert (elsewhere / "particles_0001.ply").read_text() == "someone else's"
    assert (out / "particles").is_symlink()


def test_no_command_writes_through_a_linked_cache_folder(tmp_path, write_scene):
    """``mesh`` (with or without --force) and ``preview`` refuse a cache whose ``surface`` folder (or the
    preview's folder) is a link, as ``bake --force`` does, before writing anything into its target."""
    out = tmp_path / "c"
    assert run_main("bake", write_scene(_tiny_scene(1)), "--out", out, "--quiet")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "surface_0001.ply").write_text("someone else's")
    (out / "surface").symlink_to(elsewhere, target_is_directory=True)
    (out / "look").symlink_to(elsewhere, target_is_directory=True)
    for args in (("mesh", out, "--force", "--quiet"), ("mesh", out, "--quiet"),
                 ("preview", out, "--out", out / "look" / "p.png")):
        code, _, err = run_main(*args)
        assert code == 2 and "symbolic link" in err and len(err.strip().splitlines()) == 1, (args, err)
        assert sorted(p.name for p in elsewhere.iterdir()) == ["surface_0001.ply"], args
    assert (elsewhere / "surface_0001.ply").read_text() == "someone else's"


def test_free_removes_only_the_files_a_bake_wrote(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=1))
    out = tmp_path / "c"
    assert run_main("bake", scene, "--out", out, "--quiet")[0] == 0
    mine = [out / "notes.txt", out / "particles" / "particles_notes.ply", out / "state" / "checkpoint_old.npz"]
    for p in mine:
        p.write_text("mine")
    (out / "particles" / "particles_0009.ply").symlink_to(out / "notes.txt")
    assert free_cache(out) > 0
    assert all(p.read_text() == "mine" for p in mine)
    assert not (out / "manifest.json").exists() and not (out / "particles" / "particles_0001.ply").exists()
    assert (out / "particles" / "particles_0009.ply").is_symlink(), "a link is not a file the bake wrote"
