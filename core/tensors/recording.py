"""Who records the kernels run in this context: the ``Recording``, the name scope and the
anomaly check, each a context variable with a public getter and a ``with`` form.

The lowest layer of the engine (it imports only ``core.tensors.tracing``), so the tensor, primitive, tape,
backward pass and engine all read and set recording state through these functions.
"""

from __future__ import annotations

import contextlib
import contextvars

from .tracing import traced

__all__ = [
    "Recording", "current", "recording_as", "no_grad", "recording", "name_scope", "scope",
    "anomaly_hook", "anomaly_checking", "tracks", "tracks_in",
]  # fmt: skip


class Recording:
    """Who records the kernels run in this context: one object per context.

    ``tapes``: the tapes whose ``with`` block is open (each records a forward node).
    ``backward``: the backward passes running (``core.autodiff.backward.BackwardPass``; each records
    the gradient ops as its tape's backward nodes; usually none or one).
    ``source``: the user line to give every node, while a built-in gradient runs (so no
    frame walk per op), else None.
    ``observer``: while a custom-gradient forward runs (``core/custom/builder.py``,
    ``ForwardUses``), what notes the tensors its ops read (``saw(inputs)``); it records and
    tracks nothing itself.

    ``current()`` is None when nothing records (no tape, or inside ``no_grad``): then
    ``run_kernel`` pays one context-variable read.
    """

    __slots__ = ("tapes", "backward", "source", "observer")

    def __init__(self, tapes: tuple = (), backward: tuple = (), source=None, observer=None):
        self.tapes, self.backward, self.source = tapes, backward, source
        self.observer = observer

    def with_tape(self, tape) -> Recording:
        return Recording(self.tapes + (tape,), self.backward, self.source, self.observer)


_RECORDING: contextvars.ContextVar[Recording | None] = contextvars.ContextVar(
    "recording", default=None
)
_SCOPE: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("scope", default=())
# detect_anomaly's check (core/check/anomaly.py): None when off, so run_kernel pays one .get()
_ANOMALY: contextvars.ContextVar = contextvars.ContextVar("anomaly", default=None)

#: the active ``Recording`` (None when nothing records); bound method: one call on hot paths
current = _RECORDING.get
#: the joined name scopes open here, as a tuple of names
scope = _SCOPE.get
#: detect_anomaly's check when it is on, else None
anomaly_hook = _ANOMALY.get


@contextlib.contextmanager
def recording_as(rec: Recording | None):
    """Within the block, ``rec`` records (None: nothing does)."""
    token = _RECORDING.set(rec)
    try:
        yield rec
    finally:
        _RECORDING.reset(token)


def enter(rec: Recording | None):
    """Make ``rec`` the recording until ``leave(token)`` (a tape's ``__enter__``/``__exit__``,
    which cannot be one ``with`` block); returns the token."""
    return _RECORDING.set(rec)


def leave(token) -> None:
    """Undo the ``enter`` that gave ``token``."""
    _RECORDING.reset(token)


def recording() -> bool:
    """True when some tape is recording."""
    return _RECORDING.get() is not None


def no_grad():
    """Within the block no tape records (ops still run). Tapes opened inside do record."""
    return recording_as(None)


@contextlib.contextmanager
def name_scope(name: str):
    """Group the nodes recorded in the block under ``name`` (nested scopes join with '/').

    tapeviz draws a scope as a cluster and can collapse it.
    """
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"name_scope: expected a non-empty name without '/', got {name!r}")
    token = _SCOPE.set(_SCOPE.get() + (name,))
    try:
        yield
    finally:
        _SCOPE.reset(token)


@contextlib.contextmanager
def anomaly_checking(hook):
    """Within the block the engine calls ``hook`` after every kernel (detect_anomaly)."""
    token = _ANOMALY.set(hook)
    try:
        yield hook
    finally:
        _ANOMALY.reset(token)


def tracks(t) -> bool:
    """True when a gradient of an active tape could flow through tensor ``t``: a tape made it
    or watches it, or it is a trainable variable (watched as soon as an op uses it); or when
    ``tv.jit`` traces it (a copy must then be an op)."""
    rec = _RECORDING.get()
    if rec is None or not (rec.tapes or rec.backward):  # an observer alone tracks nothing
        return traced(t)  # tv.jit tracing: a copy must be an op too, or it would be baked in
    if getattr(t, "trainable", False):  # a trainable Variable
        return True
    tapes = rec.tapes + tuple(b.tape for b in rec.backward)
    return any(tape.producer(t) is not None or t.id in tape.watched for tape in tapes) or traced(t)


def tracks_in(rec: Recording | None, t) -> bool:
    """``tracks(t)`` as it was under ``rec`` (a Recording saved earlier)."""
    token = _RECORDING.set(rec)
    try:
        return tracks(t)
    finally:
        _RECORDING.reset(token)
