"""Make the upgrade fixture: a small scene baked and meshed by an older checkout, saved by Blender 4.2.

    .venv-bpy-4.2/bin/python tests/blender/make_upgrade_fixture.py --checkout OLD_CHECKOUT --out DIR

``OLD_CHECKOUT`` is a checkout of the version the fixture stands for (its ``wheels/`` fetched); its
own ``scripts/blender_session.py`` enables it. ``DIR`` receives ``upgrade.blend`` and the bake's
``sph_cache/`` (relative to the .blend): a 0.2 m cube of water in a 0.6 m Domain, 4 cm spacing,
frames 1-3. ``test_upgrade.py`` opens it with the current add-on in every Blender tested.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(args.checkout.resolve() / "scripts"))
    import blender_session

    user_dir = Path(tempfile.mkdtemp(prefix="sph_fixture_user_"))
    bpy, _ = blender_session.start(user_dir)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(out / "upgrade.blend"))
    from water_scene import water_in_tank  # beside this script; imports bpy, so after start()

    water_in_tank(0.2, 0.15, 0.6, 0.3, spacing=0.04, frame_end=3)
    assert bpy.ops.sph.bake() == {'FINISHED'}
    bpy.ops.wm.save_mainfile()
    (out / "sph_cache" / ".sph_lock").unlink(missing_ok=True)
    shutil.rmtree(user_dir, ignore_errors=True)
    print(f"made {out / 'upgrade.blend'} with Blender {bpy.app.version_string}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
