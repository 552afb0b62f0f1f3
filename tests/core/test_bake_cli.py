"""The command line and the cache: resume after a kill, overwrite protection, bad input."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import REPO, SCENES, scene_dict
from reference.surface_mesh_checks import component_labels, signed_volume, topology

from sph_addon.core.cache.cache_dir import CacheDir
from sph_addon.core.cache.plyio import read_ply


def cli(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sph_addon", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def _goo_scene() -> dict:
    # Springs (dynamic, Maxwell-relaxing) and viscosity, so the checkpoint must carry spring state to resume exactly.
    return scene_dict(frame_end=14, particle_spacing=0.03,
                      materials=[{"name": "goo", "preset": "slime"}],
                      sources=[{"type": "box", "material": "goo", "min": [0, 0, 0.1], "max": [0.3, 0.3, 0.4]}],
                      colliders=[{"type": "box_container", "size": [0.6, 0.6, 1.0], "position": [0.15, 0.15, 0.5]}])


def _wait_for_frames(out, n: int, timeout: float = 300.0) -> None:
    """Poll the bake's manifest until ``n`` frames are done."""
    manifest = out / "manifest.json"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if manifest.exists() and len(json.loads(manifest.read_text())["frames_done"]) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"the bake did not reach {n} frames in {timeout} s")


def killed_after(cmd: list, out, n: int) -> list:
    """Run the bake command ``cmd`` writing to ``out``, SIGKILL it once ``n`` frames are done; the frames the
    manifest then says are done."""
    proc = subprocess.Popen([*cmd, str(out)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for_frames(out, n)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return json.loads((out / "manifest.json").read_text())["frames_done"]


def test_sigkill_mid_bake_then_resume_equals_uninterrupted(tmp_path, write_scene):
    scene = write_scene(_goo_scene())
    full, killed = tmp_path / "full", tmp_path / "killed"
    assert cli("bake", scene, "--out", full, "--quiet").returncode == 0

    proc = subprocess.Popen([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(killed),
                             "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for_frames(killed, 5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = json.loads((killed / "manifest.json").read_text())["frames_done"]
    assert 5 <= len(done) < 14, "the kill must land mid-bake"

    # Every file the killed bake left parses, and nothing half-written is visible.
    cache = CacheDir(killed)
    for f in done:
        assert len(cache.read_particles(f)) > 0
    arrays, meta = cache.read_checkpoint(cache.read_manifest()["checkpoint"])
    assert "spring_partner" in arrays and meta["frame"] in done

    r = cli("bake", scene, "--out", killed, "--resume", "--quiet")
    assert r.returncode == 0, r.stderr
    a = read_ply(full / "particles" / "particles_0014.ply").vertices
    b = read_ply(killed / "particles" / "particles_0014.ply").vertices
    assert np.array_equal(a, b), "resumed bake differs from the uninterrupted one"
    assert not list(killed.rglob("*.tmp")), "stale temporary files left behind"


def test_existing_cache_is_not_overwritten_without_force(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=2))
    out = tmp_path / "c"
    assert cli("bake", scene, "--out", out, "--quiet").returncode == 0
    before = (out / "particles" / "particles_0002.ply").read_bytes()
    r = cli("bake", scene, "--out", out, "--quiet")
    assert r.returncode == 2 and "--force" in r.stderr
    assert (out / "particles" / "particles_0002.ply").read_bytes() == before
    assert cli("bake", scene, "--out", out, "--quiet", "--force").returncode == 0


def test_info_and_validate(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=3))
    assert "valid" in cli("validate", scene).stdout
    out = tmp_path / "c"
    cli("bake", scene, "--out", out, "--quiet")
    info = cli("info", out)
    assert info.returncode == 0 and "complete" in info.stdout
    assert "springs=0" in info.stdout, "the models' frame statistics are printed"
    manifest = json.loads(cli("info", out, "--json").stdout)
    assert manifest["frames_done"] == [1, 2, 3]


def test_particle_ply_layout(tmp_path, write_scene):
    """Binary little-endian, x y z vx vy vz float32, id uint32, material uint8 (DESIGN.md section 4)."""
    scene = write_scene(scene_dict(frame_end=2))
    cli("bake", scene, "--out", tmp_path / "c", "--quiet")
    path = tmp_path / "c" / "particles" / "particles_0002.ply"
    header = path.read_bytes().split(b"end_header")[0].decode()
    assert "format binary_little_endian 1.0" in header
    for prop in ("float x", "float y", "float z", "float vx", "float vy", "float vz", "uint id", "uchar material"):
        assert f"property {prop}\n" in header
    v = read_ply(path).vertices
    assert len(np.unique(v["id"])) == len(v)


BAD_INPUTS = [
    ("malformed JSON", "{not json", "not valid JSON"),
    ("unknown field", dict(scene_dict(), colour="blue"), "colour: unknown field"),
    ("wrong type", scene_dict(particle_spacing="small"), "particle_spacing: expected a number"),
    ("non-finite", scene_dict(simulation={"gravity": [0, 0, float("nan")]}), "simulation.gravity[2]"),
    ("negative", scene_dict(materials=[{"name": "water", "preset": "water", "params": {"kinematic_viscosity": -1}}]),
     "materials[0].params.kinematic_viscosity: must be at least 0"),
    ("unknown material", scene_dict(sources=[{"type": "box", "material": "lava", "min": [0, 0, 0],
                                              "max": [1, 1, 1]}]), "sources[0].material: unknown material 'lava'"),
    ("unknown preset", scene_dict(materials=[{"name": "water", "preset": "lava"}]),
     "materials[0].preset: unknown preset"),
    ("memory budget", scene_dict(particle_spacing=0.001), "MiB"),
]


@pytest.mark.parametrize("label,content,expected", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_exit_2_one_sentence_nothing_written(tmp_path, label, content, expected):
    scene = tmp_path / "scene.json"
    scene.write_text(content if isinstance(content, str) else json.dumps(content).replace("NaN", "NaN"))
    out = tmp_path / "out"
    r = cli("bake", scene, "--out", out)
    assert r.returncode == 2
    assert expected in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists(), "nothing may be written for bad input"


def test_unwritable_output_directory(tmp_path, write_scene):
    if os.geteuid() == 0:
        # root ignores directory permissions; a path under a regular file cannot be created by anyone.
        blocker = tmp_path / "file"
        blocker.write_text("x")
        out = blocker / "cache"
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        out = locked / "cache"
    r = cli("bake", write_scene(scene_dict()), "--out", out)
    assert r.returncode == 2 and "cannot" in r.stderr and "Traceback" not in r.stderr


def test_simulation_failure_exit_3_keeps_earlier_frames(tmp_path, write_scene):
    """A runaway particle stops the bake with exit 3, names the frame, and keeps the frames before it.

    The relaxation adapts its passes to any stiffness, so the failure is provoked through the
    detector's threshold: free fall passes 5 m/s after about 15 frames at 30 fps (the block's own
    surface tension moves its corners at under 3 m/s).
    """
    scene = write_scene(scene_dict(frame_end=24, colliders=[], simulation={"max_speed": 5.0}))
    out = tmp_path / "c"
    r = cli("bake", scene, "--out", out, "--quiet")
    assert r.returncode == 3 and "frame" in r.stderr and "max_speed" in r.stderr, r.stderr
    assert (out / "particles" / "particles_0002.ply").exists()
    assert not (out / "particles" / "particles_0024.ply").exists()
    manifest = CacheDir(out).read_manifest()
    assert not manifest["complete"] and 10 < manifest["frames_done"][-1] < 24


@pytest.mark.slow
def test_dam_break_two_seconds_stays_in_tank_and_surges(tmp_path):
    """The sample dam break (DESIGN.md section 4 CLI): no particle leaves the 4 x 1.5 x 3 m tank over 2 s,
    and the surge front (max x, recorded per frame in the manifest) runs along the floor to the far wall."""
    out = tmp_path / "dam"
    r = cli("bake", SCENES / "dam_break.json", "--out", out, "--quiet", timeout=3000)
    assert r.returncode == 0, r.stderr
    m = CacheDir(out).read_manifest()
    assert m["removed"] == {}
    fronts = []
    for f in m["frames_done"]:
        s = m["stats"][str(f)]
        lo, hi = np.array(s["bounds_min"]), np.array(s["bounds_max"])
        assert np.all(lo >= -1e-6) and np.all(hi <= np.array([4, 1.5, 3]) + 1e-6), f"frame {f} left the tank"
        fronts.append(hi[0])
    assert fronts[0] < 1.0 + 1e-6
    assert all(b >= a - 0.02 for a, b in zip(fronts[:10], fronts[1:11])), "the front must advance"
    assert max(fronts) > 3.8, "the surge must reach the far wall"

    # Meshing: the same cache meshes frame by frame, every frame closed, 2-manifold and outward. Meshed:
    # the first frame, the surge's arrival at the far wall and the six frames of its splash after it, and
    # the last (meshing all 61 took about seven minutes of the suite's time).
    done = m["frames_done"]
    hit = next(k for k, front in enumerate(fronts) if front > 3.8)
    meshed = []
    for a, b in ((done[0], done[0]), (done[hit], done[min(hit + 6, len(done) - 1)]), (done[-1], done[-1])):
        r = cli("mesh", out, "--frames", f"{a}-{b}", "--jobs", "2", "--quiet", timeout=3000)
        assert r.returncode == 0, r.stderr
        meshed += [f for f in done if a <= f <= b]
    assert len(meshed) == 9, meshed
    for f in meshed:
        mesh = read_ply(out / "surface" / f"surface_{f:04d}.ply")
        v, faces = mesh.positions(), mesh.faces
        assert len(faces) > 0, f"frame {f}: empty surface"
        topo = topology(v, faces)
        assert topo["closed_manifold_edges"] and topo["oriented"] and topo["vertex_manifold"], f"frame {f}: {topo}"
        labels = component_labels(len(v), faces)
        shells, cavities = [], []
        for comp in np.unique(labels[faces[:, 0]]):
            sel = faces[labels[faces[:, 0]] == comp]
            (shells if signed_volume(v, sel) > 0 else cavities).append(v[np.unique(sel)])
        # A component with negative volume is correct only as a cavity (an air bubble, its normals
        # pointing into the bubble, out of the liquid): it must lie inside some outer shell.
        for cav in cavities:
            lo, hi = cav.min(axis=0), cav.max(axis=0)
            assert any(np.all(sh.min(axis=0) < lo) and np.all(sh.max(axis=0) > hi) for sh in shells), \
                f"frame {f}: a component is inside out"


def test_sigterm_stops_between_frames_exit_130_and_resumes(tmp_path, write_scene):
    """SIGTERM (what a farm scheduler sends) ends the bake after the frame in progress with exit 130;
    the cache is complete up to that frame and --resume finishes it."""
    scene = write_scene(_goo_scene())
    out = tmp_path / "c"
    proc = subprocess.Popen([sys.executable, "-m", "sph_addon", "bake", str(scene), "--out", str(out), "--quiet"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_frames(out, 3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "--resume" in err
    m = CacheDir(out).read_manifest()
    assert not m["complete"] and m["checkpoint"] == m["frames_done"][-1] < 14
    r = cli("bake", scene, "--out", out, "--resume", "--quiet")
    assert r.returncode == 0 and CacheDir(out).read_manifest()["complete"]


def test_bake_meshes_as_it_goes_when_the_scene_asks(tmp_path, write_scene):
    scene = write_scene(scene_dict(frame_end=3, surface={"mesh_during_bake": True}))
    out = tmp_path / "c"
    assert cli("bake", scene, "--out", out, "--quiet").returncode == 0
    for f in (1, 2, 3):
        assert len(read_ply(out / "surface" / f"surface_{f:04d}.ply").faces) > 0
    r = cli("mesh", out, "--quiet")
    assert r.returncode == 0 and "skipped 3" in r.stdout, r.stdout


def test_resume_with_mesh_files_relative_to_the_scene(tmp_path, write_scene):
    """The stored copy of the scene lives in the cache, away from its mesh files: resume must still work."""
    scene_dir = tmp_path / "scene"
    scene_dir.mkdir()
    mesh = scene_dir / "box.ply"
    mesh.write_bytes((REPO / "tests" / "data" / "meshes" / "box_dup_flipped.ply").read_bytes())
    scene = write_scene(scene_dict(frame_end=3, particle_spacing=0.05,
                                   materials=[{"name": "water", "preset": "water"}],
                                   sources=[{"type": "mesh", "material": "water", "path": "box.ply"}],
                                   # A tank around the unit box (the default one would hold 8 % of it).
                                   colliders=[{"type": "box_container", "size": [1.2, 1.2, 1.2]}]),
                        "scene/scene.json")
    out = tmp_path / "elsewhere" / "cache"
    r = cli("bake", scene, "--out", out, "--frames", "1-2", "--quiet")
    assert r.returncode == 0, r.stderr
    r = cli("bake", scene, "--out", out, "--frames", "1-2", "--resume", "--quiet")
    assert r.returncode == 0, r.stderr
