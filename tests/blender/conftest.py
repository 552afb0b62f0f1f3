"""Fixtures for tests against the PyPI ``bpy`` module (one venv per Blender version).

Blender reads ``BLENDER_USER_RESOURCES`` once, when ``bpy`` is imported, so it is
set here before the import: every test session gets a fresh, isolated user
directory (preferences, extensions, installed wheels, numba cache). The
checkout is registered as a local extension repository and enabled the way
Blender enables any extension, which installs the bundled numba/llvmlite wheels
(these venvs have no numba of their own, so the wheels are what the tests use).
"""

import hashlib
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER_DIR = Path(tempfile.mkdtemp(prefix="sph_bpy_user_"))
os.environ["BLENDER_USER_RESOURCES"] = str(USER_DIR)

# isort: off
import bpy  # noqa: E402  (must follow the environment variable)
import addon_utils  # noqa: E402  (on sys.path only once bpy is imported)
# isort: on

sys.path.insert(0, str(ROOT / "scripts"))
import blender_session  # noqa: E402

REPO_MODULE = "sphdev"
# Outside the checkout (a link inside it to itself would be a cycle for whatever walks it), one per checkout.
DEV_REPO = Path(tempfile.gettempdir()) / f"sph_bpy_dev_repo_{hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]}"
ADDON_MODULE = f"bl_ext.{REPO_MODULE}.sph_addon"
BLENDER = bpy.app.version[:2]


def _enable_from_checkout() -> None:
    try:
        # A link to the checkout at a fixed place: every suite imports the extension from the same
        # paths, so suites of one Python share a NUMBA_CACHE_DIR's kernels (scripts/test.sh).
        blender_session.start(USER_DIR, REPO_MODULE, repo_dir=DEV_REPO)
    except blender_session.EnableError as exc:
        pytest.exit(str(exc), 1)


@pytest.fixture(scope="session")
def ext():
    """The enabled extension; ``ext.sub("export.snapshot")`` imports one of its Blender modules."""
    _enable_from_checkout()

    class _Ext:
        module = ADDON_MODULE
        package = f"{ADDON_MODULE}.sph_addon"

        @staticmethod
        def sub(name: str):
            return importlib.import_module(f"{ADDON_MODULE}.sph_addon.blender.{name}")

        @staticmethod
        def core(name: str):
            return importlib.import_module(f"{ADDON_MODULE}.sph_addon.core.{name}")

    yield _Ext
    addon_utils.disable(ADDON_MODULE, default_set=True, handle_error=None)


@pytest.fixture
def empty_file(ext):
    """A fresh empty main file (the extension stays enabled), saved nowhere yet."""
    bpy.ops.wm.read_homefile(use_empty=True)
    yield
    bpy.ops.wm.read_homefile(use_empty=True)


@pytest.fixture
def saved_file(empty_file, tmp_path):
    """An empty main file saved as ``tmp_path/scene.blend`` so that ``//`` paths resolve."""
    path = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def pytest_sessionfinish(
        session, exitstatus):  # pytest passes the hook's arguments by these names
    shutil.rmtree(USER_DIR, ignore_errors=True)


def python_for_subprocess() -> str:
    """The interpreter of this venv, for tests that need a fresh Blender process."""
    return sys.executable
