"""Scene format 2: the viscoelastic model in physical units, format-1 files still read.

Format 2 dropped ``stiffness``, ``repulsion_factor`` and ``rest_density`` (Clavet's constants are
derived from ``density_error``, the spacing and ``surface_tension``). A format-1 file that only
names presets is the same scene in format 2 and must load; one that overrides a removed parameter
must be refused before any work, at that field's JSON path, saying what replaced it.
"""

import json
import subprocess
import sys

import pytest
from conftest import REPO, scene_dict

from sph_addon.core import bake as core_bake
from sph_addon.core.errors import InputError
from sph_addon.core.models import SOLVERS
from sph_addon.core.scene.scene_file import FORMAT, READABLE_FORMATS, load_scene, parse_scene

OLD = "sph_addon.scene/1"
PRESETS = sorted(SOLVERS["viscoelastic"].presets)


def _preset_scene(fmt: str) -> dict:
    """One material per viscoelastic preset, each named by its preset only (no overrides)."""
    materials = [{"name": p, "preset": p} for p in PRESETS]
    sources = [{"type": "box", "material": p, "min": [0.1 * k, 0, 0], "max": [0.1 * k + 0.05, 0.1, 0.1]}
               for k, p in enumerate(PRESETS)]
    return scene_dict(format=fmt, materials=materials, sources=sources)


def test_format_constants():
    assert FORMAT == "sph_addon.scene/2"
    assert READABLE_FORMATS == (OLD, FORMAT)


def test_format1_file_naming_only_presets_loads(write_scene):
    old = load_scene(write_scene(_preset_scene(OLD), "old.json"))
    new = load_scene(write_scene(_preset_scene(FORMAT), "new.json"))
    assert [m.preset for m in old.materials] == PRESETS
    # The same scene: every material gets its preset's values in the new units.
    assert old.materials == new.materials
    spec = SOLVERS["viscoelastic"]
    for m in old.materials:
        want = {p.name: p.default for p in spec.parameters} | spec.presets[m.preset]
        assert {p.name: getattr(m.params, p.name) for p in spec.parameters} == want, m.name


def test_format1_file_with_other_valid_overrides_loads(write_scene):
    data = scene_dict(format=OLD, materials=[{"name": "water", "preset": "honey",
                                              "params": {"stiff_viscosity": 0.5, "youngs_modulus": 10.0}}])
    m = load_scene(write_scene(data)).materials[0]
    assert (m.params.stiff_viscosity, m.params.youngs_modulus) == (0.5, 10.0)


REMOVED = [
    ("stiffness", 500.0, "Clavet's stiffness is now derived from density_error", "set density_error"),
    ("repulsion_factor", 2.0, "derived from the particle spacing and support_factor", "delete this field"),
    ("rest_density", 1.1, "cohesion is now surface_tension in N/m", "set surface_tension"),
    ("viscosity", 20.0, "viscosity is now kinematic_viscosity in m²/s", "set kinematic_viscosity"),
    ("viscous_stretching", True, "resists stretching", "delete this field"),
    ("spring_stiffness", 400.0, "springs are now set by youngs_modulus in Pa", "set youngs_modulus"),
]


@pytest.mark.parametrize("fmt", [OLD, FORMAT])
@pytest.mark.parametrize("name,value,replaced_by,how", REMOVED, ids=[r[0] for r in REMOVED])
def test_removed_parameter_is_refused_at_its_path_with_the_replacement(write_scene, fmt, name, value, replaced_by,
                                                                      how):
    data = scene_dict(format=fmt, materials=[
        {"name": "water", "preset": "water"},
        {"name": "spout", "preset": "mud", "params": {"yield_ratio": 0.2, name: value}}])
    with pytest.raises(InputError) as info:
        load_scene(write_scene(data))
    exc = info.value
    assert exc.where == f"materials[1].params.{name}"
    assert exc.message.startswith("removed in scene format 2: ")
    assert replaced_by in exc.message and how in exc.message
    assert str(exc).startswith(f"materials[1].params.{name}: removed in scene format 2")


def test_format1_stiffness_override_is_refused_by_the_command_line_before_any_work(tmp_path, write_scene):
    scene = write_scene(scene_dict(format=OLD, materials=[{"name": "water", "preset": "water",
                                                           "params": {"stiffness": 300.0}}]))
    out = tmp_path / "out"
    for args in (("validate", scene), ("bake", scene, "--out", out)):
        r = subprocess.run([sys.executable, "-m", "sph_addon", *map(str, args)], cwd=REPO, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 2, r.stderr
        line = r.stderr.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in line
        assert "materials[0].params.stiffness: removed in scene format 2" in line
        assert "density_error" in line
    assert not out.exists(), "nothing may be written for a refused scene"


def test_unknown_format_names_the_readable_ones():
    with pytest.raises(InputError, match=r"expected 'sph_addon.scene/2' \(or the older 'sph_addon.scene/1'\), "
                                         r"got 'sph_addon.scene/3'") as info:
        parse_scene(scene_dict(format="sph_addon.scene/3"))
    assert info.value.where == "format"


def test_new_parameters_are_accepted_and_checked():
    data = scene_dict(materials=[{"name": "water", "preset": "water", "params": {
        "density": 1420.0, "surface_tension": 0.05, "density_error": 0.02, "max_iterations": 40}}])
    p = parse_scene(data).materials[0].params
    assert (p.density, p.surface_tension, p.density_error, p.max_iterations) == (1420.0, 0.05, 0.02, 40)
    bad = scene_dict(materials=[{"name": "water", "params": {"surface_tension": -1.0}}])
    with pytest.raises(InputError, match=r"materials\[0\]\.params\.surface_tension: must be at least 0"):
        parse_scene(bad)


def test_format2_round_trips(write_scene, tmp_path):
    """Written as JSON and read back, a format-2 scene is the same scene and the same file."""
    data = _preset_scene(FORMAT)
    data["materials"][0]["params"] = {"density": 1420.0, "surface_tension": 0.05, "density_error": 0.02,
                                      "max_iterations": 40, "kinematic_viscosity": 0.0125}
    first = load_scene(write_scene(data, "a.json"))
    again = load_scene(write_scene(json.loads(json.dumps(first.raw)), "b.json"))
    assert again == first
    assert json.loads((tmp_path / "b.json").read_text()) == data


def test_bake_stores_a_format1_scene_as_format2_and_resumes_from_it(tmp_path, write_scene):
    """The cache's scene.json is written in the current format; resuming with the old file still matches."""
    data = scene_dict(format=OLD, frame_end=2)
    scene = write_scene(data)
    out = tmp_path / "cache"
    core_bake.bake(scene, out)
    stored = json.loads((out / "scene.json").read_text())
    assert stored["format"] == FORMAT
    assert {k: v for k, v in stored.items() if k != "format"} == {k: v for k, v in data.items() if k != "format"}
    assert parse_scene(stored).materials == load_scene(scene).materials
    assert core_bake.prepare(scene, out, resume=True).resume
