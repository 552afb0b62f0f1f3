"""Packaging: the manifest validates, the linux-x64 zip holds exactly the
extension, and it installs, enables and unregisters cleanly in a fresh Blender.

Run in each bpy venv, e.g. ``.venv-bpy-4.2/bin/python -m pytest tests/blender/test_packaging.py``.
The zip is built once per session by ``scripts/build_extension.py`` with *this* venv's
``blender_ext.py``, so every Blender version's packager is exercised. Installing
happens in a subprocess (``packaging_child.py``) with its own user directory: this
process already has the checkout enabled as a development extension (conftest.py).
"""

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import bpy
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("packaging_child.py")
PLATFORM = "linux-x64"
WHEEL_TAG = "manylinux_2_28_x86_64"  # every linux-x64 wheel we bundle carries it
PYTHON_TAGS = ("cp311", "cp313")  # Blender 4.2-5.0 and 5.1+
LICENSE_FILES = ("LICENSE", "LICENSE.txt", "COPYING")  # build_extension.py ships these if the checkout has them
CHILD_TIMEOUT = 300  # seconds; the child takes ~8 s on 2 cores
FORBIDDEN_PREFIXES = ("tests/", "scripts/", "docs/", ".venv", "out/", "dist/", "build/", "sample_blends/", ".")


def _bl_extension_cli():
    from bl_pkg import bl_extension_cli  # Blender's core add-on, importable once bpy is

    return bl_extension_cli


def _blender_ext() -> Path:
    path = Path(_bl_extension_cli().__file__).parent / "cli" / "blender_ext.py"
    assert path.is_file(), f"no blender_ext.py beside bl_pkg in Blender {bpy.app.version_string}"
    return path


def _manifest_wheels() -> list[str]:
    with (ROOT / "blender_manifest.toml").open("rb") as fh:
        return tomllib.load(fh)["wheels"]


def _bundled_versions() -> dict[str, str]:
    """{package: version} of the bundled wheels, from the manifest, so a version bump needs no test edit."""
    versions = {}
    for entry in _manifest_wheels():
        name, version = entry.rsplit("/", 1)[-1].split("-")[:2]
        versions.setdefault(name, set()).add(version)
    assert all(len(v) == 1 for v in versions.values()), f"one version per package in the manifest: {versions}"
    return {name: v.pop() for name, v in versions.items()}


@pytest.fixture(scope="session")
def linux_zip(tmp_path_factory):
    """One linux-x64 zip per session, deleted afterwards (it is ~130 MB)."""
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, str(ROOT / "scripts" / "build_extension.py"), "--platform", PLATFORM,
           "--output-dir", str(out), "--stage-dir", str(tmp_path_factory.mktemp("stage")),
           "--blender-ext", str(_blender_ext())]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"build_extension.py failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    zips = sorted(out.glob("*.zip"))
    assert len(zips) == 1 and zips[0].name.endswith("-linux_x64.zip"), f"expected one linux_x64 zip: {zips}"
    yield zips[0]
    for path in zips:
        path.unlink()


def _validate(path: Path, capsys) -> None:
    """Validate as ``blender --command extension validate`` does (including Blender's tag list)."""
    rc = _bl_extension_cli().cli_extension_handler(["validate", str(path)])
    out = capsys.readouterr()
    assert rc == 0, f"validating {path} failed:\n{out.out}\n{out.err}"


@pytest.mark.smoke
def test_manifest_validates(capsys):
    _validate(ROOT, capsys)


def test_manifest_bundles_wheels_for_both_pythons_and_all_platforms():
    wheels = _manifest_wheels()
    for python in PYTHON_TAGS:
        for tag in (WHEEL_TAG, "win_amd64", "macosx_12_0_arm64"):
            for package in ("numba", "llvmlite"):
                assert any(w.startswith(f"./wheels/{package}-") and f"-{python}-" in w and tag in w for w in wheels), \
                    f"blender_manifest.toml lists no {package} {python} {tag} wheel"
    assert not any("numpy" in w for w in wheels), "never bundle numpy: Blender ships its own"


def test_zip_validates(linux_zip, capsys):
    _validate(linux_zip, capsys)


def test_zip_holds_the_extension_and_nothing_else(linux_zip):
    with zipfile.ZipFile(linux_zip) as zf:
        names = set(zf.namelist())
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))

    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "sph_addon").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc" and not p.name.startswith(".")}
    wheels = {w.removeprefix("./") for w in _manifest_wheels() if WHEEL_TAG in w}
    assert {"__init__.py", "blender_manifest.toml"} <= names
    assert sources - names == set(), "source files missing from the zip"
    assert wheels - names == set(), "linux-x64 wheels missing from the zip"
    for package in ("numba", "llvmlite"):
        for python in PYTHON_TAGS:
            assert any(n.startswith(f"wheels/{package}-") and f"-{python}-" in n for n in names), \
                f"no {package} {python} wheel in the zip"

    forbidden = sorted(n for n in names if n.startswith(FORBIDDEN_PREFIXES) or "__pycache__" in n
                       or n.endswith(".pyc") or (n.startswith("wheels/") and n not in wheels))
    assert forbidden == [], "the zip holds files it must not"
    unexpected = sorted(names - sources - wheels - {"__init__.py", "blender_manifest.toml", *LICENSE_FILES})
    assert unexpected == [], "the zip holds files outside the extension"

    # The split build records the platform and its wheels for Blender and extensions.blender.org.
    assert manifest["platforms"] == [PLATFORM]
    assert manifest["build"]["generated"]["platforms"] == [PLATFORM]
    assert {w.removeprefix("./") for w in manifest["wheels"]} == wheels
    assert (manifest["id"], manifest["blender_version_min"]) == ("sph_addon", "4.2.0")


def _child_result(proc: subprocess.CompletedProcess) -> dict:
    marker = "SPH_PACKAGING_RESULT "
    lines = [line for line in proc.stdout.splitlines() if line.startswith(marker)]
    if not lines:
        pytest.fail(f"packaging_child.py printed no result (exit {proc.returncode}):\n"
                    f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return json.loads(lines[-1][len(marker):])


@pytest.mark.smoke
def test_zip_installs_enables_and_unregisters_cleanly(linux_zip, tmp_path):
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user_dir))  # read by Blender when bpy is imported
    try:
        proc = subprocess.run([sys.executable, str(CHILD), str(linux_zip)], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired as ex:
        # A timer left registered makes bpy 4.5 hang at exit (BLENDER_NOTES.md section 5).
        pytest.fail(f"packaging_child.py still running after {CHILD_TIMEOUT} s (a timer left registered?):\n"
                    f"{(ex.stdout or b'')[-4000:]!r}\n{(ex.stderr or b'')[-4000:]!r}")
    result = _child_result(proc)
    assert result["errors"] == [], "\n".join(result["errors"]) + f"\nstderr:\n{proc.stderr[-4000:]}"
    assert result["user_dir"] == os.path.realpath(user_dir)

    assert result["install"] == ["FINISHED"]
    assert result["enabled_after_install"], "package_install_files(enable_on_install=True) did not enable it"
    versions = _bundled_versions()
    assert result["numba_version"] == versions["numba"]
    # Found in the installed zip's manifest and unpacked privately: Blender rewrites .local under a
    # running bake whenever an extension is enabled or disabled (test_private_numba.py).
    assert result["numba_file"].startswith(result["runtime_dir"] + os.sep), \
        "numba was not imported from the private copy of the zip's wheels in the extension's user directory"
    site = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    assert result["installed"] == sorted(f"{site}/{name}-{version}.dist-info" for name, version in versions.items()), \
        "Blender should install exactly the wheels matching its Python"

    steps = result["steps"]
    assert [s["step"] for s in steps] == ["enable 1 (install)", "disable 1", "enable 2", "disable 2", "enable 3",
                                         "final disable"]
    first = steps[0]
    assert first["classes"], "enabling registered no Blender class from the add-on"
    for s in steps:
        if s["step"].startswith("enable"):
            assert s["enabled"], s["step"]
            # Re-enabling must register the same things as the first time.
            assert (s["classes"], s["added"]) == (first["classes"], first["added"]), s["step"]
        else:
            assert not s["enabled"], s["step"]
            assert s["classes"] == [], f"{s['step']}: classes still registered"
            assert [t for t in s["added"]["types"] if t.startswith("SPH_")] == [], f"{s['step']}: SPH_ types left"
            assert s["added"] == {"types": [], "ops": [], "handlers": [], "id_props": []}, \
                f"{s['step']}: left behind"
    assert proc.returncode == 0, f"child exited {proc.returncode} after reporting:\n{proc.stderr[-4000:]}"
