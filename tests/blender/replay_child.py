"""Render one frame of a saved .blend in a fresh Blender with no add-on: what a render farm does.

Run as ``python replay_child.py FILE.blend FRAME OUT.png [--hide NAME ...]`` with the venv's
interpreter; prints one JSON line (what the process had loaded) and exits 0.

``BLENDER_USER_RESOURCES`` points at a new, empty directory before ``import bpy``, so no
extension is installed or enabled, and auto-run of Python in the file is off: the liquid
can only come from Geometry Nodes reading the cache (BLENDER_NOTES.md section 7).
"""

import json
import os
import shutil
import sys
import tempfile


def main(argv: list[str]) -> int:
    blend, frame, out = argv[0], int(argv[1]), argv[2]
    hide = argv[argv.index("--hide") + 1:] if "--hide" in argv else []
    user_dir = tempfile.mkdtemp(prefix="sph_farm_user_")
    os.environ["BLENDER_USER_RESOURCES"] = user_dir
    import bpy

    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    bpy.ops.wm.open_mainfile(filepath=blend, load_ui=False)
    scene = bpy.context.scene
    for name in hide:
        bpy.data.objects[name].hide_render = True
    scene.frame_set(frame)
    scene.render.filepath = out
    bpy.ops.render.render(write_still=True)
    handlers = bpy.app.handlers
    report = {
        "addon_modules": sorted(m for m in sys.modules if "sph_addon" in m),
        "frame_handlers": [getattr(h, "__name__", "?") for h in handlers.frame_change_post + handlers.frame_change_pre],
        "auto_exec": bpy.context.preferences.filepaths.use_scripts_auto_execute,
    }
    print(json.dumps(report))
    shutil.rmtree(user_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
