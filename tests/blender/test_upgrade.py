"""A .blend saved with an earlier version of the add-on in Blender 4.2 opens in this Blender.

``tests/data/upgrade_4.2/`` was made by ``make_upgrade_fixture.py`` from the checkout at 7fb38d6
(before Blender 5.1-5.3 were supported) in Blender 4.2.23: a 0.2 m cube of water in a Domain, baked
and meshed over frames 1-3 into ``//sph_cache``. Opened here, it keeps its settings and its cache
(the replay shows the cached frames), and baking it again gives the same particles, byte for byte.
"""

import shutil

import bpy
import pytest
from conftest import ROOT
from evaluated import evaluated_mesh, evaluated_points

pytestmark = pytest.mark.smoke

FIXTURE = ROOT / "tests" / "data" / "upgrade_4.2"


@pytest.fixture
def opened(ext, tmp_path, empty_file):
    shutil.copytree(FIXTURE, tmp_path / "upgrade")
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "upgrade" / "upgrade.blend"))
    yield tmp_path / "upgrade"
    bpy.ops.wm.read_homefile(use_empty=True)


def test_a_file_saved_in_4_2_keeps_its_settings_and_shows_its_cache(ext, opened):
    read_ply = ext.core("plyio").read_ply
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
    replay, tag = ext.sub("replay"), ext.sub("liquid_materials").TAG
    saved = bpy.data.materials["SPH Water"]
    assert saved[tag] == "water"
    bpy.data.objects["Tank"].sph.domain.cache_directory = "//rebaked"
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    for k in (1, 2, 3):
        name = f"particles/particles_{k:04d}.ply"
        assert (opened / "rebaked" / name).read_bytes() == (opened / "sph_cache" / name).read_bytes(), name
    for ob in replay.find_replay(bpy.data.objects["Tank"]):
        assert ext.sub("replay_inputs").get_input(ob, "Material") == saved
    assert saved[tag] == "viscoelastic/water"
    assert [m.name for m in bpy.data.materials if m.get(tag)] == ["SPH Water"]
