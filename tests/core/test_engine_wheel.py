"""The engine installs as a package without Blender (a farm node's ``pip install .``): the wheel holds
``sph_addon`` and nothing else of the repository (its tests, scripts and wheels are not packages of it), and
``python -m sph_addon`` and the ``sph-addon`` script run from it outside the repository. The build uses the
backend ``[build-system]`` names from the dev environment's pin (a user's ``pip install .`` fetches it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

from conftest import REPO


def test_pip_builds_the_engine_alone_and_its_cli_runs_from_the_wheel(tmp_path):
    wheels, site, source = tmp_path / "wheels", tmp_path / "site", tmp_path / "source"
    # What a clean clone holds of the package (the build writes its egg-info and build/ beside it).
    shutil.copytree(REPO / "sph_addon", source / "sph_addon", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # The backend from this environment's pins (requirements-dev.txt), as CI installs them: no download.
    subprocess.run([*pip, "wheel", str(source), "--no-deps", "--no-build-isolation", "-w", str(wheels)], check=True,
                   cwd=tmp_path, timeout=300)
    (wheel,) = wheels.glob("sph_addon-*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"sph_addon", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(site)}  # numpy and numba from this interpreter, the engine from the wheel
    scene = REPO / "scripts" / "scenes" / "dam_break.json"
    for command in ([sys.executable, "-s", "-m", "sph_addon"], [str(site / "bin" / "sph-addon")]):
        run = subprocess.run([*command, "validate", str(scene)], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0 and "valid; about" in run.stdout, (run.stdout, run.stderr)
    probe = subprocess.run([sys.executable, "-s", "-c", "import sph_addon; print(sph_addon.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip().startswith(str(site)), probe.stdout
