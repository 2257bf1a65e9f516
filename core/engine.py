"""``run_kernel``: the one door from ops to backend kernels, and where tapes record.

Every op ends here. The engine looks the kernel's primitive up, runs its kernel for the
active backend on raw arrays, wraps the outputs as tensors and lets the active ``Recording``
(tapes, and a running backward pass) write a node. While ``tv.jit`` traces a function, its
tracer (``core.tracing.TRACER``) sees every kernel run here too, recording or not.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys

import numpy as np

from .backend_registry import _GLOBAL_BACKEND, _SCOPED_BACKEND, get_backend
from .registry import _PRIMITIVES, OVERRIDES
from .tensor import DisposedError, Tensor, Variable
from .tensor_data import _Foreign, mark_views
from .tracing import TRACER, traced

__all__ = ["run_kernel", "no_grad", "name_scope", "settings", "Recording"]


class Recording:
    """Who records the kernels run in this context: one object, held in ``_RECORDING``.

    ``tapes``: the tapes whose ``with`` block is open (each records a forward node).
    ``backward``: the backward passes running (``core.backward.BackwardPass``; each records
    the gradient ops as its tape's backward nodes; usually none or one).
    ``source``: the user line to give every node, while a built-in gradient runs (so no
    frame walk per op), else None.
    ``observer``: while a custom-gradient forward runs (``core/custom/builder.py``,
    ``ForwardUses``), what notes the tensors its ops read (``saw(inputs)``); it records and
    tracks nothing itself.

    ``_RECORDING`` is None when nothing records (no tape, or inside ``no_grad``): then
    ``run_kernel`` pays one ``.get()``.
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


@contextlib.contextmanager
def recording_as(rec: Recording | None):
    """Within the block, ``rec`` records (None: nothing does)."""
    token = _RECORDING.set(rec)
    try:
        yield rec
    finally:
        _RECORDING.reset(token)


def current() -> Recording | None:
    """The active ``Recording`` (None when nothing records)."""
    return _RECORDING.get()


def tracks(t: Tensor) -> bool:
    """True when a gradient of an active tape could flow through ``t``: a tape made it or
    watches it, or it is a trainable variable (watched as soon as an op uses it); or when
    ``tv.jit`` traces it (a copy must then be an op)."""
    rec = _RECORDING.get()
    if rec is None or not (rec.tapes or rec.backward):  # an observer alone tracks nothing
        return traced(t)  # tv.jit tracing: a copy must be an op too, or it would be baked in
    tapes = rec.tapes + tuple(b.tape for b in rec.backward)
    if isinstance(t, Variable) and t.trainable:
        return True
    return any(t.id in tape._producer or t.id in tape.watched for tape in tapes) or traced(t)


def tracks_in(rec: Recording | None, t: Tensor) -> bool:
    """``tracks(t)`` as it was under ``rec`` (a Recording saved earlier)."""
    token = _RECORDING.set(rec)
    try:
        return tracks(t)
    finally:
        _RECORDING.reset(token)


class _Settings:
    """Global switches.

    ``record_source``: remember the user code line of each node.
    ``boundscheck``: ``CompiledLayer``s (``boundscheck=None``) check indices, so an
    out-of-range access is an ``IndexError``, not a crashed process; False is the fast,
    unchecked opt-in (cost: ``bench/bench_numba.py``, ``bench_boundscheck``).
    ``backward_keep_bytes``: a gradient() frees the temporaries its backward nodes made that
    are larger than this many bytes once their step is done (shape and dtype stay for
    tapeviz), so large arrays reuse memory; ``None`` keeps every value. Nothing is freed
    while an outer tape records the gradient (higher order).
    """

    record_source: bool = True
    boundscheck: bool = True
    backward_keep_bytes: int | None = 1 << 16


settings = _Settings()


def run_kernel(name: str, inputs: dict, attrs: dict | None = None):
    """Run kernel ``name`` on the active backend and record it on every active tape.

    Args:
        name: kernel name (``core.kernel_names``).
        inputs: ``{input name: Tensor}``.
        attrs: non-tensor arguments.

    Returns:
        A Tensor, or a tuple of Tensors for multi-output kernels.

    Example:
        >>> import tapeviz as tv
        >>> tv.run_kernel("Add", {"a": tv.tensor([1.0]), "b": tv.tensor([2.0])}).numpy()
        array([3.], dtype=float32)
    """
    if attrs is None:
        attrs = _NO_ATTRS
    backend = _SCOPED_BACKEND.get() or _GLOBAL_BACKEND[0] or get_backend()
    prim = _PRIMITIVES.get(name)
    config = prim.kernels.get(backend) if prim is not None else None
    if config is None:
        from .registry import get_kernel

        config = get_kernel(name, backend)  # loads a lazily imported backend, or raises
    arrays = {}
    foreign = False  # an input wraps a user's numpy array without a copy (tensor_data.py)
    for key, t in inputs.items():
        if type(t) is not Tensor:
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"{name}: input {key!r} must be a Tensor, got {type(t).__name__} "
                    "(wrap it with tv.tensor)"
                )
            foreign = foreign or type(t) is _Foreign
        data = t._data
        if data is None:
            raise DisposedError(f"{name}: input {key!r} ({t._label()}) was disposed")
        arrays[key] = data
    tracer = TRACER.get()  # tv.jit tracing: kernels get plain arrays, and it records them
    try:
        out = config.fn(arrays if tracer is None else tracer.unwrap(arrays), attrs)
    except (DisposedError, KernelError):
        raise
    except Exception as e:  # name the kernel, backend and input shapes
        raise _kernel_error(name, backend, arrays, e) from e
    if type(out) is np.ndarray and out.dtype.kind in _KINDS:  # the common case
        result = Tensor(out)
        outputs = (result,)
    else:
        outputs = tuple(Tensor(a) for a in _check_outputs(name, backend, out))
        result = outputs if type(out) is tuple or type(out) is list else outputs[0]
    if foreign:
        mark_views(inputs, outputs)
    rec = _RECORDING.get()
    if rec is not None:
        if rec.observer is not None:  # a custom forward runs: note the tensors it reads
            rec.observer.saw(inputs)
        source = (rec.source or _user_frame()) if settings.record_source else None
        grad = prim.grad
        overrides = OVERRIDES.get()
        if overrides is not None:  # a gradient_override block open in this context
            grad = overrides.get(name, grad)
        for tape in rec.tapes:
            tape._record(prim, backend, inputs, outputs, attrs, grad, source)
        for bw in rec.backward:
            bw.record(prim, backend, inputs, outputs, attrs, grad, source)
    if tracer is not None:
        tracer.kernel(prim, backend, config, inputs, outputs, attrs, out)
    hook = _ANOMALY.get()
    if hook is not None:
        hook(name, inputs, outputs)
    return result


_KINDS = "fiub"
_NO_ATTRS: dict = {}  # shared by every attr-less kernel run: never mutate a node's attrs


def _check_outputs(name, backend, out) -> list:
    """A kernel's result as a list of arrays, or a TypeError naming the kernel."""
    many = type(out) is tuple or type(out) is list
    arrays = []
    for o in out if many else (out,):
        if isinstance(o, np.generic):
            o = np.asarray(o)
        if not isinstance(o, np.ndarray) or o.dtype.kind not in _KINDS:
            what = f"{type(o).__name__} of {o.dtype}" if hasattr(o, "dtype") else type(o).__name__
            raise TypeError(
                f"kernel {name!r} on backend {backend!r} returned {what}; expected a numeric "
                "numpy array or a tuple of them"
            )
        arrays.append(o)
    if many and not arrays:
        raise TypeError(f"kernel {name!r} on backend {backend!r} returned no outputs")
    return arrays


class KernelError(ValueError):
    """A kernel failed; the message names the kernel, backend and input shapes."""


def _kernel_error(name, backend, arrays, e):
    shapes = ", ".join(f"{k}: {a.shape} {a.dtype}" for k, a in arrays.items())
    msg = f"kernel {name!r} on backend {backend!r} failed for inputs ({shapes}): {e}"
    if isinstance(e, IndexError):
        return IndexError(msg)
    if isinstance(e, TypeError):
        return TypeError(msg)
    return KernelError(msg)


def record(prim, inputs: dict, outputs: tuple, attrs: dict, grad, saved, *, outer_only=False):
    """Record a node of ``prim`` made outside ``run_kernel`` (the custom-gradient builders)
    on every recorder (``outer_only``: only the tapes, not a running backward pass).

    ``saved`` is a list of ``(role, name, Tensor)``; ``grad`` the node's ``GradConfig``.
    Returns the nodes recorded (one per recorder).
    """
    rec = _RECORDING.get()
    nodes = []
    if rec is not None:
        if rec.observer is not None:
            rec.observer.saw(inputs)
        source = _user_frame() if settings.record_source else None
        backend = get_backend()
        for tape in rec.tapes:
            nodes.append(tape._record(prim, backend, inputs, outputs, attrs, grad, source, saved))
        if not outer_only:
            for bw in rec.backward:
                nodes.append(bw.record(prim, backend, inputs, outputs, attrs, grad, source, saved))
    hook = _ANOMALY.get()
    if hook is not None:
        hook(prim.name, inputs, tuple(outputs))
    return nodes


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


_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# the tapeviz package (a path only: core never imports tapeviz): installed, core is inside it
# (tapeviz/core/); in the repository it is the sibling folder tapeviz/. A user file under some
# other ".../tapeviz/" folder (tests/tapeviz/..., a clone named tapeviz) is user code
_PARENT = os.path.dirname(_CORE_DIR.rstrip(os.sep))
_INSTALLED = os.path.isfile(os.path.join(_PARENT, "__init__.py"))
_TAPEVIZ_DIR = (_PARENT if _INSTALLED else os.path.join(_PARENT, "tapeviz")) + os.sep
_INTERNAL: dict = {}


def _classify(code) -> bool:
    fn = code.co_filename
    hit = _INTERNAL[code] = (
        fn.startswith(_CORE_DIR) or fn.startswith(_TAPEVIZ_DIR) or ("contextlib" in fn)
    )
    return hit


def caller_source():
    """(file, line, function) of the first frame outside core/tapeviz, for the caller's use."""
    return _user_frame() if settings.record_source else None


def _user_frame():
    """(file, line, function) of the first frame outside core/tapeviz: the user's code line."""
    f = sys._getframe(2)
    internal = _INTERNAL
    while f is not None:
        code = f.f_code
        hit = internal.get(code)
        if hit is None:
            hit = _classify(code)
        if not hit:
            # keyed by instruction offset: f_lineno walks the line table (slow in long
            # functions), so it runs once per call site
            key = (code, f.f_lasti)
            source = _SOURCES.get(key)
            if source is None:
                if len(_SOURCES) > 100_000:
                    _SOURCES.clear()
                    _LINES.clear()
                line = (code, f.f_lineno)  # one tuple per code line, shared by its nodes
                source = _SOURCES[key] = _LINES.setdefault(
                    line, (code.co_filename, line[1], code.co_name)
                )
            return source
        f = f.f_back
    return None


_SOURCES: dict = {}  # (code, instruction offset) -> source
_LINES: dict = {}  # (code, line) -> source
