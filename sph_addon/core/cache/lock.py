"""One writer per cache directory: an OS file lock that a crashed process cannot leave held.

``DIR/.sph_lock`` is locked with ``flock`` (Linux, macOS) or ``msvcrt.locking``
(Windows); the operating system drops the lock when the process ends, however
it ends (SIGKILL, a crash, a power-cycled node), so there is no stale lock to
clean up and none to guess about. Who holds it is written beside it, in
``DIR/.sph_lock.json`` (pid, host, command, start time), so that a refused
second writer can name the holder; a stale companion file left by a crash is
only read while somebody holds the lock, who has rewritten it.

Bakes and ``free`` take the lock exclusively; meshing takes it shared, so any
number of meshing processes (a farm's chunks) run together but never beside a
bake or a deletion. Windows has no shared file locks in ``msvcrt``: there a
meshing process takes it exclusively too.

Why not the ``filelock`` package: runtime dependencies reach Blender only as
bundled wheels (``blender_manifest.toml``), and this is twenty lines of stdlib.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from ..errors import InputError
from .atomic import write_json

LOCK_NAME = ".sph_lock"
OWNER_NAME = ".sph_lock.json"

if os.name == "nt":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int, shared: bool) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int, shared: bool) -> bool:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class CacheBusy(InputError):
    """Another process holds the cache's lock (exit 2: retry when it has finished)."""


class CacheLock:
    """A held lock on a cache directory; :meth:`release` (or the ``with`` block's end) gives it back."""

    def __init__(self, root: Path, fd: int, shared: bool):
        self.root, self._fd, self.shared = root, fd, shared

    def release(self) -> None:
        if self._fd is None:
            return
        if not self.shared:
            # Leave the directory as we found it. Unlinked while still held: a process that opened
            # the old file meanwhile sees it gone after locking and starts again (lock_cache).
            (self.root / OWNER_NAME).unlink(missing_ok=True)
            if os.name != "nt":
                (self.root / LOCK_NAME).unlink(missing_ok=True)
        _unlock(self._fd)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> CacheLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_cache(root: str | os.PathLike, command: str, shared: bool = False) -> CacheLock:
    """Take the lock of the cache directory ``root`` (created if missing) for ``command``.

    Parameters
    ----------
    root : the cache directory.
    command : what the holder does, for the refusal message ("bake", "mesh", "free").
    shared : several shared holders may hold it together (meshing); exclusive otherwise.

    Raises
    ------
    CacheBusy : another process holds it; the message names it (pid, host, command, since).
    InputError : the directory or its lock file cannot be created.
    """
    root = Path(root)
    for _ in range(10):
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
        except OSError as exc:
            raise InputError(str(root), f"cannot lock the cache ({exc.strerror or exc})") from None
        if not _try_lock(fd, shared and os.name != "nt"):
            os.close(fd)
            raise CacheBusy(str(root), f"another process is using this cache ({_holder(root)}); wait for it to "
                                       "finish or stop it, then try again")
        if same_file(fd, root / LOCK_NAME):
            break
        os.close(fd)  # its holder released and unlinked it between our open and our lock: again
    else:
        raise CacheBusy(str(root), "the cache's lock keeps changing hands; try again")
    if not shared:
        write_json(root / OWNER_NAME, {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                                       "since": time.strftime("%Y-%m-%d %H:%M:%S")})
    return CacheLock(root, fd, shared)


def check_unlocked(root: str | os.PathLike) -> None:
    """Raise CacheBusy if a process holds the lock of ``root``; writes nothing (a check before a bake)."""
    path = Path(root) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return  # no lock file: every holder has one
    try:
        if not _try_lock(fd, False):
            raise CacheBusy(str(root), f"another process is using this cache ({_holder(Path(root))}); wait for "
                                       "it to finish or stop it, then try again")
        _unlock(fd)
    finally:
        os.close(fd)


def same_file(fd: int, path: Path) -> bool:
    """Whether the open descriptor ``fd`` is the file now at ``path`` (not one unlinked and replaced)."""
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _holder(root: Path) -> str:
    """Who holds the lock, from its companion file (a meshing run writes none: shared holders are many)."""
    try:
        owner = json.loads((root / OWNER_NAME).read_text(encoding="utf-8"))
        return f"{owner['command']} by pid {owner['pid']} on {owner['host']} since {owner['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a meshing run, or a process that has not written its name yet"
