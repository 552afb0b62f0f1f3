"""What starting a parallel kernel costs: microseconds per call of a prange loop, at the thread count
and threading layer this process runs with.

A substep of the dam break starts a few dozen parallel kernels; where a call's fixed cost reaches
tens of microseconds (threads woken from sleep, more so in a virtual machine), small stages stop
gaining from more threads. Prints one JSON object: the threading layer, the threads, and the
microseconds per call of an empty-ish loop over 16 and over 24,000 elements, and of the same
24,000-element loop run serially.

Usage::

    NUMBA_NUM_THREADS=16 python scripts/benchmarks/launch_overhead.py
"""

from __future__ import annotations

import json
import time

import numba
import numpy as np


@numba.njit(parallel=True, nogil=True)
def _scale(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 2.0 * a[i]


@numba.njit(nogil=True)
def _scale_serial(a, out):
    for i in range(a.shape[0]):
        out[i] = 2.0 * a[i]


def _per_call_us(f, n: int, calls: int) -> float:
    a = np.ones(n)
    out = np.empty(n)
    f(a, out)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            f(a, out)
        best = min(best, (time.perf_counter() - t0) / calls)
    return round(best * 1e6, 2)


def run(calls: int = 2000) -> dict:
    out = {"threads": numba.get_num_threads()}
    out["parallel_16_us"] = _per_call_us(_scale, 16, calls)
    out["parallel_24000_us"] = _per_call_us(_scale, 24000, calls)
    out["serial_24000_us"] = _per_call_us(_scale_serial, 24000, calls)
    out["layer"] = numba.threading_layer()
    return out


if __name__ == "__main__":
    print(json.dumps(run()))
