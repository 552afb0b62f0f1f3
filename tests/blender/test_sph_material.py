"""The ``sph`` model (Desbrun & Cani 1996) baked from Blender: a lump of putty and an Inflow of classic
water, a few hundred particles over five frames through the bake operator. What is tested is the
translation: the materials reach the scene file, the particle frames hold the model's ``time_level``
and the replay shows it as an integer point attribute (the physics is tested in tests/core).
"""

import bpy
import numpy as np
from evaluated import evaluated_point_attributes, evaluated_points

FRAMES = 5


def _scene(tmp_path):
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "putty.blend"))
    bpy.ops.mesh.primitive_cube_add(size=0.15, location=(0.0, 0.0, 0.1))
    putty = bpy.context.object
    putty.name, putty.sph.role = "Putty", 'FLUID'
    putty.sph.material.model = "sph"
    putty.sph.material.sph.preset = "putty"
    putty.sph.material.sph.speed_of_sound = 3.0  # a soft putty: its particles step coarser than the water's
    bpy.ops.mesh.primitive_circle_add(radius=0.06, location=(0.1, 0.0, 0.3), fill_type='NGON')
    spout = bpy.context.object
    spout.name, spout.sph.role = "Spout", 'INFLOW'
    spout.sph.material.model = "sph"  # classic water, the model's default preset
    spout.sph.inflow.radius, spout.sph.inflow.frame_end = 0.06, 2
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0.0, 0.0, 0.25))
    domain = bpy.context.object
    domain.name, domain.sph.role = "Tank", 'DOMAIN'
    d = domain.sph.domain
    d.particle_spacing, d.frame_end, d.surface_enabled = 0.025, FRAMES, False
    return domain


def test_an_sph_lump_and_inflow_bake_and_replay_their_time_levels(ext, tmp_path, empty_file):
    domain = _scene(tmp_path)
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    cache = ext.sub("export.snapshot").cache_dir(domain)
    stored = ext.core("cache.jsonfile").read_json(cache / "scene.json", "stored scene")
    assert [(m["name"], m["model"], m["preset"]) for m in stored["materials"]] == [
        ("Putty", "sph", "putty"), ("Spout", "sph", "classic_water")]
    assert "time_steps" not in stored["simulation"], "individual time steps, the default"
    particles = ext.core("cache.cache_dir").CacheDir(cache).read_particles(FRAMES)
    assert particles.dtype["time_level"] == np.uint8
    # Water (speed of sound 20 m/s) steps finer than the soft putty (3 m/s): individual levels, not one for all.
    levels = [set(particles["time_level"][particles["material"] == k]) for k in (0, 1)]
    assert max(levels[1]) > min(levels[0]), levels
    assert 200 < len(particles) < 400 and set(np.unique(particles["material"])) == {0, 1}, "the lump and the stream"

    found = {ob["sph_replay"]: ob for ob in bpy.context.scene.objects if ob.get("sph_domain") == domain.name}
    bpy.context.scene.frame_set(FRAMES)
    assert len(evaluated_points(found["particles"])[0]) == len(particles)
    data_type, values = evaluated_point_attributes(found["particles"])["time_level"]
    assert data_type == 'INT'
    np.testing.assert_array_equal(values, particles["time_level"])
