"""Record what each committed sample .blend exports, as fixtures in ``tests/data/exported/``.

    .venv-bpy-4.2/bin/python tests/blender/record_exports.py [--force]

The fixtures were recorded with the add-on as it was before the per-model material settings,
from sample files saved with the old layout. ``test_bake.py`` opens the same files
with the current add-on and requires the same materials: that is the proof that old files keep
their settings. Rerunning this after a layout change would only record the new behaviour, so
existing fixtures are kept unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ("dam_break", "honey_stool", "mud_suzanne", "jelly_steps")
OUT = ROOT / "tests" / "data" / "exported"
# The committed samples hold no edited parameter; this file, saved with the old layout too, has
# overrides, a preset never chosen (the old default), an enum parameter and an Inflow.
OLD_LAYOUT = OUT / "old_layout.blend"
# Every sample has been rebuilt since the fixtures were recorded (honey_stool for the coiling
# regime, the others re-saved with the current add-on): the files saved with the old
# layout moved here (sample_blends/ holds the new ones), so the proof still opens what the
# fixtures were recorded from.
MOVED = {name: OUT / f"{name}_old_layout.blend" for name in SAMPLES}


def blend_files() -> dict[str, Path]:
    """Every old-layout file with a fixture: name -> path."""
    files = {name: MOVED.get(name, ROOT / "sample_blends" / f"{name}.blend") for name in SAMPLES}
    files["old_layout"] = OLD_LAYOUT
    return files


def build_old_layout_file(bpy, path: Path) -> None:
    """Save ``path`` with the layout of the add-on at commit 37ca900 (one merged material group).

    Only meaningful with that add-on: run at that commit (``git archive 37ca900``), never later.
    """
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0.0, 0.0, 1.0))
    tank = bpy.context.object
    tank.name, tank.sph.role = "Tank", 'DOMAIN'
    tank.sph.domain.particle_spacing, tank.sph.domain.frame_end = 0.05, 2
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(-0.4, 0.0, 0.5))
    goo = bpy.context.object
    goo.name, goo.sph.role = "Goo", 'FLUID'
    m = goo.sph.material
    m.preset = "honey"
    m.viscosity, m.viscous_stretching, m.springs = 123.0, False, "dynamic"
    m.initial_velocity = (0.5, 0.0, 0.0)
    bpy.ops.mesh.primitive_cube_add(size=0.3, location=(0.4, 0.0, 0.5))
    plain = bpy.context.object
    plain.name, plain.sph.role = "Plain", 'FLUID'
    bpy.ops.mesh.primitive_circle_add(radius=0.05, location=(0.0, 0.0, 1.5), fill_type='NGON')
    spout = bpy.context.object
    spout.name, spout.sph.role = "Spout", 'INFLOW'
    spout.sph.material.preset = "mud"
    spout.sph.material.stiffness, spout.sph.material.yield_ratio = 500.0, 0.2
    bpy.ops.wm.save_as_mainfile(filepath=str(path), compress=True)


def with_moved_presets(material: dict, solvers) -> dict:
    """A recorded material as this version exports it where its preset has moved to another model
    (``moved_presets``: jelly and rubber to the elastic model): that model, with the preset's own values
    (the old model's values cannot carry over). Other materials as recorded."""
    moved = solvers[material["model"]].moved_presets.get(material["preset"])
    return {**material, "model": moved, "params": {}} if moved else material


def exported_materials(bpy, export, blend: Path, work: Path) -> dict:
    """Open a copy of ``blend`` and return the materials its scene.json gets, plus fill velocities."""
    path = work / blend.name
    shutil.copy(blend, path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    domain = next(ob for ob in bpy.context.scene.objects if ob.sph.role == 'DOMAIN')
    data, _ = export.build_scene(bpy.context.scene, domain, work / "input", (1, 1))
    velocities = {s["material"]: s["velocity"] for s in data["sources"] if s["type"] == "mesh"}
    return {"materials": data["materials"], "initial_velocities": velocities}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="overwrite existing fixtures")
    parser.add_argument("--make-old-layout", action="store_true",
                        help=f"first save {OLD_LAYOUT.name} (only with the add-on at commit 37ca900)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "scripts"))
    import blender_session

    bpy, module = blender_session.start(tempfile.mkdtemp(prefix="sph_record_user_"))
    export = importlib.import_module(f"{module}.sph_addon.blender.export.snapshot")
    OUT.mkdir(parents=True, exist_ok=True)
    if args.make_old_layout:
        build_old_layout_file(bpy, OLD_LAYOUT)
    with tempfile.TemporaryDirectory() as work:
        for name, blend in blend_files().items():
            target = OUT / f"{name}.json"
            if target.exists() and not args.force:
                continue
            found = exported_materials(bpy, export, blend, Path(work))
            found["recorded_with"] = f"Blender {bpy.app.version_string}"
            target.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
