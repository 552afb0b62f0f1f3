"""Declared surface settings, registry consistency and code-policy checks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from sph_addon.core.errors import InputError
from sph_addon.core.surface import SURFACE_PARAMETERS, surface_settings
from sph_addon.core.surface.settings import FIELD_DEFAULTS

SURFACE_DIR = Path(__file__).resolve().parents[2] / "sph_addon" / "core" / "surface"


def test_defaults_are_multiples_of_the_spacing():
    s = surface_settings({"particle_spacing": 0.02})
    assert s.field == "clavet"
    assert s.support == pytest.approx(0.04) and s.cube_size == pytest.approx(0.01)
    assert s.min_radius == pytest.approx(0.01) and s.iso == pytest.approx(1.24)
    d = surface_settings({"particle_spacing": 0.02, "surface": {"field": "density"}})
    assert d.support == pytest.approx(0.0272) and d.iso == 2.0


def test_explicit_values_win_and_thin_features_off():
    s = surface_settings({"particle_spacing": 0.02, "surface": {
        "support": 0.05, "iso": 0.9, "cube_size": 0.004, "thin_features": False}})
    assert (s.support, s.iso, s.cube_size, s.min_radius) == (0.05, 0.9, 0.004, 0.0)


@pytest.mark.parametrize("surface, where", [
    ({"field": "metaballs"}, "surface.field"),
    ({"support": -1.0}, "surface.support"),
    ({"smoothing_iterations": 1.5}, "surface.smoothing_iterations"),
    ({"min_radius": 0.5}, "surface.min_radius"),
    ({"cube_size": 1e-5}, "surface.cube_size"),
    ({"isovalue": 1.0}, "surface.isovalue"),
])
def test_bad_settings_name_the_field(surface, where):
    with pytest.raises(InputError) as exc:
        surface_settings({"particle_spacing": 0.02, "surface": surface})
    assert exc.value.where == where


def test_digest_changes_with_settings():
    a = surface_settings({"particle_spacing": 0.02})
    b = surface_settings({"particle_spacing": 0.02, "surface": {"smoothing_iterations": 1}})
    assert a.digest() == surface_settings({"particle_spacing": 0.02}).digest() != b.digest()


def test_field_defaults_match_registry():
    from sph_addon.core.surface.fields import FIELDS

    assert set(FIELDS) == set(FIELD_DEFAULTS) == set(next(p for p in SURFACE_PARAMETERS
                                                           if p.name == "field").choices)
    for name, f in FIELDS.items():
        assert f.support_factor == FIELD_DEFAULTS[name]["support_factor"]
        assert f.iso == FIELD_DEFAULTS[name]["iso"]


def test_every_parameter_is_documented():
    doc = (SURFACE_DIR.parents[2] / "docs" / "surface.md").read_text()
    for p in SURFACE_PARAMETERS:
        assert p.description and f"`{p.name}`" in doc


def test_no_hard_coded_numba_options():
    for path in SURFACE_DIR.glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\b(fastmath|parallel|cache)\s*=", text), path
        assert "print(" not in text, path


def test_settings_import_is_numba_free_and_bpy_free():
    code = ("import sys; import sph_addon.core.surface as s; s.SURFACE_PARAMETERS; "
            "assert 'numba' not in sys.modules, 'numba'; "
            "import sph_addon.core.surface.stage, sph_addon.core.surface.reconstruct; "
            "assert 'bpy' not in sys.modules")
    root = SURFACE_DIR.parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
