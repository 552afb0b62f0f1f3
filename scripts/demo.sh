#!/usr/bin/env bash
# The main job: set up Blender (PyPI bpy) with the extension, bake a sample .blend headless,
# mesh it and render a frame with Cycles to a PNG.
# Usage: scripts/demo.sh [SAMPLE] [OUT_DIR]   (default dam_break, out/demo; earlier pictures in
# OUT_DIR are kept, the one a run replaces renamed with its time)
# SPH_BLENDER picks the Blender (default 5.2, the current LTS; 4.2, 4.5, 5.0, 5.1, 5.3 also work).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${SPH_BLENDER:-5.2}"
venv="$root/.venv-bpy-$version"
"$root/scripts/setup_env.sh" "$venv" "$root/requirements-blender-$version.txt"
"$venv/bin/python" "$root/scripts/fetch_wheels.py" --platform linux-x64
mkdir -p "${2:-$root/out/demo}"
"$venv/bin/python" "$root/scripts/demo_blender.py" --sample "${1:-dam_break}" --out "${2:-$root/out/demo}"
