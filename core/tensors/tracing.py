"""The tracer slot: where ``tv.jit``'s tracer hangs while it traces a function.

``TRACER`` holds the active tracer (``core/jit/tracer.py``) or None. The engine's
``run_kernel`` reports every kernel to it; a tensor asks it before giving up its value
(``numpy()``, ``item()``, ``bool()``, ...); ``Variable.assign`` and the random ops report to
it. Outside ``tv.jit``'s first call it is None, and each of those places pays one lookup.
This module imports nothing of the engine, so every module can import it.
"""

from __future__ import annotations

import contextvars

__all__ = ["TRACER", "guard", "refuse_opaque", "traced", "check_values", "touch", "copied"]

TRACER: contextvars.ContextVar = contextvars.ContextVar("tracer", default=None)


def guard(t, what: str) -> None:
    """Raise when a tracer is tracing and ``t`` is one of its traced values: ``what``
    (``"item()"``, ``"bool()"``, ...) would read a value the compiled program cannot see."""
    tracer = TRACER.get()
    if tracer is not None:
        tracer.concrete(t, what)


def refuse_opaque(kind: str, name: str) -> None:
    """Raise ``OpaqueFunctionError`` while tracing: a ``kind`` (DifferentiableFunction,
    CompiledLayer) runs its own numpy or compiled code on raw arrays, which jit cannot see."""
    tracer = TRACER.get()
    if tracer is not None:
        tracer.opaque(kind, name)


def traced(t) -> bool:
    """True while ``tv.jit`` traces and ``t``'s value is the trace's (an argument, a kernel
    output, a Variable): code must then compute with ops, not read the value."""
    tracer = TRACER.get()
    return tracer is not None and tracer.traced(t)


def check_values(check, *tensors) -> None:
    """Run ``check(*arrays)`` (it raises on bad values) on the tensors' values; while
    ``tv.jit`` traces them, the compiled program runs the check on every call too."""
    tracer = TRACER.get()
    if tracer is not None and any(tracer.traced(t) for t in tensors):
        tracer.check(check, tensors)
    else:
        check(*[t.numpy() for t in tensors])


def touch(tensors) -> None:
    """Tell ``tv.jit``'s tracer that code uses these tensors by identity (a tape watches them
    or differentiates with respect to them): an argument's original used so is an alias."""
    tracer = TRACER.get()
    if tracer is not None:
        for t in tensors:
            tracer.touch(t)


def copied(source, copy):
    """``copy`` (``copy.copy``/``deepcopy``) of ``source``; while ``tv.jit`` traces, the copy
    is the same traced value (a Variable's: its value when copied), never a baked constant."""
    tracer = TRACER.get()
    if tracer is not None:
        tracer.copied(source, copy)
    return copy
