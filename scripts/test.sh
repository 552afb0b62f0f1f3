#!/usr/bin/env bash
# Set up and run the test suite (what CI runs): ruff, the core tests on numpy 1.26 (Python 3.11),
# on numpy 2 (Python 3.13) the sample scenes baked to the same bytes as on numpy 1.26 and the kernels
# and readers against their references (NUMPY2_TESTS), then the Blender tests through the PyPI bpy
# module, one venv per Blender and no numba in them (the extension's bundled wheels provide it):
#   the full Blender suite on SPH_BLENDER_VERSIONS (default: 5.2 LTS, the current LTS),
#   the smoke subset (pytest -m smoke: install, enable, bake a sample, replay a frame, render a
#   Cycles frame, farm command, Alembic, a file saved by an older version) on SPH_BLENDER_SMOKE
#   (default: 4.2 LTS, whose support ended 2026-07, 4.5 LTS, 5.0, 5.1, 5.3). The replay's handler
#   mechanism, 4.2's only one, runs in the full suite on 5.2 too.
# Extra arguments go to every pytest run. Each Blender's Python comes from its requirements file
# (`# python:` line; scripts/setup_env.sh finds the interpreter).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
full_versions="${SPH_BLENDER_VERSIONS-5.2}"
smoke_versions="${SPH_BLENDER_SMOKE-4.2 4.5 5.0 5.1 5.3}"
"$root/scripts/setup_env.sh"
"$root/scripts/setup_env.sh" .venv-numpy2 requirements-dev-numpy2.txt
.venv/bin/python -m ruff check .
.venv/bin/python scripts/fetch_wheels.py --platform linux-x64
for version in $full_versions $smoke_versions; do
  "$root/scripts/setup_env.sh" ".venv-bpy-$version" "requirements-blender-$version.txt"
done

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

python_version() { "$1" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)'; }
run_pytest "core (Python $(python_version .venv/bin/python))" .venv/bin/python tests/core "$@"
# The second run bakes the sample scenes with both interpreters and compares every byte (the whole
# engine, its readers and writers); the whole suite again would double the core's time in CI.
NUMPY2_TESTS=(tests/core/test_numpy_versions.py tests/core/test_naive_reference.py tests/core/test_kernels.py
              tests/core/test_mesh_io.py tests/core/test_damaged_cache.py tests/core/test_scene_format2.py)
SPH_OTHER_CORE_PYTHON="$root/.venv/bin/python" \
  run_pytest "core (Python $(python_version .venv-numpy2/bin/python))" .venv-numpy2/bin/python "${NUMPY2_TESTS[@]}" "$@"

# The Blender suites share one numba cache per Python (numba keys it by Python version and source
# file): only the first suite of each Python compiles the kernels. The extension's own default, a
# cache under its user directory, is tested with this variable unset (test_bake.py).
export NUMBA_CACHE_DIR="$root/.cache/numba-bpy"
# The Alembic files one Blender writes are read by another (the oldest and the newest tested).
all_versions=($full_versions $smoke_versions)
oldest="$(printf '%s\n' "${all_versions[@]}" | sort -V | head -n1)"
newest="$(printf '%s\n' "${all_versions[@]}" | sort -V | tail -n1)"
for version in $full_versions $smoke_versions; do
  reader="$oldest"
  [ "$version" = "$oldest" ] && reader="$newest"
  if [ "$reader" = "$version" ]; then unset SPH_OTHER_BLENDER_PYTHON  # one Blender: no other to read with
  else export SPH_OTHER_BLENDER_PYTHON="$root/.venv-bpy-$reader/bin/python"; fi
  if [[ " $full_versions " == *" $version "* ]]; then
    run_pytest "Blender $version (bpy)" ".venv-bpy-$version/bin/python" tests/blender "$@"
  else
    run_pytest "Blender $version (bpy, smoke)" ".venv-bpy-$version/bin/python" tests/blender -m smoke "$@"
  fi
done
exit "$failed"
