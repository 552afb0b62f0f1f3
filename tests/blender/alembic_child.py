"""Read Alembic files in a fresh Blender with no add-on: what another program or a render farm does.

Run as ``python alembic_child.py JOB.json`` with the venv's interpreter. ``JOB.json``:
``{"files": [ABC, ...], "render": {"file": ABC, "object": NAME, "frame": K, "out": DIR}}``
(``render`` optional). Prints one JSON line and exits 0.

Each file is imported into an empty scene with ``wm.alembic_import(as_background_job=False)``;
for every frame of the range the import set on the scene the line gives each object's evaluated
vertex and face counts and attribute names. ``render``: the file imported into a .blend that is
saved and opened again (what a farm renders), then a 32x32 Cycles render of that frame with the
object shown and hidden, an orthographic camera framing it.

``BLENDER_USER_RESOURCES`` points at a new, empty directory before ``import bpy``, so no extension
is installed or enabled.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path


def _read(bpy, path: str) -> dict:
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.wm.alembic_import(filepath=path, as_background_job=False) == {'FINISHED'}
    scene = bpy.context.scene
    out = {"frame_range": [scene.frame_start, scene.frame_end], "objects": {}, "frames": {}}
    for ob in bpy.data.objects:
        out["objects"][ob.name] = {"type": ob.type, "modifiers": [m.type for m in ob.modifiers]}
    for k in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(k)
        dg = bpy.context.evaluated_depsgraph_get()
        shown = {}
        for ob in bpy.data.objects:
            me = ob.evaluated_get(dg).data
            if isinstance(me, bpy.types.Mesh):
                shown[ob.name] = {"vertices": len(me.vertices), "faces": len(me.polygons),
                                  "attributes": sorted(a.name for a in me.attributes if not a.name.startswith("."))}
        out["frames"][str(k)] = shown
    return out


def _render(bpy, job: dict) -> dict:
    """Render the object's frame shown and hidden; the fraction of pixels it changes, in and out of its box."""
    import numpy as np
    from mathutils import Vector
    from rendering import render, tiny_cycles

    out = Path(job["out"])
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.alembic_import(filepath=job["file"], as_background_job=False)
    # What a farm renders: a .blend that imported the file, saved and opened again.
    bpy.ops.wm.save_as_mainfile(filepath=str(out / "render.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(out / "render.blend"), load_ui=False)
    scene = bpy.context.scene
    scene.frame_set(job["frame"])
    ob = bpy.data.objects[job["object"]]
    dg = bpy.context.evaluated_depsgraph_get()
    box = [ob.matrix_world @ Vector(c) for c in ob.evaluated_get(dg).bound_box]
    lo = np.min(box, axis=0)
    hi = np.max(box, axis=0)
    centre, size = (lo + hi) / 2, float(np.max(hi - lo))
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    cam.data.type = 'ORTHO'
    cam.data.ortho_scale = 2.0 * size          # the object fills the middle half of the image
    cam.location = (centre[0], centre[1] - 4.0 * size, centre[2])
    cam.rotation_euler = (np.pi / 2, 0.0, 0.0)  # looking along +y
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", 'SUN'))
    sun.data.energy = 4.0
    sun.rotation_euler = (0.6, 0.2, 0.4)
    for extra in (cam, sun):
        scene.collection.objects.link(extra)
    scene.camera = cam
    scene.world = bpy.data.worlds.new("World")
    scene.world.color = (0.05, 0.05, 0.05)
    if bpy.app.version < (5, 0, 0):
        scene.world.use_nodes = False
    tiny_cycles(scene, (32, 32))
    shown = render(scene, out / "shown.png")
    ob.hide_render = True
    hidden = render(scene, out / "hidden.png")
    changed = np.abs(shown - hidden).mean(-1) > 0.05
    # The object's box covers the middle half of the image (ortho_scale = 2 x its largest side).
    inner = changed[12:20, 12:20]
    mask = np.ones_like(changed)
    mask[4:28, 4:28] = False
    return {"inside": float(inner.mean()), "outside": float(changed[mask].mean()),
            "background": float(hidden.mean())}


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    user_dir = tempfile.mkdtemp(prefix="sph_abc_user_")
    os.environ["BLENDER_USER_RESOURCES"] = user_dir
    import bpy

    sys.path.insert(0, str(Path(__file__).parent))  # rendering.py
    report = {"files": {path: _read(bpy, path) for path in job["files"]}}
    if job.get("render"):
        report["render"] = _render(bpy, job["render"])
    report["addon_modules"] = sorted(m for m in sys.modules if "sph_addon" in m)
    report["blender"] = bpy.app.version_string
    print(json.dumps(report))
    shutil.rmtree(user_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
