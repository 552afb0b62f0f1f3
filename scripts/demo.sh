#!/usr/bin/env bash
# The main job: set up, bake the sample dam break headless, mesh its surface, render a preview PNG.
# Usage: scripts/demo.sh [OUT_DIR]   (default out/dam_break; its previous contents are replaced)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup_env.sh"
py="$root/.venv/bin/python"
out="${1:-$root/out/dam_break}"
cd "$root"
"$py" -m sph_addon validate scripts/scenes/dam_break.json
# --force: this script owns its output folder; re-running it replaces the previous demo bake.
"$py" -m sph_addon bake scripts/scenes/dam_break.json --out "$out" --force
"$py" -m sph_addon mesh "$out" --jobs 2
"$py" -m sph_addon info "$out" | head -5
"$py" -m sph_addon preview "$out" --out "$out/preview.png"
