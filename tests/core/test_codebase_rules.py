"""Rules the codebase keeps (DESIGN.md section 2, STYLE.md conventions 4 and 8)."""

import re
import subprocess
import sys

from conftest import REPO

CORE = REPO / "sph_addon" / "core"
PACKAGE_FILES = sorted((REPO / "sph_addon").rglob("*.py"))


def _core_modules() -> list[str]:
    mods = []
    for p in sorted(CORE.rglob("*.py")):
        rel = p.relative_to(REPO).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods.append(".".join(parts))
    return mods


def test_core_never_imports_bpy():
    """Import every core module in a fresh interpreter: bpy, bmesh and mathutils stay unloaded."""
    code = ("import importlib, sys\n"
            f"for m in {_core_modules()!r}:\n"
            "    importlib.import_module(m)\n"
            "bad = [m for m in ('bpy', 'bmesh', 'mathutils') if m in sys.modules]\n"
            "print(len(sys.modules)); assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_light_modules_do_not_import_numba():
    """Scene, parameters, registries, cache and surface settings load without numba (Blender's register())."""
    code = ("import sys\n"
            "import sph_addon.core.scene, sph_addon.core.cache, sph_addon.core.solvers, sph_addon.core.colliders\n"
            "import sph_addon.core.surface.settings, sph_addon.core.schema_doc\n"
            "assert 'numba' not in sys.modules, 'numba imported eagerly'\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_package_imports_itself_relatively():
    """Blender loads the package as bl_ext.<repo>.sph_addon.sph_addon: absolute self-imports would break."""
    offenders = []
    for p in PACKAGE_FILES:
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.match(r"\s*(from|import) sph_addon\b", line):
                offenders.append(f"{p.relative_to(REPO)}:{n}")
    assert not offenders, offenders


def test_numba_options_come_from_config():
    """No hard-coded fastmath/parallel/cache/nogil in decorators (STYLE.md convention 4)."""
    offenders = []
    for p in PACKAGE_FILES:
        if p.name == "config.py":
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"@(numba\.)?(njit|jit)\(.*(fastmath|parallel|cache|nogil)\s*=", line) or \
                    re.match(r"\s*@(numba\.)?(njit|jit)\s*$", line):
                offenders.append(f"{p.relative_to(REPO)}:{n}: {line.strip()}")
    assert not offenders, offenders


def test_no_pickle_loading():
    offenders = []
    for p in PACKAGE_FILES:
        text = p.read_text()
        if re.search(r"allow_pickle\s*=\s*True|pickle\.loads?\(", text):
            offenders.append(str(p.relative_to(REPO)))
    assert not offenders, offenders
