"""Alembic export of a baked Domain (sph_addon/blender/alembic.py): the operator and the farm command.

A 0.3 m cube of water is baked over 4 frames through the operators; the export is read back in a
fresh Blender without the add-on (``alembic_child.py``), as another program or a farm would:
per-frame vertex counts must be the cache's, and a tiny Cycles render must show the liquid.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import bpy
import pytest
from conftest import python_for_subprocess
from water_scene import water_in_tank

FRAMES = 4
CHILD = Path(__file__).with_name("alembic_child.py")
# Another Blender's interpreter (scripts/test.sh names the oldest or the newest it tests).
OTHER_BLENDER = os.environ.get("SPH_OTHER_BLENDER_PYTHON", "")


@pytest.fixture(scope="module")
def baked(ext, tmp_path_factory) -> Path:
    """``tank.blend`` with its Domain "Tank" baked and meshed over frames 1-4, saved (replay objects included)."""
    root = tmp_path_factory.mktemp("alembic")
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(root / "tank.blend"))
    water_in_tank(0.3, 0.5, 1.0, 0.5, spacing=0.03, frame_end=FRAMES)
    assert bpy.ops.sph.bake() == {'FINISHED'}
    bpy.ops.wm.save_mainfile()
    return root / "tank.blend"


@pytest.fixture
def tank(baked):
    bpy.ops.wm.open_mainfile(filepath=str(baked))
    yield bpy.data.objects["Tank"]
    bpy.ops.wm.read_homefile(use_empty=True)


def _counts(ext, cache: Path, kind: str) -> dict[int, int]:
    read_ply = ext.core("cache.plyio").read_ply
    return {k: len(read_ply(cache / kind / f"{kind}_{k:04d}.ply").vertices) for k in range(1, FRAMES + 1)}


def _read_in_fresh_blender(tmp_path: Path, files, render=None, python: str = "") -> dict:
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"files": [str(f) for f in files], "render": render}))
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    r = subprocess.run([python or python_for_subprocess(), str(CHILD), str(job)], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["addon_modules"] == [], "the reader must not have the add-on"
    return report


def _state(scene) -> tuple:
    """What the export must leave as it found: selection, active object, frame, modifiers, node groups, visibility."""
    layer = bpy.context.view_layer
    return (sorted(ob.name for ob in layer.objects if ob.select_get()),
            layer.objects.active.name if layer.objects.active else None,
            scene.frame_current,
            {ob.name: [m.name for m in ob.modifiers] for ob in bpy.data.objects},
            sorted(ng.name for ng in bpy.data.node_groups),
            {ob.name: (ob.hide_render, ob.hide_get(), ob.hide_select) for ob in bpy.data.objects})


@pytest.mark.smoke
def test_export_reads_back_per_frame_and_renders_without_the_addon(ext, tank, tmp_path):
    scene = bpy.context.scene
    # The artist's state: another object selected and active, some frame, the particles hidden in renders.
    water = bpy.data.objects["Water"]
    for ob in bpy.context.view_layer.objects:
        ob.select_set(ob is water)
    bpy.context.view_layer.objects.active = water
    scene.frame_set(3)
    before = _state(scene)

    assert bpy.ops.sph.export_alembic(particles=True) == {'FINISHED'}
    cache = ext.sub("export.snapshot").cache_dir(tank)
    default = cache / "export" / "Tank.abc"
    assert default.is_file() and default.stat().st_size > 0
    assert _state(scene) == before
    assert not list(default.parent.glob("*.partial.abc"))
    # Frames beyond the bake are left out, not written as copies of the last one.
    clamped = tmp_path / "clamped.abc"
    assert bpy.ops.sph.export_alembic(filepath=str(clamped), frame_start=2, frame_end=FRAMES + 20) == {'FINISHED'}
    assert _state(scene) == before

    report = _read_in_fresh_blender(tmp_path, [default, clamped],
                                    render={"file": str(default), "object": "Tank_Surface", "frame": 2,
                                            "out": str(tmp_path)})
    surface, particles = _counts(ext, cache, "surface"), _counts(ext, cache, "particles")
    assert len(set(surface.values())) >= 2, f"the bake must change the surface's topology: {surface}"
    read = report["files"][str(default)]
    assert read["frame_range"] == [1, FRAMES]
    for name in ("Tank_Surface", "Tank_Particles"):
        assert read["objects"][name] == {"type": 'MESH', "modifiers": ['MESH_SEQUENCE_CACHE']}, read["objects"]
    for k in range(1, FRAMES + 1):
        shown = read["frames"][str(k)]
        assert shown["Tank_Surface"]["vertices"] == surface[k], (k, shown)
        assert shown["Tank_Surface"]["faces"] > 0
        assert shown["Tank_Particles"]["vertices"] == particles[k], (k, shown)
        assert shown["Tank_Particles"]["faces"] == 0
        for name in ("Tank_Surface", "Tank_Particles"):
            assert "velocity" in shown[name]["attributes"], (k, name, shown[name])
    print("alembic: surface vertices per frame", surface, "particles", particles)

    read = report["files"][str(clamped)]
    assert read["frame_range"] == [2, FRAMES]
    assert "Tank_Particles" not in read["objects"]
    assert {k: read["frames"][str(k)]["Tank_Surface"]["vertices"] for k in range(2, FRAMES + 1)} == \
        {k: surface[k] for k in range(2, FRAMES + 1)}

    shown = report["render"]
    print("alembic: render", shown)
    assert shown["inside"] > 0.9, f"the liquid barely shows in the render: {shown}"
    assert shown["outside"] < 0.05, f"the render changed far from the liquid: {shown}"


def test_domain_panel_offers_export(ext, tank):
    from test_ui import _draw_all

    assert ("operator", "sph.export_alembic") in _draw_all(ext, tank)


def test_errors_name_the_domain(ext, tank, tmp_path):
    with pytest.raises(RuntimeError, match=r"Tank: Frames: frames 10-20 hold no baked surface; the cache holds "
                                           r"frames 1-4"):
        bpy.ops.sph.export_alembic(frame_start=10, frame_end=20)
    # A frame missing between the first and the last (meshing still going) is refused, not written empty.
    cache = ext.sub("export.snapshot").cache_dir(tank)
    gap = tmp_path / "gap"
    shutil.copytree(cache, gap)
    (gap / "surface" / "surface_0003.ply").unlink()
    tank.sph.domain.cache_directory = str(gap)
    with pytest.raises(RuntimeError, match=r"Tank: frame 3 has no surface file"):
        bpy.ops.sph.export_alembic()
    assert bpy.ops.sph.export_alembic(frame_end=2) == {'FINISHED'}
    tank.sph.domain.cache_directory = str(tmp_path / "empty")
    with pytest.raises(RuntimeError, match=r"Tank: nothing is baked in .*empty: Bake it first"):
        bpy.ops.sph.export_alembic()
    assert not (tmp_path / "empty").exists()


@pytest.mark.smoke
def test_farm_command_writes_alembic(ext, baked, tmp_path):
    cli = ext.sub("cli_command")
    out = tmp_path / "farm.abc"
    lines = []
    saved = baked.stat().st_mtime_ns
    assert cli.run(["alembic", str(baked), "--frames", "2-3", "--out", str(out), "--particles"],
                   echo=lines.append) == 0, lines
    assert lines[-1].startswith(f"wrote {out}: frames 2-3 of Tank Surface, Tank Particles"), lines
    assert cli.run(["alembic", str(baked), "--frames", "30-40"], echo=lines.append) == 2
    assert lines[-1].startswith("error: Tank: Frames: frames 30-40 hold no baked surface"), lines
    assert baked.stat().st_mtime_ns == saved, "the farm's export never saves the .blend"
    read = _read_in_fresh_blender(tmp_path, [out])["files"][str(out)]
    assert read["frame_range"] == [2, 3]
    cache = ext.sub("export.snapshot").cache_dir(bpy.data.objects["Tank"])
    surface = _counts(ext, cache, "surface")
    assert {k: read["frames"][str(k)]["Tank_Surface"]["vertices"] for k in (2, 3)} == {2: surface[2], 3: surface[3]}
    bpy.ops.wm.read_homefile(use_empty=True)


@pytest.mark.smoke
@pytest.mark.skipif(not OTHER_BLENDER, reason="SPH_OTHER_BLENDER_PYTHON names no other Blender (test.sh sets it)")
def test_another_blender_version_reads_the_export(ext, tank, tmp_path):
    """What a studio does across versions: bake and export in one Blender, import the Alembic in another."""
    out = tmp_path / "across.abc"
    assert bpy.ops.sph.export_alembic(filepath=str(out), particles=True) == {'FINISHED'}
    report = _read_in_fresh_blender(tmp_path, [out], python=OTHER_BLENDER)
    read = report["files"][str(out)]
    cache = ext.sub("export.snapshot").cache_dir(tank)
    surface, particles = _counts(ext, cache, "surface"), _counts(ext, cache, "particles")
    assert read["frame_range"] == [1, FRAMES]
    for k in range(1, FRAMES + 1):
        shown = read["frames"][str(k)]
        assert (shown["Tank_Surface"]["vertices"], shown["Tank_Particles"]["vertices"]) == (surface[k], particles[k]), k
    print(f"alembic: written by Blender {bpy.app.version_string}, read by Blender {report['blender']}")
