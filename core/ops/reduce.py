"""Reductions: sum, mean, max, min, prod, logsumexp, softmax, log_softmax, var, std."""

from __future__ import annotations

import builtins

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.tensor import Tensor
from ..tensors.tracing import traced
from .arguments import as_tensor, cast, norm_axis, require_float
from .elementwise import abs, equal, exp, log, sqrt, stop_gradient, where
from .shape import reshape, squeeze


def _reduce(kernel: str, op: str):
    def fn(x, axis=None, keepdims: bool = False) -> Tensor:
        x = as_tensor(x, op)
        axes = norm_axis(axis, x.ndim, op)
        if kernel in (K.MAX, K.MIN) and x.size == 0:  # as numpy: an empty reduction fails
            if any(x.shape[a] == 0 for a in (range(x.ndim) if axes is None else axes)):
                raise ValueError(
                    f"{op}: cannot reduce a zero-size tensor of shape {x.shape} over an empty "
                    f"axis (axis={axis!r}): {op} has no identity"
                )
        if kernel in (K.SUM, K.PROD):
            x = _widen(x)
        attrs = {"axis": axes, "keepdims": bool(keepdims), "input_shape": x.shape}
        return run_kernel(kernel, {"x": x}, attrs)

    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"``{op}`` over ``axis`` (all axes when None), as numpy (kernel ``{kernel}``)."
    return fn


def _widen(x: Tensor) -> Tensor:
    """numpy's accumulator for sum/prod: bool and small integers widen to 64 bits, so
    ``sum`` of a mask counts and int8 sums do not wrap (a float tensor is unchanged)."""
    if x.dtype.kind not in "biu" or (x.dtype.kind != "b" and x.dtype.itemsize >= 8):
        return x
    return cast(x, "uint64" if x.dtype.kind == "u" else "int64")


sum = _reduce(K.SUM, "sum")  # noqa: A001 - numpy's name
max = _reduce(K.MAX, "max")  # noqa: A001
min = _reduce(K.MIN, "min")  # noqa: A001
prod = _reduce(K.PROD, "prod")
_EXTREME_TIES = (
    " Ties share the gradient evenly (autograd, PyTorch's ``amax``/``amin``); a NaN in a "
    "reduction makes that reduction's gradient NaN."
)
max.__doc__ += _EXTREME_TIES
min.__doc__ += _EXTREME_TIES
prod.__doc__ += (
    " The gradient and its own derivative are exact at zeros (the Hessian is symmetric)."
)


def _count(x: Tensor, axes) -> int:
    n = 1
    for ax in range(x.ndim) if axes is None else axes:
        n *= x.shape[ax]
    return n


def mean(x, axis=None, keepdims: bool = False) -> Tensor:
    """Mean over ``axis``: ``sum / n`` (a composite of ops). float16 is summed in float32
    and the mean cast back, as numpy does (a float16 sum of 10,000 thirties overflows)."""
    x = as_tensor(x, "mean")
    require_float(x, "mean")
    axes = norm_axis(axis, x.ndim, "mean")
    if x.dtype == np.float16:
        return cast(sum(cast(x, np.float32), axes, keepdims) / _count(x, axes), np.float16)
    return sum(x, axes, keepdims) / _count(x, axes)


def var(x, axis=None, keepdims: bool = False, ddof: int = 0) -> Tensor:
    """Variance over ``axis``: ``sum((x - mean)^2) / (n - ddof)`` (population for ddof=0)."""
    x = as_tensor(x, "var")
    axes = norm_axis(axis, x.ndim, "var")
    d = x - mean(x, axes, keepdims=True)
    # numpy and PyTorch divide by max(n - ddof, 0): inf or NaN, never a negative variance
    return sum(d * d, axes, keepdims) / builtins.max(_count(x, axes) - ddof, 0)


def std(x, axis=None, keepdims: bool = False, ddof: int = 0) -> Tensor:
    """Standard deviation over ``axis``: ``sqrt(var(x, axis, keepdims, ddof))``.

    Convention: where the spread is 0 (all equal, or one element) the gradient is 0, as in
    PyTorch (the derivative does not exist there; sqrt's would give 0 * inf = NaN).
    """
    return root_with_zero_subgradient(var(x, axis, keepdims, ddof), sqrt)


def root_with_zero_subgradient(v: Tensor, root) -> Tensor:
    """``root(v)`` (a root of a non-negative ``v``: sqrt, ``v ** (1/p)``) whose value and
    gradient are 0 where ``v == 0``: PyTorch's subgradient for ``std`` and ``norm``, where
    the root's own derivative would give 0 * inf = NaN."""
    if traced(v):  # tv.jit: the same choice made with ops (no value read while tracing)
        flat = equal(v, np.zeros((), v.dtype))
    else:
        flat = v.numpy() == 0
        if not flat.any():
            return root(v)
        flat = Tensor(np.asarray(flat))
    # the root of 1 where flat: its gradient there is finite, and the select sends it none
    out = root(where(flat, np.ones((), v.dtype), v))
    return where(flat, np.zeros((), v.dtype), out)


def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))``, stable: the max is subtracted first (and held constant).

    Convention: a row of all ``-inf`` gives ``-inf`` (and one with ``+inf`` gives ``+inf``);
    the gradient is ``exp(x - result)``, NaN for such rows, as in PyTorch. An empty
    reduction gives ``-inf`` (the log of an empty sum, as PyTorch) and an empty gradient.
    """
    x = as_tensor(x, "logsumexp")
    require_float(x, "logsumexp")
    axes = norm_axis(axis, x.ndim, "logsumexp")
    reduced = range(x.ndim) if axes is None else axes
    if any(x.shape[a] == 0 for a in reduced):  # an empty sum: log(0) = -inf (PyTorch)
        # -inf, still connected to x (an empty gradient) but through 0 * sum: log(0)'s
        # 1/0 would make every derivative through it NaN (0 * inf), second order included
        out = sum(x, axes, keepdims=True) * 0 + Tensor(np.array(-np.inf, x.dtype))
    else:
        m = stop_gradient(max(x, axes, keepdims=True))
        if traced(m):  # tv.jit: the same shift chosen with ops (no value read while tracing)
            inf = np.full((), np.inf, x.dtype)
            m = where(equal(abs(m), inf), np.zeros((), x.dtype), m)
        else:
            infinite = np.isinf(m.numpy())
            if infinite.any():  # shift by 0 there: x - m would be inf - inf = NaN
                m = where(Tensor(infinite), np.zeros((), x.dtype), m)
        out = log(sum(exp(x - m), axes, keepdims=True)) + m
    if keepdims:
        return out
    return squeeze(out, axes if axes is not None else tuple(range(x.ndim)))


def _softmax_like(kernel: str, op: str):
    def fn(x, axis: int = -1) -> Tensor:
        x = as_tensor(x, op)
        require_float(x, op)
        if x.ndim == 0:
            raise ValueError(f"{op}: expected a tensor of rank >= 1, got a scalar")
        (ax,) = norm_axis(axis, x.ndim, op)
        return run_kernel(kernel, {"x": x}, {"axis": ax})

    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"``{op}`` along ``axis`` (kernel ``{kernel}``)."
    return fn


softmax = _softmax_like(K.SOFTMAX, "softmax")
log_softmax = _softmax_like(K.LOG_SOFTMAX, "log_softmax")


def argmax(x, axis=None) -> Tensor:
    """Index of the maximum (not differentiable; returns int64)."""
    return Tensor(np.asarray(np.argmax(as_tensor(x, "argmax")._array, axis=axis)))


def argmin(x, axis=None) -> Tensor:
    return Tensor(np.asarray(np.argmin(as_tensor(x, "argmin")._array, axis=axis)))


def sum_to(x: Tensor, shape) -> Tensor:
    """Sum ``x`` down to ``shape`` (undo broadcasting): the one place gradients are reduced."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    kept = tuple(i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    if lead > 0 and not kept and x.shape[lead:] == shape:  # one Sum, no Reshape
        return sum(x, tuple(range(lead)))
    axes = tuple(range(lead)) + kept
    out = sum(x, axes, keepdims=True) if axes else x
    return reshape(out, shape)
