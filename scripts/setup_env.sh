#!/usr/bin/env bash
# Create (or reuse) .venv with the pinned dependencies from this repository's own files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-python3.11}"
command -v "$py" >/dev/null 2>&1 || py=python3
if [ ! -x "$root/.venv/bin/python" ]; then
  "$py" -m venv "$root/.venv"
fi
stamp="$root/.venv/.requirements.sha"
want="$(cat "$root/requirements.txt" "$root/requirements-dev.txt" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$root/.venv/bin/python" -m pip install --disable-pip-version-check -q -r "$root/requirements-dev.txt"
  echo "$want" > "$stamp"
fi
