#!/usr/bin/env bash
# A separate venv for the benchmark peers (never runtime dependencies of sph_addon).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec "$root/scripts/setup_env.sh" "$root/.venv-bench" "$root/scripts/benchmarks/requirements-peers.txt"
