"""``run_kernel``: the one door from ops to backend kernels, and where tapes record.

Every op ends here. The engine looks the kernel up for the active backend, runs it on raw
arrays, wraps the outputs as tensors and lets every active recorder (tape) write a node.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys

import numpy as np

from .backend_registry import _GLOBAL_BACKEND, _SCOPED_BACKEND, get_backend
from .registry import _KERNELS, _missing_kernel_message
from .tensor import DisposedError, Tensor
from .tensor_data import _Foreign, mark_views

__all__ = ["run_kernel", "no_grad", "name_scope", "settings"]

# the active recorders (tapes, backward recorders); no_grad empties it
_RECORDERS: contextvars.ContextVar[tuple] = contextvars.ContextVar("recorders", default=())
_SCOPE: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("scope", default=())
# while a built-in gradient runs: the user's gradient() line, so no frame walk per op
_FIXED_SOURCE: contextvars.ContextVar[tuple | None] = contextvars.ContextVar(
    "fixed_source", default=None
)
# detect_anomaly's check (core/check/anomaly.py): None when off, so run_kernel pays one .get()
_ANOMALY: contextvars.ContextVar = contextvars.ContextVar("anomaly", default=None)


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
        >>> import tapeviz.core as core
        >>> core.run_kernel("Add", {"a": core.tensor([1.0]), "b": core.tensor([2.0])}).numpy()
        array([3.], dtype=float32)
    """
    if attrs is None:
        attrs = _NO_ATTRS
    backend = _SCOPED_BACKEND.get() or _GLOBAL_BACKEND[0] or get_backend()
    config = _KERNELS.get((name, backend))
    if config is None:
        raise KeyError(_missing_kernel_message(name, backend))
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
    try:
        out = config.fn(arrays, attrs)
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
    recorders = _RECORDERS.get()
    if recorders:
        source = (_FIXED_SOURCE.get() or _user_frame()) if settings.record_source else None
        for rec in recorders:
            rec._record(name, backend, inputs, outputs, attrs, None, source)
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


def record_node(kernel, inputs, outputs, attrs, grad_config, *, style, label, saved=None):
    """Record a node made outside ``run_kernel`` (custom gradients) on every active tape.

    ``saved`` is a list of ``(role, name, Tensor)``; without it the grad config decides.
    Returns the nodes recorded (one per active tape).
    """
    recorders = _RECORDERS.get()
    source = _user_frame() if settings.record_source else None
    extra = {"style": style, "label": label, "saved": saved, "grad": grad_config}
    nodes = [
        rec._record(kernel, get_backend(), inputs, outputs, attrs, extra, source)
        for rec in recorders
    ]
    hook = _ANOMALY.get()
    if hook is not None:
        hook(kernel, inputs, tuple(outputs))
    return nodes


def recording() -> bool:
    """True when some tape is recording."""
    return bool(_RECORDERS.get())


@contextlib.contextmanager
def no_grad():
    """Within the block no tape records (ops still run). Tapes opened inside do record."""
    token = _RECORDERS.set(())
    try:
        yield
    finally:
        _RECORDERS.reset(token)


@contextlib.contextmanager
def _push_recorder(rec):
    token = _RECORDERS.set(_RECORDERS.get() + (rec,))
    try:
        yield rec
    finally:
        _RECORDERS.reset(token)


@contextlib.contextmanager
def _set_recorders(recs: tuple):
    token = _RECORDERS.set(recs)
    try:
        yield
    finally:
        _RECORDERS.reset(token)


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


def current_scope() -> str:
    return "/".join(_SCOPE.get())


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


def zeros_like_array(t: Tensor) -> np.ndarray:
    return np.zeros(t.shape, t.dtype)
