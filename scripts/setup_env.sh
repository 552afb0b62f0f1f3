#!/usr/bin/env bash
# Create (or reuse) a venv with pinned dependencies from this repository's own files.
# Usage: scripts/setup_env.sh [VENV_DIR REQUIREMENTS_FILE]   (default: .venv requirements-dev.txt)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.venv}"
req="${2:-$root/requirements-dev.txt}"
py="${PYTHON:-python3.11}"
command -v "$py" >/dev/null 2>&1 || py=python3
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
# Reinstall only when the requirement files change (the stamp holds their hash).
stamp="$venv/.requirements.sha"
want="$(cat "$root/requirements.txt" "$req" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req"
  echo "$want" > "$stamp"
fi
