"""Exceptions that carry what the user must know.

``InputError`` is raised for anything wrong with what the user gave us (scene
file, paths, settings) before work starts; the command line turns it into exit
code 2 and one sentence. ``SimulationError`` is raised when the simulation
itself fails (non-finite values, runaway velocities); exit code 3.
"""

from __future__ import annotations


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
