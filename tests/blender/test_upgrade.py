"""A .blend saved with an earlier version of the add-on in Blender 4.2 opens in this Blender.

``tests/data/upgrade_4.2/`` was made by ``make_upgrade_fixture.py`` from the checkout at 7fb38d6
(before Blender 5.1-5.3 were supported) in Blender 4.2.23: a 0.2 m cube of water in a Domain, baked
and meshed over frames 1-3 into ``//sph_cache``. Opened here, it keeps its settings and its cache
(the replay shows the cached frames), and baking it again gives the same particles, byte for byte.

A file saved while jelly and rubber were presets of the viscoelastic model opens with the model that
has them now (the elastic model), and bakes it.
"""

import json
import shutil

import bpy
import pytest
from conftest import ROOT
from evaluated import evaluated_mesh, evaluated_points
from water_scene import water_in_tank

pytestmark = pytest.mark.smoke

FIXTURE = ROOT / "tests" / "data" / "upgrade_4.2"


@pytest.fixture
def opened(ext, tmp_path, empty_file):
    shutil.copytree(FIXTURE, tmp_path / "upgrade")
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "upgrade" / "upgrade.blend"))
    yield tmp_path / "upgrade"
    bpy.ops.wm.read_homefile(use_empty=True)


def test_a_file_saved_in_4_2_keeps_its_settings_and_shows_its_cache(ext, opened):
    read_ply = ext.core("cache.plyio").read_ply
    tank, water = bpy.data.objects["Tank"], bpy.data.objects["Water"]
    assert (tank.sph.role, water.sph.role) == ('DOMAIN', 'FLUID')
    assert tank.sph.domain.particle_spacing == pytest.approx(0.04)
    assert (tank.sph.domain.frame_end, tank.sph.domain.cache_directory) == (3, "//sph_cache")
    replayed = {ob["sph_replay"]: ob for ob in bpy.context.scene.objects if ob.get("sph_domain") == "Tank"}
    bpy.context.scene.frame_set(2)
    points, _ = evaluated_points(replayed["particles"])
    verts, corners, _ = evaluated_mesh(replayed["surface"])
    assert len(points) == len(read_ply(opened / "sph_cache/particles/particles_0002.ply").vertices) > 0
    surface = read_ply(opened / "sph_cache/surface/surface_0002.ply")
    assert (len(verts), len(corners)) == (len(surface.vertices), 3 * len(surface.faces))


def test_a_file_saved_in_4_2_bakes_the_same_particles_again(ext, opened):
    """... and keeps its replay's material: tagged by its preset alone then, by model and preset now."""
    replay, tag = ext.sub("replay.objects"), ext.sub("liquid_materials").TAG
    saved = bpy.data.materials["SPH Water"]
    assert saved[tag] == "water"
    bpy.data.objects["Tank"].sph.domain.cache_directory = "//rebaked"
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    for k in (1, 2, 3):
        name = f"particles/particles_{k:04d}.ply"
        assert (opened / "rebaked" / name).read_bytes() == (opened / "sph_cache" / name).read_bytes(), name
    for ob in replay.find_replay(bpy.data.objects["Tank"]):
        assert ext.sub("replay.inputs").get_input(ob, "Material") == saved
    assert saved[tag] == "viscoelastic/water"
    assert [m.name for m in bpy.data.materials if m.get(tag)] == ["SPH Water"]


def _migrate_notes(caplog, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name.endswith(".migrate") and r.getMessage().startswith(f"{name}:")]


@pytest.mark.parametrize("preset", ["jelly", "rubber"])
def test_a_fluid_saved_with_a_moved_preset_opens_and_bakes_with_the_model_that_has_it(ext, saved_file, caplog,
                                                                                      preset):
    """The viscoelastic group stores the preset's stable number, no longer one of its items: the Fluid opens
    with the model the preset moved to (``moved_presets``), that preset chosen and its values filled, one
    note naming the object; it stays a Fluid and bakes that model."""
    props, solvers = ext.sub("properties"), ext.core("models").SOLVERS
    target = solvers["viscoelastic"].moved_presets[preset]
    water_in_tank(0.2, 0.15, 0.6, 0.3, spacing=0.05, frame_end=2)
    water = bpy.data.objects["Water"]
    water.sph.material.viscoelastic["preset"] = props.stable_number(preset)  # as the older version saved it
    bpy.ops.wm.save_mainfile()
    bpy.ops.wm.read_homefile(use_empty=True)
    caplog.set_level("WARNING")
    bpy.ops.wm.open_mainfile(filepath=str(saved_file))
    water = bpy.data.objects["Water"]
    m = water.sph.material
    assert (water.sph.role, m.model, m.elastic.preset) == ('FLUID', target, preset)
    want = props.preset_values(target, preset)
    assert {k: getattr(m.elastic, k) for k in want} == pytest.approx(want), "filled as choosing the preset does"
    assert "preset" not in m.viscoelastic and m.viscoelastic.preset == "water", "its old menu reads its default"
    notes = _migrate_notes(caplog, "Water")
    assert len(notes) == 1 and repr(preset) in notes[0] and "Elastic model" in notes[0], notes
    migrate = ext.sub("migrate")
    assert not migrate.pending(m) and not migrate.upgrade(m)
    assert ext.sub("export.values").material_item(water) == {"name": "Water", "model": target, "preset": preset,
                                                             "params": {}}
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    cache = ext.core("cache.cache_dir").CacheDir(saved_file.parent / "sph_cache")
    baked = json.loads(cache.scene_path.read_text(encoding="utf-8"))["materials"]
    assert [(b["model"], b["preset"]) for b in baked] == [(target, preset)]
    assert (cache.root / "particles" / "particles_0002.ply").is_file()
