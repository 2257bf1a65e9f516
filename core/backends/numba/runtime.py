"""Switches of the numba backend and its compile-time bookkeeping (kept apart from run time).

Compilation is lazy: a kernel compiles (or loads from numba's on-disk cache) the first time
it runs with a new dtype, never at import.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numba
from numba.core import event


class _Settings:
    """``min_size``: arrays with fewer elements run numpy's kernel instead of the compiled one
    (a numba call costs a few microseconds, more than numpy needs for a small array); 0
    forces the compiled path (the tests do). ``num_threads``: see below."""

    min_size: int = 16384
    # threads for the parallel kernels (None: numba's default). On two cores or fewer one
    # thread: a parallel region on a busy two-core machine waits a scheduler quantum (4-8 ms
    # measured) whenever the other core is taken, far more than it saves.
    num_threads: int | None = 1 if (os.cpu_count() or 1) <= 2 else None


settings = _Settings()

_COMPILE_SECONDS: dict[object, float] = {}


class _CompileTimer(event.Listener):
    """Adds the wall time of every numba compilation to its dispatcher's total."""

    def __init__(self):
        self._starts: dict[int, float] = {}

    def on_start(self, ev):
        self._starts[id(ev.data["dispatcher"])] = time.perf_counter()

    def on_end(self, ev):
        disp = ev.data["dispatcher"]
        start = self._starts.pop(id(disp), None)
        if start is not None:
            name = getattr(disp, "py_func", disp).__qualname__
            key = (getattr(disp.py_func, "__module__", ""), name)
            _COMPILE_SECONDS[key] = _COMPILE_SECONDS.get(key, 0.0) + time.perf_counter() - start


event.register("numba:compile", _CompileTimer())


@dataclass
class CompileReport:
    """Compile time of the numba backend's kernels, apart from their run time.

    Attributes:
        rows: one dict per compiled function: ``function``, ``signatures`` (the dtypes it was
            compiled for), ``compile_s`` (seconds spent compiling in this process),
            ``cache_hits`` (signatures loaded from numba's disk cache instead).
    """

    rows: list = field(default_factory=list)

    @property
    def total_compile_s(self) -> float:
        return sum(r["compile_s"] for r in self.rows)

    def __str__(self) -> str:
        lines = [f"numba backend: {self.total_compile_s:.2f} s compiling in this process"]
        for r in self.rows:
            sigs = "; ".join(r["signatures"]) or "not compiled"
            lines.append(
                f"  {r['function']:<28} {r['compile_s']:6.2f} s  "
                f"{r['cache_hits']} cache hits  {sigs}"
            )
        return "\n".join(lines)

    __repr__ = __str__


def report(dispatchers) -> CompileReport:
    rows = []
    for disp in dispatchers:
        key = (disp.py_func.__module__, disp.py_func.__qualname__)
        sigs = [", ".join(str(t) for t in s) for s in disp.signatures]
        hits = sum(disp._cache_hits.values()) if hasattr(disp, "_cache_hits") else 0
        name = f"{key[0].rsplit('.', 1)[-1]}.{key[1]}"
        rows.append(
            {
                "function": name,
                "signatures": sigs,
                "compile_s": _COMPILE_SECONDS.get(key, 0.0),
                "cache_hits": hits,
            }
        )
    return CompileReport(rows)


_APPLIED = [None]


def apply_threads() -> None:
    """Give numba ``settings.num_threads`` threads (when set) before a parallel kernel runs."""
    n = settings.num_threads
    if n and _APPLIED[0] != n:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        _APPLIED[0] = n
