"""Where the benchmark peers' Python lives, and how to start it."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GL_DISPATCH = "/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0"


def peer_python() -> str:
    """The bench venv's interpreter: $SPH_BENCH_PEER_PYTHON, else .venv-bench (scripts/setup_bench_env.sh)."""
    env = os.environ.get("SPH_BENCH_PEER_PYTHON")
    if env:
        return env
    local = REPO / ".venv-bench" / "bin" / "python"
    if local.exists():
        return str(local)
    raise SystemExit("benchmark peers are not installed: run scripts/setup_bench_env.sh "
                     "(or set SPH_BENCH_PEER_PYTHON)")


def peer_env(threads: int) -> dict:
    """Environment for a peer process: thread counts pinned, and the GL dispatch library SPlisHSPlasH's
    wheel links against preloaded (it fails to import without it on a machine with no GPU stack)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), RAYON_NUM_THREADS=str(threads))
    if os.path.exists(GL_DISPATCH):
        env["LD_PRELOAD"] = GL_DISPATCH
    return env
