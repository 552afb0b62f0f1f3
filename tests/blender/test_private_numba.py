"""numba runs from a private copy that enabling or disabling extensions never touches.

Blender keeps every extension's wheels in one shared site-packages and deletes or re-extracts them
whenever an extension is enabled or disabled; a bake that had imported numba from there failed on
its next lazy import (``cannot import name 'mergesort'``). ``runtime.prepare_numba`` now loads
numba from a private, versioned copy under the extension's user directory
(``blender/private_wheels.py``; its races are tested in ``tests/core/test_private_wheels.py``).

Each check runs in a fresh Blender (``private_numba_child.py``): this process already has numba.
Run in each bpy venv, e.g. ``.venv-bpy-4.2/bin/python -m pytest tests/blender/test_private_numba.py``.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import python_for_subprocess

CHILD = Path(__file__).with_name("private_numba_child.py")
MARKER = "SPH_PRIVATE_NUMBA_RESULT "
CHILD_TIMEOUT = 300  # seconds; a child takes ~12 s on 2 cores (the first unpacks 190 MB)


def _run(user_dir: Path) -> dict:
    # This process's own bakes set NUMBA_CACHE_DIR; a fresh Blender starts without it.
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    proc = subprocess.run([python_for_subprocess(), str(CHILD), str(user_dir)], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARKER)]
    if not lines:
        pytest.fail(f"{CHILD.name} printed no result (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n"
                    f"{proc.stderr[-3000:]}")
    result = json.loads(lines[-1][len(MARKER):])
    assert result["errors"] == [], "\n".join(result["errors"]) + f"\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, proc.stderr[-3000:]
    return result


def _check_survives_disable(r: dict) -> None:
    assert r["under_ext_user_dir"], f"numba must come from the extension's user directory: {r}"
    # The hazard is real in this test: Blender deleted the shared numba when the extension was disabled.
    assert r["shared_before"] and not r["shared_after_disable"], r
    assert not r["lazy_loaded_before"], "the lazily imported submodule must not be loaded before the disable"
    assert r["sorted"] == [1, 2, 0]
    assert r["shared_after_enable"] and r["numba_file_after_enable"] == r["numba_file"]
    assert r["copy_changed"] == [], "the published copy changed while in use (bytecode must be compiled before)"


def test_numba_survives_disabling_the_extension_and_its_cache_hits_in_a_fresh_process(tmp_path):
    user_dir = tmp_path / "user"
    first = _run(user_dir)
    _check_survives_disable(first)
    name = Path(first["copy"]).name
    assert first["runtime_entries"] == [name, f"{name}.lock"], "one published copy and its lock, no temp dirs"
    assert first["cache_misses"] == 1

    second = _run(user_dir)  # another process: reuses the published copy, and numba's disk cache
    _check_survives_disable(second)
    assert (second["copy"], second["copy_inode"]) == (first["copy"], first["copy_inode"]), "unpacked again"
    assert (second["copy_files"], second["copy_digest"]) == (first["copy_files"], first["copy_digest"])
    assert (second["cache_hits"], second["cache_misses"]) == (1, 0), "the kernel cache must hit after the switch"
