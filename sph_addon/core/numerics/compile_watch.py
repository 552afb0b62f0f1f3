"""What the first bake on a machine is doing while numba compiles the solver.

The kernels are compiled on their first call and kept in the kernel cache (``kernel_cache``); a bake
whose kernels are not there yet spends its first minutes compiling them (measured on a quiet 2-core
machine: 156 s for water with floating boxes, 198 s with elastic cubes, against 3 s warm), with no frame
to report. :func:`watch_compiles` listens to numba's compile events (``numba.core.event``, fired only
when a function is compiled, never when it is loaded from the cache) and says so: once when the first
compile starts, then every ``every`` seconds while compiling goes on, and once at the end. A bake whose
kernels are all cached says nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from ..durations import format_duration

# What the first message says to expect, from the figures in the module docstring.
EXPECTED = "a few minutes"


def _kernels(n: int) -> str:
    return f"{n} kernel" if n == 1 else f"{n} kernels"


class _Counter:
    """Counts the kernels compiled and says what is going on (``say``), at most every ``every`` s. numba
    compiles one kernel on one thread at a time (its compiler lock), so the nesting depth is one count."""

    def __init__(self, say: Callable[[str], None], every: float):
        self.say, self.every = say, every
        self.started = self.last = 0.0
        self.done = 0
        self.depth = 0  # compiles in progress: a kernel's own compile starts those of what it calls

    def begin(self) -> None:
        now = time.perf_counter()
        if not self.started:
            self.started = self.last = now
            self.say(f"compiling the solver (the first bake on this machine only, {EXPECTED}; "
                     "later bakes start at once)")
        self.depth += 1

    def end(self) -> None:
        self.depth -= 1
        if self.depth:
            return  # a function a kernel calls, compiled with it: the kernel is counted when it is done
        self.done += 1
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            self.say(f"compiling the solver: {_kernels(self.done)} compiled, {format_duration(now - self.started)} "
                     "so far")

    def finish(self) -> None:
        if self.started:
            self.say(f"compiled {_kernels(self.done)} in {format_duration(time.perf_counter() - self.started)}; "
                     "they are cached for the next bake")


@contextlib.contextmanager
def watch_compiles(say: Callable[[str], None] | None, every: float = 15.0) -> Iterator[None]:
    """Within the block, report numba's compiles through ``say`` (nothing when None or when none happen).
    Compiles in other threads are counted too (numba's events are process-wide)."""
    if say is None:
        yield
        return
    from numba.core import event

    counter = _Counter(say, every)

    class _Listener(event.Listener):
        def on_start(self, ev) -> None:
            counter.begin()

        def on_end(self, ev) -> None:
            counter.end()

    listener = _Listener()
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)
        counter.finish()
