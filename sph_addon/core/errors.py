"""Exceptions that carry what the user must know.

``InputError`` is raised for anything wrong with what the user gave us (scene
file, paths, settings) before work starts; the command line turns it into exit
code 2 and one sentence. ``SimulationError`` is raised when the simulation
itself fails (non-finite values, runaway velocities); exit code 3.
The exit codes are defined here, once, for both command lines (``python -m
sph_addon`` and ``blender --command sph``).
"""

from __future__ import annotations

import errno

# Process exit codes (DESIGN.md section 4): done; bad input (one sentence, nothing
# written); the simulation failed; interrupted (the cache stays resumable).
EXIT_OK = 0
EXIT_INPUT = 2
EXIT_SIMULATION = 3
EXIT_INTERRUPTED = 130


# Longest field path or file name shown: a 5,000-character key or path is named by its start.
_MAX_WHERE = 300


def printable(text: str, limit: int | None = None) -> str:
    """``text`` on one line: control and other non-printable characters escaped, cut at ``limit``.

    Field names and paths come from the user's files; a newline or an escape sequence in a
    key must not break the one-sentence error into several lines or drive the terminal.
    """
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if limit is not None and len(text) > limit:
        text = text[:limit - 3] + "..."
    return text


class InputError(ValueError):
    """Bad user input; ``where`` names the field (JSON path) or file."""

    def __init__(self, where: str, message: str):
        self.where = printable(str(where), _MAX_WHERE)
        self.message = printable(str(message))
        super().__init__(f"{self.where}: {self.message}" if self.where else self.message)


class SimulationError(RuntimeError):
    """The simulation failed at ``frame``; the cache up to the previous frame is intact."""

    def __init__(self, frame: int, message: str):
        self.frame = frame
        self.message = message
        super().__init__(f"frame {frame}: {message}")


class StorageError(SimulationError):
    """The bake could not write its cache (a full disk, a file-size limit, a quota): exit code 3.

    Every frame the manifest lists stays readable and the bake resumable (writes are atomic and
    the manifest is updated after a frame's files), so the message says how to go on.
    """

    def __init__(self, frame: int | None, message: str):
        self.frame = frame
        self.message = message
        RuntimeError.__init__(self, message)


# Write failures that are the storage's, not a bug: no space, a file-size limit, a quota, a
# read-only or failing disk.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EROFS, errno.EIO, getattr(errno, "EDQUOT", errno.ENOSPC)})


def is_storage_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is the storage refusing a write (an OSError of :data:`STORAGE_ERRNOS`)."""
    return isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS


def exit_status(exc: Exception) -> tuple[int, str]:
    """The exit code and the one line a command line prints for ``exc``, the same in both.

    A SimulationError is exit code 3; anything else given here is the user's input (an
    InputError, or what the caller counts as one, e.g. a file it could not open): 2.
    """
    if isinstance(exc, StorageError):
        return EXIT_SIMULATION, f"error: {exc}"
    if isinstance(exc, SimulationError):
        return EXIT_SIMULATION, f"simulation failed at {exc}"
    return EXIT_INPUT, f"error: {exc}"
