"""Exceptions that carry what the user must know.

``InputError`` is raised for anything wrong with what the user gave us (scene
file, paths, settings) before work starts; the command line turns it into exit
code 2 and one sentence. ``SimulationError`` is raised when the simulation
itself fails (non-finite values, runaway velocities); exit code 3.
The exit codes are defined here, once, for both command lines (``python -m
sph_addon`` and ``blender --command sph``).
"""

from __future__ import annotations

# Process exit codes (DESIGN.md section 4): done; bad input (one sentence, nothing
# written); the simulation failed; interrupted (the cache stays resumable).
EXIT_OK = 0
EXIT_INPUT = 2
EXIT_SIMULATION = 3
EXIT_INTERRUPTED = 130


class InputError(ValueError):
    """Bad user input; ``where`` names the field (JSON path) or file."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


class SimulationError(RuntimeError):
    """The simulation failed at ``frame``; the cache up to the previous frame is intact."""

    def __init__(self, frame: int, message: str):
        self.frame = frame
        self.message = message
        super().__init__(f"frame {frame}: {message}")


def exit_status(exc: Exception) -> tuple[int, str]:
    """The exit code and the one line a command line prints for ``exc``, the same in both.

    A SimulationError is exit code 3; anything else given here is the user's input (an
    InputError, or what the caller counts as one, e.g. a file it could not open): 2.
    """
    if isinstance(exc, SimulationError):
        return EXIT_SIMULATION, f"simulation failed at {exc}"
    return EXIT_INPUT, f"error: {exc}"
