"""Which tensors are alive (``LIVE``: id -> bytes, read by ``tv.memory()``), and the
``tv.tidy`` scopes they are made in (each scope a list of the tensors made while it was the
innermost one open in its thread)."""

from __future__ import annotations

import threading

__all__ = ["LIVE", "SCOPES", "OPEN_SCOPES", "scope_stack", "push_scope", "pop_scope"]

LIVE: dict[int, int] = {}
SCOPES = threading.local()  # .stack: this thread's open tidy scopes
OPEN_SCOPES = [0]  # tidy scopes open in any thread: Tensor() skips the lookup when 0
_lock = threading.Lock()


def scope_stack() -> list:
    """This thread's open tidy scopes, innermost last."""
    stack = getattr(SCOPES, "stack", None)
    if stack is None:
        stack = SCOPES.stack = []
    return stack


def push_scope() -> None:
    with _lock:
        OPEN_SCOPES[0] += 1
    scope_stack().append([])


def pop_scope() -> list:
    with _lock:
        OPEN_SCOPES[0] -= 1
    return scope_stack().pop()
