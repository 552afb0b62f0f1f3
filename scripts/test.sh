#!/usr/bin/env bash
# Set up and run the test suite (what CI runs). Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup_env.sh"
cd "$root"
.venv/bin/python -m ruff check .
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure, not a pass" >&2
  exit 1
fi
exit "$rc"
