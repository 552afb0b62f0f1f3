"""Open saved .blend files in a fresh Blender and evaluate their replay on some frames, printing what it shows.

Run as ``python quiet_child.py [--addon] FILE.blend:F1,F2,... [...]`` with the venv's interpreter.
The last line printed is JSON ``{"FILE.blend": {"F": [points, surface vertices], ...}, ...}``;
everything Blender itself printed (its importers write from C, straight to the file
descriptors) comes before it, for the parent to search for error lines.

Without ``--addon`` no extension is installed or enabled (a render farm: only the Geometry
Nodes in the file run); with it the checkout is enabled as in the tests' conftest (an artist's
Blender, whose load handler brings the replay up to date with the cache).
"""

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    addon = "--addon" in argv
    jobs = [a for a in argv if a != "--addon"]
    user_dir = tempfile.mkdtemp(prefix="sph_quiet_user_")
    if addon:
        sys.path.insert(0, str(HERE.parents[1] / "scripts"))
        import blender_session

        bpy, _ = blender_session.start(user_dir)
    else:
        import os

        os.environ["BLENDER_USER_RESOURCES"] = user_dir
        import bpy
    sys.path.insert(0, str(HERE))
    from evaluated import evaluated_mesh, evaluated_points

    shown = {}
    for job in jobs:
        blend, frames = job.rsplit(":", 1)
        bpy.ops.wm.open_mainfile(filepath=blend, load_ui=False)
        particles = next(ob for ob in bpy.data.objects if ob.get("sph_replay") == "particles")
        surface = next(ob for ob in bpy.data.objects if ob.get("sph_replay") == "surface")
        shown[blend] = {}
        for frame in map(int, frames.split(",")):
            bpy.context.scene.frame_set(frame)
            shown[blend][frame] = [len(evaluated_points(particles)[0]), len(evaluated_mesh(surface)[0])]
    sys.stdout.flush()
    print(json.dumps(shown), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
