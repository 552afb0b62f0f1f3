"""First-bake overhead in a fresh Blender process, with a cold and a warm numba cache.

    .venv-bpy-4.5/bin/python scripts/benchmarks/blender_first_bake.py [--repeat 3] [--sample dam_break]

Each measurement is a new process (as an artist restarting Blender, or a farm
task): enable the extension, open the sample, bake 2 frames and mesh them. The
cold run starts from an empty user directory, so numba compiles every kernel;
the warm run reuses that directory's numba cache (``<user>/extensions/.user/
.../numba_cache``). Prints medians of the wall time of each step.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))


def child(user_dir: str, sample: str, work: str) -> dict:
    t0 = time.perf_counter()
    import blender_session

    bpy, _ = blender_session.start(user_dir)
    t_enable = time.perf_counter()
    blend = Path(work) / f"{sample}.blend"
    shutil.copy(blender_session.ROOT / "sample_blends" / blend.name, blend)
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    t1 = time.perf_counter()
    bpy.ops.sph.bake(frame_end=2)
    t2 = time.perf_counter()
    bpy.ops.sph.bake_mesh()
    t3 = time.perf_counter()
    return {"import_enable_s": t_enable - t0, "bake_2_frames_s": t2 - t1, "mesh_2_frames_s": t3 - t2,
            "total_s": t3 - t0, "blender": bpy.app.version_string}


def run_child(user_dir: Path, sample: str) -> dict:
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run([sys.executable, __file__, "--child", str(user_dir), "--sample", sample, "--work", work],
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sample", default="dam_break")
    parser.add_argument("--child")
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.sample, args.work)))
        return 0
    runs = {"cold": [], "warm": []}
    for _ in range(args.repeat):
        user = Path(tempfile.mkdtemp(prefix="sph_bench_user_"))
        try:
            runs["cold"].append(run_child(user, args.sample))
            runs["warm"].append(run_child(user, args.sample))
        finally:
            shutil.rmtree(user, ignore_errors=True)
    blender = runs["cold"][0]["blender"]
    print(f"first bake of {args.sample} (2 frames + mesh) in a fresh Blender {blender}, median of {args.repeat}")
    print(f"{'numba cache':<12} {'import+enable':>14} {'bake':>8} {'mesh':>8} {'total':>8}")
    for kind, rows in runs.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k.endswith("_s")}
        print(f"{kind:<12} {med['import_enable_s']:>13.2f}s {med['bake_2_frames_s']:>7.2f}s "
              f"{med['mesh_2_frames_s']:>7.2f}s {med['total_s']:>7.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
