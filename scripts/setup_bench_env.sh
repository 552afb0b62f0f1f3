#!/usr/bin/env bash
# A separate venv for the benchmark peers (never runtime dependencies of sph_addon).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-python3.11}"
command -v "$py" >/dev/null 2>&1 || py=python3
if [ ! -x "$root/.venv-bench/bin/python" ]; then
  "$py" -m venv "$root/.venv-bench"
fi
"$root/.venv-bench/bin/python" -m pip install --disable-pip-version-check -q -r "$root/scripts/benchmarks/requirements-peers.txt"
