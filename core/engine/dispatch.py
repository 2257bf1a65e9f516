"""``run_kernel``: the one door from ops to backend kernels, and where tapes record.

Every op ends here. The engine looks the kernel's primitive up, runs its kernel for the
active backend on raw arrays, wraps the outputs as tensors and lets the active ``Recording``
(tapes, and a running backward pass) write a node. While ``tv.jit`` traces a function, its
tracer (``core.tensors.tracing.TRACER``) sees every kernel run here too, recording or not.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ..registry.backends import GLOBAL_BACKEND, SCOPED_BACKEND, get_backend
from ..registry.gradients import OVERRIDES
from ..registry.kernels import PRIMITIVES, get_kernel
from ..tensors.foreign import Foreign, mark_views
from ..tensors.recording import anomaly_hook, current
from ..tensors.tensor import DisposedError, Tensor
from ..tensors.tracing import TRACER
from .source_location import Source, call_columns

__all__ = ["run_kernel", "bind", "record", "settings", "caller_source", "KernelError"]


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
        name: kernel name (``core.registry.kernels.kernel_names``).
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
    backend = SCOPED_BACKEND.get() or GLOBAL_BACKEND[0] or get_backend()
    prim = PRIMITIVES.get(name)
    config = prim.kernels.get(backend) if prim is not None else None
    if config is None:
        config = get_kernel(name, backend)  # loads a lazily imported backend, or raises
        prim = PRIMITIVES[name]
    arrays = {}
    foreign = False  # an input wraps a user's numpy array without a copy (tensor_data.py)
    for key, t in inputs.items():
        if type(t) is not Tensor:
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"{name}: input {key!r} must be a Tensor, got {type(t).__name__} "
                    "(wrap it with tv.tensor)"
                )
            foreign = foreign or type(t) is Foreign
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
    rec = current()
    if rec is not None:
        if rec.observer is not None:  # a custom forward runs: note the tensors it reads
            rec.observer.saw(inputs)
        source = (rec.source or _user_frame()) if settings.record_source else None
        grad = prim.grad
        overrides = OVERRIDES.get()
        if overrides is not None:  # a gradient_override block open in this context
            grad = overrides.get(name, grad)
        for tape in rec.tapes:
            tape.record_node(prim, backend, inputs, outputs, attrs, grad, source)
        for bw in rec.backward:
            bw.record_node(prim, backend, inputs, outputs, attrs, grad, source)
    if tracer is not None:
        tracer.kernel(prim, backend, config, inputs, outputs, attrs, out)
    hook = anomaly_hook()
    if hook is not None:
        hook(name, inputs, outputs)
    return result


def bind(prim, inputs: dict, attrs: dict | None = None):
    """Run primitive ``prim`` on ``inputs`` (``{input name: Tensor}``) with ``attrs``: the
    door of the ops ``tv.define_op`` makes. A primitive is registered under its name, so
    this is ``run_kernel(prim.name, ...)``: one path (and the hot one pays no extra call)."""
    return run_kernel(prim.name, inputs, attrs)


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


def record(prim, inputs: dict, outputs, attrs=None, grad=None, saved=(), *, outer_only=False):
    """Record one call of ``prim`` made outside a kernel (its outputs computed by the
    caller: the custom-gradient builders, or a builder of one's own) on every active
    recorder; ``tv.record``.

    Args:
        prim: the ``Primitive`` the node is a call of.
        inputs: ``{input name: Tensor}``; outputs: the output Tensors.
        attrs: plain data about the call (shown by tapeviz).
        grad: the call's ``GradConfig`` (its VJP), or None: not differentiable.
        saved: ``(role, name, Tensor)`` triples, exactly what the VJP reads (role
            ``"input"``, ``"output"`` or ``"memory"``).
        outer_only: only on the tapes, not a running backward pass (a node made while a
            gradient runs, that only an outer tape, for higher order, should see).

    Returns:
        The nodes recorded, one per recorder.
    """
    attrs = {} if attrs is None else attrs
    rec = current()
    nodes = []
    outputs, saved = tuple(outputs), list(saved)
    if rec is not None:
        if rec.observer is not None:
            rec.observer.saw(inputs)
        source = _user_frame() if settings.record_source else None
        backend = get_backend()
        for tape in rec.tapes:
            nodes.append(
                tape.record_node(prim, backend, inputs, outputs, attrs, grad, source, saved)
            )
        if not outer_only:
            for bw in rec.backward:
                nodes.append(
                    bw.record_node(prim, backend, inputs, outputs, attrs, grad, source, saved)
                )
    hook = anomaly_hook()
    if hook is not None:
        hook(prim.name, inputs, outputs)
    return nodes


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
                # one per call site: which call on the line (a loop repeats it; two calls on
                # one line differ) and the columns of its expression
                at = f.f_lasti
                source = _SOURCES[key] = Source(
                    code.co_filename, f.f_lineno, code.co_name, at, call_columns(code, at)
                )
            return source
        f = f.f_back
    return None


_SOURCES: dict = {}  # (code, instruction offset) -> source
