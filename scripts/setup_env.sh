#!/usr/bin/env bash
# Create (or reuse) a venv with pinned dependencies from this repository's own files.
# Usage: scripts/setup_env.sh [VENV_DIR REQUIREMENTS_FILE]   (default: .venv requirements-dev.txt)
# The requirements file names its Python in a line `# python: X.Y` (3.11 when it names none):
# Blender 5.1+ runs Python 3.13. The interpreter is `pythonX.Y` on PATH, else pyenv's build of
# X.Y, else $PYTHON; a fresh machine gets 3.13 with `pyenv install 3.13` or its distribution's
# python3.13 package. A line `# pip: OPTIONS` adds options to its install (`--no-deps` for a file
# that pins every package itself and must override a dependency a wheel declares).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.venv}"
req="${2:-$root/requirements-dev.txt}"
want_py="$(sed -n 's/^# python: *\([0-9.]*\).*/\1/p' "$req" | head -n1)"
want_py="${want_py:-3.11}"
read -r -a pip_options <<< "$(sed -n 's/^# pip: *//p' "$req" | head -n1)"

find_python() {  # find_python X.Y: print an interpreter of that version, or nothing
  local ver="$1" cand
  # pyenv's shims exist for every installed version but refuse to run one that is not
  # selected, so each candidate must actually run and report the version asked for.
  for cand in "${PYTHON:-}" "python$ver" "$(pyenv root 2>/dev/null)"/versions/"$ver"*/bin/"python$ver" \
      "$HOME"/.pyenv/versions/"$ver"*/bin/"python$ver" python3; do
    [ -n "$cand" ] || continue
    if [ "$("$cand" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$ver" ]; then
      command -v "$cand"
      return
    fi
  done
}

if [ -x "$venv/bin/python" ] && \
   [ "$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" != "$want_py" ]; then
  rm -rf "$venv"  # made with another Python (a requirements file moved to a new Blender's Python)
fi
if [ ! -x "$venv/bin/python" ]; then
  py="$(find_python "$want_py")"
  if [ -z "$py" ]; then
    echo "setup_env.sh: $(basename "$req") needs Python $want_py, and none was found: install it" \
         "(pyenv install $want_py, or your distribution's python$want_py package) or set PYTHON." >&2
    exit 2
  fi
  "$py" -m venv "$venv"
fi
# Reinstall only when the requirement files change (the stamp holds their hash).
stamp="$venv/.requirements.sha"
want="$(cat "$root/requirements.txt" "$req" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --disable-pip-version-check -q ${pip_options[@]+"${pip_options[@]}"} -r "$req"
  echo "$want" > "$stamp"
fi
