"""Replay cost of a Solid's deformed mesh per frame (docs/blender.md, "Solids").

A 10,114-vertex UV sphere bound as source 0 of a synthetic cache of 20 frames (each a new file);
the time of ``frame_set`` and evaluating the object is measured over the frames without the
SPH Deform modifier, with it reading each file the first time, and again. Run with a PyPI bpy:

    python scripts/measure_solid_replay.py            # Import PLY (4.5+)
    python scripts/measure_solid_replay.py handler    # the 4.2 mechanism (on any version)
"""

import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blender_session  # noqa: E402

FRAMES = 20


def main(mode: str) -> None:
    bpy, module = blender_session.start(tempfile.mkdtemp(prefix="sph_measure_"))
    if mode == "handler" and hasattr(bpy.types, "GeometryNodeImportPLY"):
        delattr(bpy.types, "GeometryNodeImportPLY")
    replay_solid = importlib.import_module(f"{module}.sph_addon.blender.replay.solid")
    cache_mod = importlib.import_module(f"{module}.sph_addon.core.cache.cache_dir")
    plyio = importlib.import_module(f"{module}.sph_addon.core.cache.plyio")
    bpy.ops.wm.read_homefile(use_empty=True)
    root = Path(tempfile.mkdtemp(prefix="sph_measure_cache_"))
    bpy.ops.wm.save_as_mainfile(filepath=str(root / "measure.blend"))
    bpy.ops.mesh.primitive_uv_sphere_add(segments=128, ring_count=80, radius=1.0)
    ob = bpy.context.object
    ob.name = "Jelly"
    n = len(ob.data.vertices)
    co = np.empty(3 * n, np.float32)
    ob.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    cache = cache_mod.CacheDir(root / "sph_cache")
    cache.root.mkdir()
    (cache.root / "scene.json").write_text(json.dumps({"sources": [{"type": "mesh", "material": "Jelly",
                                                                    "bind_mesh": True}]}))
    for f in range(1, FRAMES + 1):
        rec = np.empty(n, [("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
        p = co * (1 + 0.01 * f)
        rec["x"], rec["y"], rec["z"] = p[:, 0], p[:, 1], p[:, 2]
        plyio.write_ply(cache.deformed_path(0, f), rec)
    domain = bpy.data.objects.new("Domain", None)
    bpy.context.scene.collection.objects.link(domain)

    def run(label: str) -> None:
        times = []
        for f in range(1, FRAMES + 1):
            t0 = time.perf_counter()
            bpy.context.scene.frame_set(f)
            ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.vertices[0].co[0]
            times.append(time.perf_counter() - t0)
        ms = np.array(times[1:]) * 1000
        print(f"Blender {bpy.app.version_string}, {mode}, {label}: {n} vertices, median {np.median(ms):.2f} ms, "
              f"max {ms.max():.2f} ms per frame")

    run("no modifier")
    replay_solid.ensure_solids(domain, "//sph_cache", cache.root, 1.0)
    run("SPH Deform, each file read the first time")
    run("SPH Deform, again")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "import_ply")
