"""numpy's own functions on tensors (NEP 13 ``__array_ufunc__``, NEP 18
``__array_function__``): ``np.exp(x)``, ``np.sum(x, axis=0)``, ``np.linalg.solve(a, b)`` run
the tapeviz op of the same name, so they record and differentiate.

A numpy function with no tapeviz op runs numpy on the plain values (an ``ndarray`` result)
only when no argument needs a gradient; when an active tape recorded or watches one of its
tensor arguments it raises ``NumpyDispatchError`` naming the function, never a silent constant.
Functions whose result carries no gradient (``np.shape``, ``np.argmax``, ``np.isnan``, ...)
run numpy in any case.

Example:
    >>> import numpy as np, tapeviz as tv
    >>> x = tv.tensor([0.0, 1.0])
    >>> tv.grad(lambda x: np.sum(np.exp(x)))(x).numpy().round(3)
    array([1.   , 2.718], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..tensors import recording
from ..tensors.tensor import Tensor
from .arguments import unchanged
from .creation import tensor as make_tensor

__all__ = ["NumpyDispatchError", "array_ufunc", "array_function", "supported"]


class NumpyDispatchError(TypeError):
    """A numpy function without a tapeviz op was called on a tensor that needs a gradient."""


def _f64(x):
    """numpy's float_power computes in float64 whatever the inputs."""
    if isinstance(x, Tensor):
        return x if x.dtype == np.float64 else o.cast(x, np.float64)
    return np.asarray(x, dtype=np.float64)


def _float_power(a, b):
    return o.pow(_f64(a), _f64(b))


def _true_divide(a, b):
    """``a / b`` as numpy: integers divide in float64 (tv.div's float32 would round them)."""
    if _integers((a, b)):
        return o.div(_f64(a), _f64(b))
    return o.div(a, b)


# numpy's ufuncs as ops: the one table (numba's CompiledLayer tracer reads it too)
UFUNC_OPS = {
    np.add: o.add, np.subtract: o.sub, np.multiply: o.mul, np.true_divide: _true_divide,
    np.power: o.pow, np.float_power: _float_power, np.negative: o.neg, np.absolute: o.abs,
    np.fabs: o.fabs, np.sign: o.sign, np.exp: o.exp, np.exp2: o.exp2, np.expm1: o.expm1,
    np.log: o.log, np.log2: o.log2, np.log10: o.log10, np.log1p: o.log1p, np.sqrt: o.sqrt,
    np.square: o.square, np.reciprocal: o.reciprocal, np.sin: o.sin, np.cos: o.cos,
    np.tan: o.tan, np.arcsin: o.arcsin, np.arccos: o.arccos, np.arctan: o.arctan,
    np.sinh: o.sinh, np.cosh: o.cosh, np.tanh: o.tanh, np.arcsinh: o.arcsinh,
    np.arccosh: o.arccosh, np.arctanh: o.arctanh, np.arctan2: o.arctan2, np.hypot: o.hypot,
    np.logaddexp: o.logaddexp, np.logaddexp2: o.logaddexp2, np.maximum: o.maximum,
    np.minimum: o.minimum, np.fmax: o.fmax, np.fmin: o.fmin, np.remainder: o.mod,
    np.floor: o.floor, np.ceil: o.ceil, np.rint: o.round, np.deg2rad: o.deg2rad,
    np.rad2deg: o.rad2deg, np.greater: o.greater, np.greater_equal: o.greater_equal,
    np.less: o.less, np.less_equal: o.less_equal, np.equal: o.equal,
    np.not_equal: o.not_equal, np.matmul: o.matmul, np.positive: unchanged,
    np.floor_divide: o.floor_divide, np.divmod: o.divmod, np.conjugate: lambda x: x,
    np.bitwise_and: o.bitwise_and, np.bitwise_or: o.bitwise_or, np.bitwise_xor: o.bitwise_xor,
    np.invert: o.invert, np.left_shift: o.left_shift, np.right_shift: o.right_shift,
    np.trunc: lambda x: o.where(o.greater_equal(x, 0), o.floor(x), o.ceil(x)),
}  # fmt: skip
_REDUCE = {np.add: o.sum, np.multiply: o.prod, np.maximum: o.max, np.minimum: o.min}
_ACCUMULATE = {np.add: o.cumsum, np.multiply: o.cumprod}
# results that carry no gradient: numpy runs on the values, also inside a tape
_CONSTANT_UFUNCS = {np.isnan, np.isinf, np.isfinite, np.signbit, np.logical_and,
                    np.logical_or, np.logical_not, np.logical_xor}  # fmt: skip


def _check_kwargs(name, kwargs, allowed=()):
    for k, v in kwargs.items():
        if k not in allowed and v is not np._NoValue and not (k == "where" and v is True):
            raise TypeError(f"numpy.{name} on tapeviz tensors: argument {k}={v!r} is not "
                            "supported (tensors are immutable; no out=, where=, initial=)")  # fmt: skip


def _dtype(out, dtype):
    return out if dtype is None else o.cast(out, dtype)


# integer in, integer out in numpy (no gradient to record; tapeviz's ops want floats)
_INT_EXACT = {np.floor, np.ceil, np.trunc, np.square, np.reciprocal}


def _integers(inputs):
    return all(np.asarray(_unwrap(v)).dtype.kind in "biu" for v in inputs)


def _integer_call(ufunc, inputs, kwargs):
    """``ufunc(*inputs)`` with an integer or bool tensor among the inputs, in numpy's dtypes:
    integer results (``np.floor(int)``, ``np.square(int)``) are numpy's own (no gradient);
    otherwise those tensors cast to the float type numpy computes in (``np.exp(int)`` and
    ``np.maximum(int, 0.5)`` are float64), then the tapeviz op."""
    name = ufunc.__name__
    if ufunc in _INT_EXACT and _integers(inputs):
        _check_kwargs(name, kwargs, ("casting", "order", "subok", "dtype"))
        return make_tensor(_numpy(ufunc, inputs, kwargs, f"numpy.{name}"))
    with np.errstate(all="ignore"):
        want = ufunc(*[np.ones((), np.asarray(_unwrap(v)).dtype) for v in inputs])
    want = (want[0] if isinstance(want, tuple) else want).dtype  # divmod: two results
    if want.kind == "f":
        inputs = [o.cast(v, want) if isinstance(v, Tensor) and v.dtype.kind in "biu" else v
                  for v in inputs]  # fmt: skip
    return _call(ufunc, inputs, kwargs)


def _call(ufunc, inputs, kwargs):
    dtype = kwargs.pop("dtype", None)
    _check_kwargs(ufunc.__name__, kwargs, ("casting", "order", "subok"))
    return _dtype(UFUNC_OPS[ufunc](*inputs), dtype)


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Tensor.__array_ufunc__``: a tapeviz op for ``ufunc.method(*inputs)``."""
    name = ufunc.__name__
    if method == "__call__" and ufunc in UFUNC_OPS:
        for v in inputs:  # a plain loop: every ufunc call passes here
            if isinstance(v, Tensor) and v._array.dtype.kind in "biu":
                return _integer_call(ufunc, inputs, kwargs)
        return _call(ufunc, inputs, kwargs)
    if method in ("reduce", "accumulate") and ufunc in (
        _REDUCE if method == "reduce" else _ACCUMULATE
    ):
        table = _REDUCE if method == "reduce" else _ACCUMULATE
        axis, dtype = kwargs.pop("axis", 0), kwargs.pop("dtype", None)
        keep = {"keepdims": kwargs.pop("keepdims", False)} if method == "reduce" else {}
        _check_kwargs(f"{name}.{method}", kwargs)
        return _dtype(table[ufunc](inputs[0], axis, **keep), dtype)
    label = name if method == "__call__" else f"{name}.{method}"
    if method == "at":  # numpy's ufunc.at writes even into a read-only array
        raise TypeError(_IN_PLACE.format(f"numpy.{label}"))
    if ufunc in _CONSTANT_UFUNCS:
        return _numpy(getattr(ufunc, method), inputs, kwargs, f"numpy.{label}")
    return _fallback(f"numpy.{label}", getattr(ufunc, method), inputs, kwargs)


def array_function(func, types, args, kwargs):
    """``Tensor.__array_function__``: the tapeviz op for a numpy function, or the fallback."""
    impl = _FUNCTIONS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    if func in _CONSTANT_FUNCTIONS:
        return _numpy(func, args, kwargs, _qualname(func))
    return _fallback(_qualname(func), func, args, kwargs)


def supported() -> list[str]:
    """The numpy functions and ufuncs that dispatch to tapeviz ops."""
    return sorted({_qualname(f) for f in _FUNCTIONS} | {f"numpy.{u.__name__}" for u in UFUNC_OPS})


def _qualname(func) -> str:
    module = getattr(func, "__module__", "numpy") or "numpy"
    module = "numpy.linalg" if "linalg" in module else "numpy"
    return f"{module}.{getattr(func, '__name__', repr(func))}"


def _unwrap(x):
    if isinstance(x, Tensor):  # read-only: numpy's in-place functions must not mutate a tensor
        view = x._array.view()
        view.flags.writeable = False
        return view
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _tensors(x):
    if isinstance(x, Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _tensors(v)


_IN_PLACE = ("{} on tapeviz tensors: it writes into a tensor in place (out=, ufunc.at, "
             "copyto, fill_diagonal, put, ...), and tensors are immutable; build a new tensor "
             "with tapeviz ops (tv.where, tv.concat, ...) instead")  # fmt: skip


def _numpy(func, args, kwargs, name=None):
    try:
        return func(*_unwrap(list(args)), **{k: _unwrap(v) for k, v in kwargs.items()})
    except ValueError as e:
        if "read-only" not in str(e):
            raise
        raise TypeError(_IN_PLACE.format(name or func)) from e


def _fallback(name, func, args, kwargs):
    tracked = [t for t in _tensors((args, kwargs)) if recording.tracks(t)]
    if tracked:
        raise NumpyDispatchError(
            f"{name} has no tapeviz op, and its argument {tracked[0]._label()} (shape "
            f"{tracked[0].shape}) is recorded by an active tape: numpy's result would be a "
            "constant cut off from the gradient. Use tapeviz ops (tv.supported_numpy() lists "
            "the numpy functions that dispatch), or pass x.numpy() if a constant is what "
            "you mean"
        )
    return _numpy(func, args, kwargs, name)


from .numpy_functions import CONSTANT_FUNCTIONS as _CONSTANT_FUNCTIONS  # noqa: E402
from .numpy_functions import FUNCTIONS as _FUNCTIONS  # noqa: E402
