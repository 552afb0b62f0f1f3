"""Quick setups and the one-button bake (operators.py, quick_setup.py, baking.py).

Quick Liquid on the default cube must give what an artist expects on the first try: the
Domain's floor where the cube stood, the scene's frame range, a first bake of at most ~30k
particles, and one Bake that leaves particles and a surface on every frame.
"""

import bpy
import numpy as np
import pytest
from evaluated import evaluated_mesh, evaluated_point_attributes, evaluated_points


def _world_bounds(ob) -> tuple[np.ndarray, np.ndarray]:
    m = np.array(ob.matrix_world)
    pts = np.array([tuple(c) for c in ob.bound_box]) @ m[:3, :3].T + m[:3, 3]
    return pts.min(axis=0), pts.max(axis=0)


def _the_domain():
    (domain,) = [ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN']
    return domain


def test_first_bake_spacing(ext):
    quick = ext.sub("quick_setup")
    for volume in (8.0, 0.027, 1.234, 300.0):
        s = quick.first_bake_spacing(volume)
        n = volume / s**3
        assert 0.77 * quick.FIRST_BAKE_PARTICLES <= n <= quick.FIRST_BAKE_PARTICLES, (volume, s, n)
        assert float(f"{s:.2g}") == pytest.approx(s, rel=1e-12), "two significant digits"
    assert quick.first_bake_spacing(8.0) == pytest.approx(0.074), "the default cube (docs/blender.md)"
    assert quick.first_bake_spacing(0.0) == pytest.approx(0.05), "no volume: the declared default"


def test_quick_goo_makes_fluid_and_domain_around_it(ext, saved_file):
    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0, 0, 1))
    cube = bpy.context.object
    assert bpy.ops.sph.quick_fluid(preset="honey") == {'FINISHED'}
    m = cube.sph.material
    assert cube.sph.role == 'FLUID' and m.model == "viscoelastic" and m.viscoelastic.preset == "honey"
    assert m.viscoelastic.kinematic_viscosity == pytest.approx(0.03) and m.viscoelastic.density == pytest.approx(1420)
    lo, hi = _world_bounds(_the_domain())
    assert lo[2] == pytest.approx(0.75, abs=1e-6), "the floor is the cube's bottom"
    assert (lo[:2] < -0.25).all() and (hi > (0.25, 0.25, 1.25)).all(), "the Domain encloses the cube"
    # Quick Jelly with the Domain there: no second Domain, and its surface stays on for the honey.
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.5, 0, 1))
    jelly = bpy.context.object
    assert bpy.ops.sph.quick_fluid(preset="jelly") == {'FINISHED'}
    assert (jelly.sph.role, jelly.sph.material.model, jelly.sph.material.elastic.preset) == ('SOLID', "elastic",
                                                                                              "jelly")
    assert _the_domain().sph.domain.surface_enabled


def test_make_domain_follows_the_scene(ext, saved_file):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 11, 250
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(1, 2, 3))
    assert bpy.ops.sph.make_domain() == {'FINISHED'}
    d = _the_domain().sph.domain
    assert (d.frame_start, d.frame_end) == (11, 250)
    lo, _ = _world_bounds(_the_domain())
    assert lo[2] == pytest.approx(2.5, abs=1e-5)


def test_quick_liquid_on_the_default_cube_one_bake(ext, saved_file):
    """The default cube (2 m at the origin), Quick Liquid, one Bake: every frame has particles and a surface."""
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 3  # a short timeline keeps the bake cheap
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    assert bpy.ops.sph.quick_fluid(preset="water") == {'FINISHED'}
    domain = _the_domain()
    d = domain.sph.domain
    lo, hi = _world_bounds(domain)
    assert lo[2] == pytest.approx(-1.0, abs=1e-6), "the floor is the cube's bottom, not 2 m below"
    assert (lo[:2] < -1).all() and (hi > 1).all(), "the Domain encloses the cube"
    assert (d.frame_start, d.frame_end) == (scene.frame_start, scene.frame_end)
    n, _ = ext.sub("baking").particle_estimate(scene, domain)
    assert 15_000 <= n <= 30_000, n

    assert bpy.ops.sph.bake() == {'FINISHED'}
    cache = ext.sub("export.snapshot").cache_dir(domain)
    read_ply = ext.core("cache.plyio").read_ply
    replay = ext.sub("replay.objects")
    particles, surface = replay.find_replay(domain)
    assert particles.hide_render and not surface.hide_render, "the render shows no particle spheres"
    for frame in range(1, 4):
        scene.frame_set(frame)
        ply = read_ply(cache / "particles" / f"particles_{frame:04d}.ply")
        assert 0 < len(ply.vertices) <= 30_000
        assert len(evaluated_points(particles)[0]) == len(ply.vertices), frame
        sply = read_ply(cache / "surface" / f"surface_{frame:04d}.ply")
        pos, corners, _ = evaluated_mesh(surface)
        assert len(pos) == len(sply.vertices) > 100 and len(corners) == sply.faces.size > 0, frame
    # The cube's particles were all there at the first frame: two frames old at the third.
    attrs = evaluated_point_attributes(particles)
    np.testing.assert_array_equal(attrs["id"][1], ply.vertices["id"])
    np.testing.assert_allclose(attrs["age"][1], 2 / (scene.render.fps / scene.render.fps_base), rtol=1e-6)


def _small_scene(tmp_path):
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0, 0, 0.5))
    bpy.context.object.sph.role = 'FLUID'
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0, 0, 0.5))
    domain = bpy.context.object
    domain.sph.role = 'DOMAIN'
    domain.sph.domain.particle_spacing = 0.05
    domain.sph.domain.frame_end = 2
    return domain


def _surfaces(cache) -> list[str]:
    folder = cache / "surface"
    return sorted(p.name for p in folder.glob("*.ply")) if folder.is_dir() else []


def test_bake_data_only_simulates_and_surface_off_bakes_no_mesh(ext, saved_file, tmp_path):
    domain = _small_scene(tmp_path)
    cache = ext.sub("export.snapshot").cache_dir(domain)
    assert bpy.ops.sph.bake_data() == {'FINISHED'}
    assert (cache / "particles" / "particles_0002.ply").is_file() and _surfaces(cache) == []
    assert bpy.ops.sph.bake_mesh() == {'FINISHED'}
    assert _surfaces(cache) == ["surface_0001.ply", "surface_0002.ply"]
    domain.sph.domain.surface_enabled = False
    assert bpy.ops.sph.bake(replace=True) == {'FINISHED'}
    assert (cache / "particles" / "particles_0002.ply").is_file() and _surfaces(cache) == []
