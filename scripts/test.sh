#!/usr/bin/env bash
# Set up and run the test suite (what CI runs): ruff, the core tests (plain Python), then the
# Blender tests once per supported Blender through the PyPI bpy module (4.2, 4.5, 5.0; one venv
# each, no numba in them: the extension's bundled wheels provide it).
# Extra arguments go to every pytest run; SPH_BLENDER_VERSIONS="4.5" limits the Blender runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
"$root/scripts/setup_env.sh"
.venv/bin/python -m ruff check .
.venv/bin/python scripts/fetch_wheels.py --platform linux-x64

failed=0
run_pytest() {  # run_pytest LABEL PYTHON ARGS...: pytest's exit 5 (no tests) counts as a failure
  local label="$1" py="$2"
  shift 2
  echo "== $label"
  set +e
  "$py" -m pytest "$@"
  local rc=$?
  set -e
  if [ "$rc" -eq 5 ]; then
    echo "$label: pytest collected no tests: that is a failure, not a pass" >&2
    rc=1
  fi
  if [ "$rc" -ne 0 ]; then failed=1; fi
}

run_pytest "core (Python $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])'))" \
  .venv/bin/python tests/core "$@"
for version in ${SPH_BLENDER_VERSIONS:-4.2 4.5 5.0}; do
  "$root/scripts/setup_env.sh" ".venv-bpy-$version" "requirements-blender-$version.txt"
  run_pytest "Blender $version (bpy)" ".venv-bpy-$version/bin/python" tests/blender "$@"
done
exit "$failed"
