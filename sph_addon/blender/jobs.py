"""A task running on a worker thread while the interface stays responsive.

The worker runs ``Task.run`` (numba kernels are ``nogil``, so the main thread
keeps ticking: BLENDER_NOTES.md section 6) and sends ``Status`` objects and its
final result through a queue; only the main thread (the modal operator that
polls the queue) touches Blender data. One job at a time per session.
"""

from __future__ import annotations

import queue
import threading
import traceback
from dataclasses import dataclass

from .baking import Status, Task


@dataclass
class Outcome:
    """How a job ended: ``result`` (dict) or ``error`` (exception), and whether it was cancelled."""

    result: dict | None = None
    error: BaseException | None = None
    cancelled: bool = False


class Job:
    def __init__(self, task: Task):
        self.task = task
        self.status: Status | None = None
        self.outcome: Outcome | None = None
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name=f"sph_{task.kind}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        """Ask the task to stop after the current frame (the cache stays resumable)."""
        self._stop.set()

    @property
    def cancelling(self) -> bool:
        return self._stop.is_set()

    def _work(self) -> None:
        try:
            result = self.task.run(self._queue.put, self._stop.is_set)
            self._queue.put(Outcome(result=result, cancelled=self._stop.is_set()))
        except BaseException as exc:  # reported on the main thread, never lost in the worker
            exc.__sph_traceback__ = traceback.format_exc()
            self._queue.put(Outcome(error=exc, cancelled=self._stop.is_set()))

    def poll(self) -> Outcome | None:
        """Main thread: take the latest status; return the outcome once the worker has finished."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return None
            if isinstance(item, Outcome):
                self._thread.join()
                self.outcome = item
                return item
            self.status = item

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


current: Job | None = None


def busy() -> bool:
    return current is not None and current.outcome is None


def register():
    pass


def unregister():
    """Threads must end before Blender unloads the add-on (API docs): stop and wait."""
    global current
    if current is not None and current.alive:
        current.cancel()
        current.join()
    current = None
