"""Domain controls (Time Scale, Time Steps, Borders per side, Wall Friction) and the Outflow role reach the scene
file, and files saved before them export what they baked with.

The physics of each control is tested in tests/core (test_time_scale.py, test_domain_borders.py,
test_outflow.py); here only the translation from Blender.
"""

import shutil

import bpy
import pytest
import record_exports

SIDES = ("x_min", "x_max", "y_min", "y_max", "z_min", "z_max")


@pytest.fixture
def tank(ext, saved_file):
    """A 2 m Domain "Tank" around a 0.3 m Fluid cube, in a saved file."""
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0, 0, 0.5))
    bpy.context.object.name, bpy.context.object.sph.role = "Water", 'FLUID'
    bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))
    ob = bpy.context.object
    ob.name, ob.sph.role = "Tank", 'DOMAIN'
    ob.sph.domain.particle_spacing, ob.sph.domain.frame_end = 0.05, 2
    return ob


def _build(ext, domain, tmp_path) -> dict:
    data, _ = ext.sub("export.snapshot").build_scene(bpy.context.scene, domain, tmp_path / "in")
    return data


def _walls(data: dict, name: str) -> list[dict]:
    return [c for c in data["colliders"] if c["type"] == "box_container" and c["name"] == name]


def test_time_scale_is_exported(ext, tank, tmp_path):
    assert tank.sph.domain.time_scale == 1.0
    assert "time_scale" not in _build(ext, tank, tmp_path)["simulation"], "the default: the scene as before"
    tank.sph.domain.time_scale = 0.25
    data = _build(ext, tank, tmp_path)
    assert data["simulation"]["time_scale"] == 0.25
    scene = ext.core("scene.scene_file").parse_scene(data, tmp_path / "in")
    assert scene.frame_time == pytest.approx(0.25 / 24)  # the default file's 24 fps


def test_time_steps_are_exported_when_global(ext, tank, tmp_path):
    """Individual time steps, the default, add nothing to the scene file (a bake begun by an older version
    resumes); Global reaches simulation.time_steps."""
    assert tank.sph.domain.time_steps == "individual"
    data = _build(ext, tank, tmp_path)
    assert "time_steps" not in data["simulation"], "the default: the scene as before"
    assert ext.core("scene.scene_file").parse_scene(data, tmp_path / "in").simulation["time_steps"] == "individual"
    tank.sph.domain.time_steps = "global"
    data = _build(ext, tank, tmp_path)
    assert data["simulation"]["time_steps"] == "global"
    assert ext.core("scene.scene_file").parse_scene(data, tmp_path / "in").simulation["time_steps"] == "global"


def test_borders_and_wall_friction_are_exported(ext, tank, tmp_path):
    d = tank.sph.domain
    (walls,) = _walls(_build(ext, tank, tmp_path), "Tank")
    assert walls == {"type": "box_container", "name": "Tank", "position": [0.0, 0.0, 1.0], "size": [2.0, 2.0, 2.0]}, \
        "closed with no friction: the item older versions wrote"
    d.open_x_max, d.open_z_max, d.wall_friction = True, True, 0.5
    data = _build(ext, tank, tmp_path)
    (walls,) = _walls(data, "Tank")
    assert {s for s in SIDES if walls.get(f"open_{s}")} == {"x_max", "z_max"} and walls["friction"] == 0.5
    assert data["domain"] == {"min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 2.0]}, "what leaves is removed"
    scene = ext.core("scene.scene_file").parse_scene(data, tmp_path / "in")
    (kind, p), = scene.colliders
    assert kind == "box_container" and p["open_x_max"] and p["friction"] == 0.5
    for side in SIDES:
        setattr(d, f"open_{side}", True)
    assert _walls(_build(ext, tank, tmp_path), "Tank") == [], "every side open: no walls"
    for side in SIDES:
        setattr(d, f"open_{side}", False)
    d.closed_borders = False
    assert _walls(_build(ext, tank, tmp_path), "Tank") == [], "Closed Borders off opens every side"


# Files saved before per-side borders (the samples have been rebuilt since): the old-layout fixtures
# (closed tanks) and the coiling honey sample as committed then (an open Domain).
BEFORE_BORDERS = {**record_exports.blend_files(),
                  "honey_stool_open": record_exports.OUT / "honey_stool_before_borders.blend"}


@pytest.mark.parametrize("name", ["dam_break", "honey_stool", "honey_stool_open", "mud_suzanne", "old_layout"])
def test_files_saved_before_borders_export_what_they_baked(ext, tmp_path, name, empty_file):
    """Saved before per-side borders: closed tanks stay closed with no friction (the same kernel),
    open ones stay open, and time runs at the timeline's rate."""
    src = BEFORE_BORDERS[name]
    path = tmp_path / src.name
    shutil.copy(src, path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    domain = next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')
    stored = domain.sph.domain.keys()
    assert "time_scale" not in stored and "wall_friction" not in stored
    assert not any(f"open_{s}" in stored for s in SIDES)
    data = _build(ext, domain, tmp_path)
    assert {"time_scale", "time_steps"}.isdisjoint(data["simulation"]) and "outflows" not in data
    walls = _walls(data, domain.name)
    assert len(walls) == (1 if domain.sph.domain.closed_borders else 0)
    assert domain.sph.domain.closed_borders == (name != "honey_stool_open"), "the coiling honey sample is open"
    for w in walls:
        assert set(w) == {"type", "name", "position", "size"}, "the item older versions wrote"
    colliders = ext.core("colliders")
    for kind, p in ext.core("scene.scene_file").parse_scene(data, tmp_path / "in").colliders:
        if kind == "box_container":  # the closed tank's kernel, bit for bit
            assert colliders.COLLIDERS[kind].build(p, colliders.BuildContext()).sdf.__name__ == "sdf_box_container"



def test_outflow_role_is_exported_and_removes_particles(ext, tank, tmp_path):
    assert "outflows" not in _build(ext, tank, tmp_path), "no Outflow: the scene as before"
    # A 0.4 m box around the lower half of the 0.3 m Water cube (z 0.35-0.65), rotated and scaled.
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0, 0, 0.35), rotation=(0, 0, 0.3))
    drain = bpy.context.object
    drain.name, drain.sph.role, drain.scale = "Drain", 'OUTFLOW', (0.4, 0.4, 0.3)
    data = _build(ext, tank, tmp_path)
    (item,) = data["outflows"]
    assert item["type"] == "mesh" and item["name"] == "Drain" and item["path"] == "outflow_Drain.ply"
    assert item["position"] == pytest.approx([0, 0, 0.35]) and item["rotation"] == pytest.approx([0, 0, 0.3])
    assert (tmp_path / "in" / item["path"]).exists()
    # numba as a bake configures it (its cache in user storage, not the checkout's __pycache__,
    # where kernels pickled under bl_ext.* would break the plain-Python runs of the checkout).
    ext.sub("runtime").prepare_numba()
    core_scene, simulation = ext.core("scene.scene_file"), ext.core("world.simulation")
    sim = simulation.Simulation(core_scene.parse_scene(data, tmp_path / "in"))
    z = sim.state.x[:, 2]
    # Water particles sit at z 0.375 .. 0.625: those below the drain's top (0.5) are gone at once.
    assert len(z) > 0 and z.min() > 0.5 and sum(sim.state.removed.values()) == 6 * 6 * 3


def test_an_outflow_that_moves_is_exported_with_keyframes(ext, tank, tmp_path):
    """An Outflow keyed to slide 0.5 m along x over frames 1-2 exports its pose per frame (a still one
    exports none, above); the core reads the keys as a moving drain."""
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0, 0, 0.2))
    drain = bpy.context.object
    drain.name, drain.sph.role = "Drain", 'OUTFLOW'
    drain.keyframe_insert("location", frame=1)
    drain.location.x = 0.5
    drain.keyframe_insert("location", frame=2)
    bpy.context.scene.frame_set(1)
    (item,) = _build(ext, tank, tmp_path)["outflows"]
    assert [k["frame"] for k in item["keyframes"]] == [1, 2]
    assert [k["position"][0] for k in item["keyframes"]] == pytest.approx([0.0, 0.5])
    (_, p), = ext.core("scene.scene_file").parse_scene(_build(ext, tank, tmp_path), tmp_path / "in").outflows
    motion = ext.core("colliders.motion").motion_from_scene(p, 1)
    assert motion.transform(1.5)[1] == pytest.approx([0.25, 0.0, 0.2])
