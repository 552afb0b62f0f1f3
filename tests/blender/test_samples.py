"""The committed sample files open cleanly and render with their presets' looks (no baking).

``scripts/make_samples.py`` saves them with Blender 4.2 and the current add-on: opening one logs
nothing from the add-on (no "settings of an older version were dropped" note from the migration),
and the Domain has no material of its own, which would replace each preset's look
(``liquid_materials``), except in ``rubber_suzanne`` and ``melt_and_float``: there the Domain's
material is the preset looks with the jelly's or rubber's particles' surface made transparent (the
Solid renders itself, its own mesh deformed). Whether each camera frames its liquid needs a bake:
``scripts/render_sample_docs.py --check-framing``.
"""

import logging
import shutil

import bpy
import pytest
from conftest import ADDON_MODULE, ROOT

SAMPLES = ("dam_break", "honey_stool", "mud_suzanne", "jelly_steps", "rubber_suzanne", "crate_flood", "melt_and_float")
# (model, preset) of each sample's Fluids, Inflows and Solids.
PRESETS = {"dam_break": {("viscoelastic", "water")}, "honey_stool": {("viscoelastic", "honey")},
           "mud_suzanne": {("viscoelastic", "mud")}, "jelly_steps": {("elastic", "jelly")},
           "rubber_suzanne": {("viscoelastic", "water"), ("elastic", "rubber")},
           "crate_flood": {("viscoelastic", "water")},
           "melt_and_float": {("viscoelastic", "water"), ("elastic", "dark_chocolate"), ("elastic", "jelly"),
                              ("sph", "melted_chocolate")}}
# The Domains with a material of their own: each preset's look with a Solid's particles' surface transparent
# (the Solid renders itself, its own mesh deformed).
DOMAIN_MATERIALS = {"rubber_suzanne": ["Water, Solid Hidden"], "melt_and_float": ["Preset Looks, Jelly Hidden"]}


@pytest.mark.smoke
@pytest.mark.parametrize("name", SAMPLES)
def test_sample_opens_without_notes_and_keeps_the_preset_look(ext, tmp_path, empty_file, caplog, name):
    path = tmp_path / f"{name}.blend"
    shutil.copy(ROOT / "sample_blends" / path.name, path)
    caplog.set_level(logging.DEBUG, logger=ADDON_MODULE)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    notes = [f"{r.name}: {r.getMessage()}" for r in caplog.records
             if r.name.startswith(ADDON_MODULE) and r.levelno >= logging.WARNING]
    assert notes == [], f"{name}.blend: rebuild it with scripts/make_samples.py"
    assert bpy.data.version[:2] == (4, 2), "saved with Blender 4.2, the oldest supported, so it opens everywhere"
    domains = [ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN']
    assert len(domains) == 1
    domain = domains[0]
    materials = [m.name for m in domain.data.materials if m is not None]
    if name in DOMAIN_MATERIALS:
        assert materials == DOMAIN_MATERIALS[name]
    else:
        assert materials == [], "a Domain material replaces the preset's look"
        assert not [s for s in domain.material_slots if s.material is not None]
    presets = {(ob.sph.material.model, getattr(ob.sph.material, ob.sph.material.model).preset)
               for ob in bpy.context.scene.objects if ob.sph.role in {'FLUID', 'INFLOW', 'SOLID'}}
    assert presets == PRESETS[name]
    assert bpy.context.scene.camera is not None
