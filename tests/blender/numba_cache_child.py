"""Prepare a bake of a sample with a mesh collider in a fresh Blender; print where numba caches.

Run as ``python numba_cache_child.py SAMPLE.blend`` with the venv's interpreter. The last line is
JSON ``{"user_dir": ..., "numba_loaded": bool, "cache_dir": ...}``: the add-on must configure numba
(its cache under the extension's user directory) before any core module imports it.
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    user_dir = tempfile.mkdtemp(prefix="sph_numba_user_")
    sys.path.insert(0, str(HERE.parents[1] / "scripts"))
    import blender_session

    bpy, module = blender_session.start(user_dir)
    import importlib

    baking = importlib.import_module(f"{module}.sph_addon.blender.baking")
    blend = Path(user_dir) / Path(argv[0]).name
    shutil.copy(argv[0], blend)
    bpy.ops.wm.open_mainfile(filepath=str(blend), load_ui=False)
    domain = next(ob for ob in bpy.data.objects if ob.sph.role == 'DOMAIN')
    domain.sph.domain.cache_directory = str(Path(user_dir) / "cache")
    baking.prepare_bake(bpy.context.scene, domain, 1, 1)
    loaded = "numba" in sys.modules
    cache_dir = sys.modules["numba"].config.CACHE_DIR if loaded else ""
    print(json.dumps({"user_dir": user_dir, "numba_loaded": loaded, "cache_dir": cache_dir}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
