"""The private numba/llvmlite copy (``blender/private_wheels.py``) with tiny fake wheels made by zipfile.

What must hold: processes racing to publish all succeed and one directory results; a published
directory is never changed; a temp dir of a killed process is removed but never one being
extracted; another version is removed only when no process holds it. The Blender side (numba
surviving a disabled extension) is ``tests/blender/test_private_numba.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

from sph_addon.blender import private_wheels

LINUX = "manylinux_2_27_x86_64.manylinux_2_28_x86_64"
needs_locks = pytest.mark.skipif(not private_wheels.LOCKS, reason="no shared file locks on Windows")


@pytest.fixture(autouse=True)
def _own_holds(monkeypatch):
    """Each test starts holding nothing, and gives back what it took (the module keeps locks until exit)."""
    held: dict = {}
    monkeypatch.setattr(private_wheels, "_HELD", held)
    yield
    for fd in held.values():
        if fd is not None:
            os.close(fd)


def _wheel(folder: Path, name: str, version: str, python: str = "cp311", plat: str = LINUX,
           modules: int = 3) -> Path:
    path = folder / f"{name}-{version}-{python}-{python}-{plat}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}/__init__.py", f"__version__ = {version!r}\n")
        for i in range(modules):
            zf.writestr(f"{name}/sub/m{i}.py", f"X = {i}\n" + "# padding\n" * 50)
        zf.writestr(f"{name}-{version}.dist-info/METADATA", f"Name: {name}\nVersion: {version}\n")
    return path


def _pair(folder: Path, numba: str = "9.1", llvmlite: str = "8.1", modules: int = 3) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [_wheel(folder, "numba", numba, modules=modules), _wheel(folder, "llvmlite", llvmlite, modules=modules)]


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_select_wheels_takes_this_python_and_platform_from_the_manifest(tmp_path):
    ext = tmp_path / "ext"
    wheels = ext / "wheels"
    wheels.mkdir(parents=True)
    made = [_wheel(wheels, n, v, py, plat)
            for n, v in (("numba", "9.1"), ("llvmlite", "8.1"), ("numba", "9.0"))
            for py in ("cp311", "cp313") for plat in (LINUX, "win_amd64", "macosx_12_0_arm64")]
    listed = [f"./wheels/{p.name}" for p in made] + ["./wheels/numba-9.9-cp311-cp311-win_arm64.whl"]  # not shipped
    (ext / "blender_manifest.toml").write_text("wheels = [\n" + "".join(f'  "{w}",\n' for w in listed) + "]\n")

    def names(python, system, machine):
        found = private_wheels.select_wheels(ext, python, system, machine)
        return found and [p.name for p in found]

    assert names("cp311", "linux", "x86_64") == [f"numba-9.1-cp311-cp311-{LINUX}.whl",
                                                 f"llvmlite-8.1-cp311-cp311-{LINUX}.whl"]
    assert names("cp313", "win32", "AMD64") == ["numba-9.1-cp313-cp313-win_amd64.whl",
                                                "llvmlite-8.1-cp313-cp313-win_amd64.whl"]
    assert names("cp311", "darwin", "arm64")[0] == "numba-9.1-cp311-cp311-macosx_12_0_arm64.whl"
    assert names("cp312", "linux", "x86_64") is None, "no wheel for this Python: plain import"
    assert names("cp311", "darwin", "x86_64") is None
    assert names("cp311", "win32", "ARM64") is None, "listed but not shipped"
    (wheels / f"llvmlite-8.1-cp311-cp311-{LINUX}.whl").unlink()
    assert names("cp311", "linux", "x86_64") is None, "numba without its llvmlite is no use"
    assert private_wheels.select_wheels(tmp_path / "no_manifest") is None


def test_publish_unpacks_once_compiled_and_reuses_the_copy(tmp_path):
    wheels, root = _pair(tmp_path / "w"), tmp_path / "runtime"
    path = private_wheels.publish(wheels, root)
    assert path == root / "numba-9.1+llvmlite-8.1-cp311"
    assert (path / "numba" / "__init__.py").is_file() and (path / "llvmlite" / "sub" / "m2.py").is_file()
    tag = sys.implementation.cache_tag
    assert (path / "numba" / "__pycache__" / f"__init__.{tag}.pyc").is_file(), "compiled before publishing"
    before, inode = _files(path), path.stat().st_ino
    private_wheels._HELD.clear()  # as a second process would: it finds the copy and takes it as is
    assert private_wheels.publish(wheels, root) == path
    assert (_files(path), path.stat().st_ino) == (before, inode)
    assert sorted(os.listdir(root)) == [path.name, f"{path.name}.lock"] if private_wheels.LOCKS else [path.name]


def test_losing_a_publishing_race_discards_the_own_copy(tmp_path):
    """Another process renamed its copy into place while this one was extracting: theirs stays."""
    wheels, root = _pair(tmp_path / "w"), tmp_path / "runtime"
    theirs = root / "numba-9.1+llvmlite-8.1-cp311"
    (theirs / "numba").mkdir(parents=True)
    (theirs / "numba" / "__init__.py").write_text("# theirs\n")
    assert private_wheels._extract(wheels, root, theirs.name) == theirs
    assert os.listdir(root) == [theirs.name], "the loser's temp dir is removed"
    assert os.listdir(theirs / "numba") == ["__init__.py"] and "theirs" in (theirs / "numba/__init__.py").read_text()


_PUBLISH = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from sph_addon.blender import private_wheels
    time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # start together
    path = private_wheels.publish([Path(p) for p in sys.argv[3:]], sys.argv[1])
    print(json.dumps({"path": str(path), "init": (path / "numba" / "__init__.py").read_text()}))
""")


def test_two_processes_publishing_at_once_both_succeed_with_one_copy(tmp_path):
    """Both usually unpack and one loses the rename (4 of 4 runs logged it); the deterministic
    losing path is the test above."""
    wheels, root = _pair(tmp_path / "w", modules=400), tmp_path / "runtime"  # ~0.3 s each to unpack
    start = time.time() + 1.0  # both interpreters are up by then
    procs = [subprocess.Popen([sys.executable, "-c", _PUBLISH, str(root), str(start), *map(str, wheels)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert results[0] == results[1] and results[0]["init"] == "__version__ = '9.1'\n"
    name = Path(results[0]["path"]).name
    assert sorted(os.listdir(root)) == sorted([name, f"{name}.lock"][:1 + private_wheels.LOCKS]), \
        "one published copy, no temp dir left"


@needs_locks
def test_a_dead_temp_dir_is_removed_but_never_one_being_extracted(tmp_path):
    wheels, root = _pair(tmp_path / "w"), tmp_path / "runtime"
    name = "numba-9.1+llvmlite-8.1-cp311"
    dead = root / f".tmp-{name}-4242-0badf00d"  # a process killed while unpacking
    (dead / "numba").mkdir(parents=True)
    (dead / "numba" / "__init__.py").write_text("# half")
    # Another process unpacking right now holds the version's lock shared (a second descriptor
    # is another holder to flock, even in this process).
    other = private_wheels._lock(root / f"{name}.lock", exclusive=False, wait=False)
    path = private_wheels.publish(wheels, root)
    assert dead.is_dir(), "with another holder, a temp dir may be live: kept"
    os.close(other)

    os.close(private_wheels._HELD.pop(path))  # a new process, alone this time
    assert private_wheels.publish(wheels, root) == path
    assert not dead.exists(), "nobody holds the version: its temp dirs are dead"
    assert (path / "numba" / "sub" / "m0.py").is_file()


@needs_locks
def test_another_version_is_removed_only_when_no_process_holds_it(tmp_path):
    root = tmp_path / "runtime"
    old = private_wheels.publish(_pair(tmp_path / "old", "9.0", "8.0"), root)
    new = private_wheels.publish(_pair(tmp_path / "new", "9.1", "8.1"), root)
    (root / "notes.txt").write_text("not ours")
    (root / "numba-9.0+llvmlite-8.0-cp311-backup").mkdir()  # not a name this module makes
    (root / f".trash-{old.name}-4242-0badf00d" / "numba").mkdir(parents=True)  # a cleaner killed mid-way
    unknown = {"notes.txt", "numba-9.0+llvmlite-8.0-cp311-backup"}

    assert private_wheels.remove_unused(root, new.name) == [], "this process still uses the old copy"
    assert old.is_dir()
    os.close(private_wheels._HELD.pop(old))  # the process that used it has exited
    assert private_wheels.remove_unused(root, new.name) == [old.name]
    assert sorted(os.listdir(root)) == sorted({new.name, f"{new.name}.lock", *unknown}), \
        "the old copy, its lock and the stray trash are gone; unknown entries stay"
    assert private_wheels.remove_unused(root, new.name) == []


def test_an_unwritable_folder_fails_with_its_name(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(OSError) as err:
        private_wheels.publish(_pair(tmp_path / "w"), blocker / "runtime")
    assert str(blocker) in str(err.value)
    assert private_wheels._HELD == {}


def test_an_unsupported_platform_or_python_gets_one_sentence_naming_what_is_covered(tmp_path):
    ext = tmp_path / "ext"
    (ext / "wheels").mkdir(parents=True)
    made = [_wheel(ext / "wheels", n, v, py) for n, v in (("numba", "9.1"), ("llvmlite", "8.1"))
            for py in ("cp311", "cp313")]
    listed = "".join(f'  "./wheels/{p.name}",\n' for p in made)
    (ext / "blender_manifest.toml").write_text(f'platforms = ["linux-x64", "macos-arm64"]\nwheels = [\n{listed}]\n')

    assert private_wheels.unsupported_reason(ext, "cp313", "linux", "x86_64") is None
    intel_mac = private_wheels.unsupported_reason(ext, "cp313", "darwin", "x86_64")
    assert "not for macos-x64 with Python 3.13" in intel_mac
    assert "bundled for linux-x64, macos-arm64 with Python 3.11 and 3.13" in intel_mac
    assert intel_mac.count(". ") == 0 and intel_mac.endswith(".") and "\n" not in intel_mac, "one sentence"
    assert "not for linux-x64 with Python 3.12" in private_wheels.unsupported_reason(ext, "cp312", "linux", "x86_64")
    assert "windows-arm64" in private_wheels.unsupported_reason(ext, "cp311", "win32", "ARM64")
