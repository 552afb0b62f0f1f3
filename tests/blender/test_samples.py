"""The committed sample files open cleanly and render with their presets' looks (no baking).

``scripts/make_samples.py`` saves them with Blender 4.2 and the current add-on: opening one logs
nothing from the add-on (no "settings of an older version were dropped" note from the migration),
and the Domain has no material of its own, which would replace each preset's look
(``liquid_materials``). Whether each camera frames its liquid needs a bake:
``scripts/render_sample_docs.py --check-framing``.
"""

import logging
import shutil

import bpy
import pytest
from conftest import ADDON_MODULE, ROOT

SAMPLES = ("dam_break", "honey_stool", "mud_suzanne", "jelly_steps")


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
    assert not [m for m in domain.data.materials if m is not None], "a Domain material replaces the preset's look"
    assert not [s for s in domain.material_slots if s.material is not None]
    props = ext.sub("properties")
    presets = {props.preset_of(props.model_group(ob.sph.material)) for ob in bpy.context.scene.objects
               if ob.sph.role in props.MATERIAL_ROLES}
    assert presets == {"dam_break": {"water"}, "honey_stool": {"honey"}, "mud_suzanne": {"mud"},
                       "jelly_steps": {"jelly"}}[name]
    assert bpy.context.scene.camera is not None
