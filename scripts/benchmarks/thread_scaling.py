"""Thread scaling: the dam break, its stages and the million-particle dam break at several thread counts.

Each figure comes from its own process (numba fixes its thread pool when it starts), all in one run:

- ``launch``: microseconds per call of a small parallel kernel (``launch_overhead.py``), the fixed
  cost every parallel stage pays once per call;
- ``profile``: each stage's milliseconds per substep of the dam break (``profile_substep.py``);
- ``dam_break``: the bench's dam break (24,000 particles, ``--seconds`` simulated) with its front
  error, and with ``--vs splishsplash`` SPlisHSPlasH's DFSPH at the same thread count;
- ``large``: the million-particle dam break (``--large-frames`` frames), seconds per frame and peak
  bytes per particle.

``--variants`` names threading set-ups to compare (``omp``: numba's OpenMP layer as it starts;
``omp_passive``: OpenMP threads that sleep at once after a parallel region; ``workqueue``:
numba's own pool). Speedups are against the smallest thread count measured.

Usage::

    python scripts/benchmarks/thread_scaling.py [--thread-counts 1,2,4,8,16] [--vs splishsplash]
        [--peer-threads 2,4,8,16] [--parts launch,profile,dam_break,large] [--large-threads 2,16]
        [--variants default] [--out results.json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

VARIANTS = {
    "omp": {"NUMBA_THREADING_LAYER": "omp"},
    "omp_passive": {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "passive"},
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
    "default": {},
}


def _child(part: str, args: list[str]) -> dict:
    if part == "launch":
        import launch_overhead

        return launch_overhead.run()
    if part == "profile":
        import profile_substep

        return profile_substep.profile(float(args[0]), len(args) > 1)
    import simulation

    if part == "dam_break":
        return simulation.run_dam_break(float(args[0]), args[1] or None, int(args[2]))
    if part == "large":
        return simulation.run_large(int(args[0]), int(args[1]))
    raise SystemExit(f"unknown part {part!r}")


def _run(part: str, threads: int, variant: str, args: list[str], timeout: float) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1", **VARIANTS[variant])
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", part, *args], env=env, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": (proc.stdout[-800:] + proc.stderr[-1500:])}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_s"] = round(time.perf_counter() - t0, 2)
    return out


def run(thread_counts: list[int], parts: list[str], variants: list[str], seconds: float, vs: str | None,
        profile_seconds: float, large_particles: int, large_frames: int, timeout: float = 600.0,
        log=None, peer_threads: list[int] | None = None) -> dict:
    """Every (part, variant, thread count) in its own process; ``log`` gets each result as it comes."""
    import platform

    result = {"scene": "threads", "cpus": os.cpu_count(), "machine": platform.processor() or platform.machine(),
              "python": platform.python_version(), "thread_counts": thread_counts, "runs": []}
    try:
        import numba
        import numpy

        result.update(numba=numba.__version__, numpy=numpy.__version__)
    except ImportError:
        pass
    jobs = {"launch": [], "profile": [str(profile_seconds)], "dam_break": [str(seconds), vs or "", "0"],
            "large": [str(large_particles), str(large_frames)]}
    for part in parts:
        for variant in variants:
            for t in thread_counts:
                args = list(jobs[part])
                if part == "dam_break":
                    args[2] = str(t)
                    if peer_threads is not None and t not in peer_threads:
                        args[1] = ""
                out = _run(part, t, variant, args, timeout)
                out.update(part=part, variant=variant, threads=t)
                out.pop("fronts_TZ", None)
                out.pop("peer_fronts_TZ", None)
                result["runs"].append(out)
                if log is not None:
                    log(out)
    return result


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--thread-counts", default="1,2,4,8,16")
    ap.add_argument("--parts", default="launch,profile,dam_break,large")
    ap.add_argument("--variants", default="default")
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--vs", default=None)
    ap.add_argument("--peer-threads", default=None, help="thread counts the peer runs at (default: all)")
    ap.add_argument("--profile-seconds", type=float, default=0.3)
    ap.add_argument("--large-particles", type=int, default=1_000_000)
    ap.add_argument("--large-frames", type=int, default=3)
    ap.add_argument("--large-threads", default=None, help="thread counts of the large part (default: all)")
    ap.add_argument("--out", default=None, help="also write the JSON here, updated after every run")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], args.child[1:])))
        return 0
    counts = [int(t) for t in args.thread_counts.split(",")]
    parts = args.parts.split(",")
    partial: list[dict] = []

    def log(out: dict) -> None:
        partial.append(out)
        print(json.dumps(out), flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps(partial, indent=1))

    result = {"runs": []}
    for part in parts:
        ts = counts
        if part == "large" and args.large_threads:
            ts = [int(t) for t in args.large_threads.split(",")]
        peer = [int(t) for t in args.peer_threads.split(",")] if args.peer_threads else None
        r = run(ts, [part], args.variants.split(","), args.seconds, args.vs, args.profile_seconds,
                args.large_particles, args.large_frames, log=log, peer_threads=peer)
        result.update({k: v for k, v in r.items() if k != "runs"})
        result["runs"] += r["runs"]
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(HERE), str(HERE.parents[1])]
    sys.exit(main())
