"""First-bake overhead of a fresh Python process (a farm task), with a warm numba cache.

    .venv/bin/python scripts/benchmarks/first_bake.py [--repeat 3] [--scene scripts/scenes/dam_break.json]
        [--numba-cache DIR] [--tree CHECKOUT]

Each measurement is a new process that bakes frames 1-2 of the scene (frame 1 is the initial
state, frame 2 the first simulated frame) and then bakes them again in the same process. The
process's wall time, from its start to the end of the first bake, minus the repeat (the same
work with every kernel loaded) is the overhead: interpreter start, imports, loading kernels
from numba's cache and compiling whatever is not cached. One process runs first to fill the
cache (its time is reported as ``cold_s`` when the cache folder started empty). ``--tree``
measures another checkout (e.g. a ``git worktree`` of an older commit) with this interpreter.
Prints JSON: medians, seconds, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child(scene: str, out: str) -> dict:
    t0 = time.perf_counter()
    from sph_addon.core.bake import bake

    bake(scene, out, frames=(1, 2), force=True)
    t1 = time.perf_counter()
    bake(scene, out, frames=(1, 2), force=True)
    t2 = time.perf_counter()
    return {"first_in_process_s": t1 - t0, "repeat_s": t2 - t1}


def run_child(tree: Path, scene: Path, numba_cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(numba_cache)}
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, __file__, "--child", str(scene), "--out", out], cwd=tree, env=env,
                           capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
    res = json.loads(r.stdout.strip().splitlines()[-1])
    # The process ends right after the repeat: its start -> end of the first bake is the wall
    # time without the repeat (and without the interpreter's exit, a few ms).
    res["process_to_first_frame_s"] = wall - res["repeat_s"]
    res["overhead_s"] = res["process_to_first_frame_s"] - res["repeat_s"]
    return res


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scene", default=str(ROOT / "scripts" / "scenes" / "dam_break.json"))
    parser.add_argument("--numba-cache", default=str(Path(tempfile.gettempdir()) / "sph_first_bake_numba"))
    parser.add_argument("--tree", default=str(ROOT), help="checkout whose sph_addon is measured")
    parser.add_argument("--child")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, os.getcwd())
        print(json.dumps(child(args.child, args.out)))
        return 0
    tree, scene, cache = Path(args.tree).resolve(), Path(args.scene).resolve(), Path(args.numba_cache)
    cold = not cache.exists() or not any(cache.rglob("*.nbi"))
    fill = run_child(tree, scene, cache)
    runs = [run_child(tree, scene, cache) for _ in range(args.repeat)]
    result = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    if cold:
        result["cold_s"] = fill["process_to_first_frame_s"]
    result.update(tree=str(tree), scene=scene.name, repeat=args.repeat, load_average=os.getloadavg(),
                  numba_num_threads=os.environ.get("NUMBA_NUM_THREADS", "default"))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
