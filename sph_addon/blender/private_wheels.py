"""Private, immutable copies of the extension's bundled wheels (numba, llvmlite).

Blender installs every extension's wheels into one shared site-packages
(``<user>/extensions/.local/lib/pythonX.Y/site-packages``) and re-syncs it
whenever any extension is enabled or disabled (``wheel_manager.apply_action``,
called from ``addon_utils._extension_sync_wheels``): wheels no enabled
extension needs are deleted and the rest re-extracted in place, and the highest
version of a name among all extensions wins. A process that imported numba from
there and later lazily imports one of its submodules then finds the files gone
or half-written (``cannot import name 'mergesort'``).

So a bake loads numba from a copy of its own: the bundled wheels are extracted
into a temporary directory beside the target and published with one
``os.rename`` as ``ROOT/numba-<v>+llvmlite-<v>-cpXY``. A published directory is
complete by construction and never modified again (its bytecode is compiled
before publishing). Whoever loses a publishing race throws its copy away.

Old versions are removed only when no process uses them: each user holds a
shared ``flock`` on ``ROOT/<name>.lock`` until it exits (the operating system
drops it however the process ends); a cleaner takes the lock exclusively
without waiting and skips the version if it cannot. The same test tells a
half-extracted temporary directory of a killed process from one being
extracted right now. Windows has no shared locks in ``msvcrt``: there nothing
is ever removed (a version costs ~190 MB of disk).

Nothing here imports bpy or numba: ``sph_addon.blender.runtime`` calls it with
paths before ``import numba``.
"""

from __future__ import annotations

import compileall
import logging
import os
import platform
import re
import secrets
import shutil
import sys
import tomllib
import zipfile
from pathlib import Path

from ..core.cache.lock import same_file

log = logging.getLogger(__name__)

PACKAGES = ("numba", "llvmlite")
_TEMP, _TRASH, _LOCK = ".tmp-", ".trash-", ".lock"
# numba-0.68.1+llvmlite-0.50.0-cp311: the only directory names this module ever creates or removes.
_NAME = re.compile(r"[A-Za-z0-9_]+-[A-Za-z0-9_.]+(\+[A-Za-z0-9_]+-[A-Za-z0-9_.]+)*-cp\d+")
LOCKS = os.name != "nt"

# Lock descriptors of the versions this process has put on sys.path, kept open until it exits:
# the process-wide counterpart of a module in sys.modules (closing one would let a cleaner delete
# the files numba still imports lazily). None on Windows, which has no shared locks.
_HELD: dict[Path, int | None] = {}

if LOCKS:
    import fcntl


def python_tag() -> str:
    return f"cp{sys.version_info.major}{sys.version_info.minor}"


def platform_matches(tag: str, system: str = sys.platform, machine: str = "") -> bool:
    """Whether a wheel platform tag (``manylinux_2_28_x86_64``, ``win_amd64``, ...) runs here."""
    machine = (machine or platform.machine()).lower()
    if system.startswith("linux"):
        arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
        return tag.startswith(("manylinux", "linux")) and tag.endswith("_" + arch)
    if system == "win32":
        return tag == {"amd64": "win_amd64", "x86_64": "win_amd64", "arm64": "win_arm64"}.get(machine)
    if system == "darwin":
        return tag.startswith("macosx_") and tag.endswith(("_" + machine, "_universal2"))
    return False


def _version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))


def select_wheels(extension_dir: str | os.PathLike, python: str = "", system: str = sys.platform,
                  machine: str = "") -> list[Path] | None:
    """The bundled wheels of :data:`PACKAGES` for this interpreter and platform, or None if any is missing.

    Read from ``blender_manifest.toml``'s ``wheels`` list (an installed zip lists only its own
    platform's; a checkout lists all and may hold none). The highest version of a package wins.
    """
    extension_dir = Path(extension_dir)
    try:
        with (extension_dir / "blender_manifest.toml").open("rb") as fh:
            listed = tomllib.load(fh).get("wheels", [])
    except (OSError, tomllib.TOMLDecodeError):
        return None
    python = python or python_tag()
    best: dict[str, tuple[tuple, Path]] = {}
    for entry in listed:
        path = extension_dir / entry
        parts = path.name.removesuffix(".whl").split("-")
        if len(parts) != 5 or parts[0] not in PACKAGES or not path.is_file():
            continue  # a build tag (6 parts) is never used by numba or llvmlite
        name, version, py, _abi, platforms = parts
        if python not in py.split(".") or not any(platform_matches(t, system, machine) for t in platforms.split(".")):
            continue
        if name not in best or _version_key(version) > best[name][0]:
            best[name] = (_version_key(version), path)
    if set(best) != set(PACKAGES):
        return None
    return [best[name][1] for name in PACKAGES]


# Blender's platform names (manifest ``platforms``) for the (sys.platform, machine) pairs it runs on.
# Machines are spelled one way per architecture first (Windows says AMD64, Linux aarch64).
_BLENDER_PLATFORMS = {("linux", "x86_64"): "linux-x64", ("linux", "arm64"): "linux-arm64",
                      ("win32", "x86_64"): "windows-x64", ("win32", "arm64"): "windows-arm64",
                      ("darwin", "arm64"): "macos-arm64", ("darwin", "x86_64"): "macos-x64"}
_ARCH = {"amd64": "x86_64", "aarch64": "arm64"}


def unsupported_reason(extension_dir: str | os.PathLike, python: str = "", system: str = sys.platform,
                       machine: str = "") -> str | None:
    """None when the bundled wheels cover this interpreter and platform; else one sentence saying so.

    What the extension covers is read from the manifest (``platforms`` and the Python tags of its
    ``wheels``), so the sentence follows the build. Whether numba is importable some other way is
    the caller's to ask: this reads files only.
    """
    if select_wheels(extension_dir, python, system, machine) is not None:
        return None
    try:
        with (Path(extension_dir) / "blender_manifest.toml").open("rb") as fh:
            manifest = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        manifest = {}
    pythons = sorted({part.removeprefix("cp") for entry in manifest.get("wheels", [])
                      for part in Path(entry).name.split("-")[2:3] if part.startswith("cp")})
    machine = (machine or platform.machine()).lower()
    here = _BLENDER_PLATFORMS.get(("linux" if system.startswith("linux") else system, _ARCH.get(machine, machine)),
                                  f"{system} {machine}")
    python = (python or python_tag()).removeprefix("cp")
    covered = ", ".join(manifest.get("platforms", [])) or "no platform"
    with_pythons = " and ".join(f"{p[0]}.{p[1:]}" for p in pythons) or "no Python"
    return (f"SPH Fluids cannot run in this Blender: numba, which it needs, is bundled for {covered} with Python "
            f"{with_pythons} (Blender 4.2 to 5.0 run 3.11, 5.1 and later 3.13), not for {here} with Python "
            f"{python[0]}.{python[1:]}; install the extension's zip for this platform, or use a supported "
            "platform and Blender.")


def copy_name(wheels: list[Path]) -> str:
    """``numba-0.68.1+llvmlite-0.50.0-cp311``: names, versions and the interpreter tag of the wheels."""
    parts = [p.name.split("-") for p in wheels]
    return "+".join(f"{name}-{version}" for name, version, *_ in parts) + "-" + parts[0][2].split(".")[0]


def publish(wheels: list[Path], root: str | os.PathLike) -> Path:
    """The published copy of ``wheels`` under ``root``, extracting it if needed; held until exit.

    Raises
    ------
    OSError : ``root`` cannot be created or written, the disk is full, or a wheel is unreadable
        (its ``filename`` names the path that failed).
    """
    root = Path(root)
    name = copy_name(wheels)
    target = root / name
    if target in _HELD:
        return target
    root.mkdir(parents=True, exist_ok=True)
    fd = _hold(root / f"{name}{_LOCK}", root, name)
    try:
        if not target.is_dir():
            _extract(wheels, root, name)
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise
    _HELD[target] = fd
    return target


def _hold(lock: Path, root: Path, name: str) -> int | None:
    """A shared lock on ``lock`` (None on Windows); first removes ``name``'s dead temp dirs if alone."""
    if not LOCKS:
        return None
    fd = _lock(lock, exclusive=True, wait=False)
    if fd is not None:
        # Nobody else holds it, so nobody is extracting this version: any temp dir is a dead one's.
        _remove_temps(root, name)
        fcntl.flock(fd, fcntl.LOCK_SH)  # not atomic: a cleaner may slip in and unlink it, so check
        if not same_file(fd, lock):
            os.close(fd)
            fd = None
    return fd if fd is not None else _lock(lock, exclusive=False, wait=True)


def _extract(wheels: list[Path], root: Path, name: str) -> Path:
    """Extract into a temp dir beside ``root/name`` and rename it there; a racing winner's copy wins."""
    target = root / name
    temp = root / f"{_TEMP}{name}-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        temp.mkdir()
        for wheel in wheels:
            try:
                with zipfile.ZipFile(wheel) as zf:
                    zf.extractall(temp)  # drops absolute and ".." member paths
            except zipfile.BadZipFile as exc:
                raise OSError(f"{wheel} is not a readable wheel ({exc})") from exc
        # Compiled now, so that importing never writes into the published directory.
        compileall.compile_dir(temp, ddir=str(target), quiet=2)
        os.rename(temp, target)  # fails if target exists (non-empty), on Windows too
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        if target.is_dir():
            log.debug("%s was published by another process meanwhile", target)
            return target
        raise
    log.info("numba and llvmlite unpacked into %s", target)
    return target


def held() -> list[Path]:
    """The copies this process has published or found, and holds until it exits."""
    return list(_HELD)


def remove_unused(root: str | os.PathLike, keep: str) -> list[str]:
    """Remove the copies (and dead temp dirs) of versions other than ``keep`` that no process holds.

    Best effort: never raises; returns the names removed. Does nothing on Windows.
    """
    root = Path(root)
    removed: list[str] = []
    if not LOCKS:
        return removed
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    names = set()
    for entry in entries:
        if entry.name.startswith(_TRASH) and _NAME.fullmatch(entry.name[len(_TRASH):].rsplit("-", 2)[0]):
            shutil.rmtree(entry.path, ignore_errors=True)  # renamed by a cleaner: nobody can use it
        elif entry.name.startswith(_TEMP):
            names.add(entry.name[len(_TEMP):].rsplit("-", 2)[0])
        else:
            names.add(entry.name.removesuffix(_LOCK))
    for name in sorted(n for n in names if n != keep and _NAME.fullmatch(n)):
        try:
            if _remove_version(root, name):
                removed.append(name)
        except OSError as exc:
            log.warning("could not remove the unused numba copy %s (%s)", root / name, exc)
    return removed


def _remove_version(root: Path, name: str) -> bool:
    lock = root / f"{name}{_LOCK}"
    fd = _lock(lock, exclusive=True, wait=False)
    if fd is None:
        return False  # a running process uses it
    try:
        target = root / name
        if target.is_dir():
            # Renamed first, so the published name never points at a half-deleted tree.
            trash = root / f"{_TRASH}{name}-{os.getpid()}-{secrets.token_hex(4)}"
            os.rename(target, trash)
            shutil.rmtree(trash, ignore_errors=True)
        _remove_temps(root, name)
        # Unlinked while held: a process waiting on the old file sees it gone and retries (_lock).
        lock.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return True


def _remove_temps(root: Path, name: str) -> None:
    prefix = f"{_TEMP}{name}-"
    for entry in os.scandir(root):
        if entry.name.startswith(prefix) and entry.name[len(prefix):].count("-") == 1:
            shutil.rmtree(entry.path, ignore_errors=True)


def _lock(path: Path, exclusive: bool, wait: bool) -> int | None:
    """An open descriptor holding a flock on ``path`` (created if missing); None if busy and not ``wait``."""
    for _ in range(10):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        if same_file(fd, path):
            return fd
        os.close(fd)  # its holder removed the version and unlinked the lock meanwhile: again
    raise OSError(f"the lock {path} keeps changing hands")
