"""Read an object's world transform at some frames of a saved .blend in a fresh Blender with no add-on.

Run as ``python pose_child.py FILE.blend OBJECT FRAME [FRAME ...]`` with the venv's interpreter; prints
one JSON line: the add-on modules loaded (none) and the object's 4x4 world matrix at each frame. What a
render farm without the extension sees of a Dynamic collider's baked motion.
"""

import json
import os
import shutil
import sys
import tempfile


def main(argv: list[str]) -> int:
    blend, name, frames = argv[0], argv[1], [int(f) for f in argv[2:]]
    user_dir = tempfile.mkdtemp(prefix="sph_farm_user_")
    os.environ["BLENDER_USER_RESOURCES"] = user_dir
    import bpy

    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    bpy.ops.wm.open_mainfile(filepath=blend, load_ui=False)
    ob = bpy.data.objects[name]
    matrices = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        matrices[frame] = [list(row) for row in ob.matrix_world]
    print(json.dumps({"addon_modules": sorted(m for m in sys.modules if "sph_addon" in m), "matrices": matrices}))
    shutil.rmtree(user_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
