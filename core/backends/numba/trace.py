"""Automatic differentiation of a numba-compilable function by tracing it through core ops.

``trace(f, x, batched)`` calls the Python function ``f`` with a ``Traced`` value that numpy
hands back to us (``__array_ufunc__`` / ``__array_function__``), so array-level numpy code
(arithmetic, ``np.exp``, ``np.tanh``, ``np.maximum``, ``np.where``, slicing, reductions, ...)
becomes core ops, which tapes differentiate. ``batched``: the leading axis of ``x`` is a batch
and ``f`` sees one example (axes, indices and shapes are shifted past the batch axis, as a
vmap does). What cannot be traced raises ``AutoDiffError`` naming the construct: loops over
elements, in-place writes, value-dependent control flow, unsupported numpy functions.
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ...custom.compiled_layer import AutoDiffError
from ...tensor import Tensor

__all__ = ["AutoDiffError", "Traced", "trace"]


class Traced:
    """A traced array: a core Tensor plus whether its leading axis is a batch axis."""

    __slots__ = ("t", "b", "where")
    __array_priority__ = 1000

    def __init__(self, t: Tensor, b: int, where: str):
        self.t, self.b, self.where = t, b, where

    # --- what f may ask about the array -----------------------------------------------
    shape = property(lambda self: self.t.shape[self.b :])
    ndim = property(lambda self: self.t.ndim - self.b)
    size = property(lambda self: int(np.prod(self.shape)))
    dtype = property(lambda self: self.t.dtype)
    T = property(lambda self: self.transpose())

    def __len__(self):
        return self.shape[0]

    def _fail(self, construct: str):
        raise AutoDiffError(
            f"{self.where}: cannot differentiate automatically: {construct}; pass an explicit "
            "gradient=... (a function (x, dy) or (x, dy, y)) or gradient=None"
        )

    def __iter__(self):
        self._fail("a loop over the elements of an array (`for v in x`)")

    def __bool__(self):
        self._fail("Python control flow on array values (`if`/`while`/`and` on an element)")

    def __float__(self):
        self._fail("a traced value converted to a number (float(...) or an element loop)")

    __int__ = __index__ = __float__

    def __array__(self, dtype=None, copy=None):
        self._fail(
            "a traced value written into a numpy array (an in-place write such as "
            "`out[i] = ...` into np.empty/np.zeros, or np.asarray)"
        )

    def __setitem__(self, key, value):
        self._fail("an in-place write `x[...] = ...`")

    # --- helpers ------------------------------------------------------------------------
    def _wrap(self, t):
        return Traced(t, self.b, self.where) if isinstance(t, Tensor) else t

    def _axes(self, axis):
        if axis is None:
            return tuple(range(self.b, self.t.ndim)) if self.b else None
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        return tuple(int(a) % self.ndim + self.b for a in axes)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, Traced) for k in key):
            self._fail("indexing with a traced array (value-dependent shape)")
        return self._wrap(ops.getitem(self.t, (slice(None),) * self.b + key))

    # --- methods --------------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False):
        return self._wrap(ops.sum(self.t, self._axes(axis), keepdims))

    def mean(self, axis=None, keepdims=False):
        return self._wrap(ops.mean(self.t, self._axes(axis), keepdims))

    def max(self, axis=None, keepdims=False):
        return self._wrap(ops.max(self.t, self._axes(axis), keepdims))

    def min(self, axis=None, keepdims=False):
        return self._wrap(ops.min(self.t, self._axes(axis), keepdims))

    def prod(self, axis=None, keepdims=False):
        return self._wrap(ops.prod(self.t, self._axes(axis), keepdims))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return self._wrap(ops.reshape(self.t, self.t.shape[: self.b] + tuple(shape)))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        axes = tuple(reversed(range(self.ndim))) if not axes else tuple(axes)
        perm = tuple(range(self.b)) + tuple(a % self.ndim + self.b for a in axes)
        return self._wrap(ops.transpose(self.t, perm))

    def copy(self):
        return self

    def astype(self, dtype):
        if np.dtype(dtype).kind != "f":
            self._fail(f"a cast to {np.dtype(dtype)} (not a float type)")
        return self._wrap(ops.cast(self.t, dtype))

    def clip(self, lo, hi):
        return _clip(self, lo, hi)

    # --- numpy protocols ----------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        name = ufunc.__name__
        if method != "__call__":
            self._fail(f"np.{name}.{method} (ufunc methods are not supported)")
        if out is not None:
            self._fail(f"np.{name}(..., out=...) (an in-place write)")
        fn = _UFUNCS.get(name)
        if fn is None or kwargs:
            self._fail(f"np.{name} (not supported by automatic differentiation)")
        if name == "matmul":
            return _matmul(*inputs)
        return self._wrap(fn(*_align(inputs)))

    def __array_function__(self, func, types, args, kwargs):
        fn = _FUNCTIONS.get(func.__name__)
        if fn is None:
            self._fail(f"np.{func.__name__} (not supported by automatic differentiation)")
        return fn(*args, **kwargs)


def _binary_method(name, reflected=False):
    ufunc = getattr(np, name)

    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        return self.__array_ufunc__(ufunc, "__call__", a, b)

    return method


for _dunder, _name in (
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("truediv", "true_divide"),
    ("pow", "power"),
    ("matmul", "matmul"),
):
    setattr(Traced, f"__{_dunder}__", _binary_method(_name))
    setattr(Traced, f"__r{_dunder}__", _binary_method(_name, reflected=True))
for _dunder, _name in (("gt", "greater"), ("ge", "greater_equal"), ("lt", "less")):
    setattr(Traced, f"__{_dunder}__", _binary_method(_name))
Traced.__le__ = _binary_method("less_equal")
Traced.__eq__ = _binary_method("equal")
Traced.__ne__ = _binary_method("not_equal")
Traced.__hash__ = object.__hash__
Traced.__neg__ = lambda self: self._wrap(ops.neg(self.t))
Traced.__pos__ = lambda self: self
Traced.__abs__ = lambda self: self._wrap(ops.abs(self.t))


def _tensor(v):
    if isinstance(v, Traced):
        return v.t
    if isinstance(v, np.ndarray):
        return Tensor(v)
    return v  # a Python or numpy number: the op types it weakly


def _align(values) -> list:
    """Tensors for ``values``; batched ones of lower example rank get axes inserted after
    the batch axis, so examples broadcast against each other as numpy would (vmap)."""
    nd = max(v.ndim if isinstance(v, Traced) else np.ndim(v) for v in values)
    out = []
    for v in values:
        if isinstance(v, Traced) and v.b and v.ndim < nd:
            shape = v.t.shape[:1] + (1,) * (nd - v.ndim) + v.shape
            out.append(ops.reshape(v.t, shape))
        else:
            out.append(_tensor(v))
    return out


_UFUNCS = {
    "add": ops.add,
    "subtract": ops.sub,
    "multiply": ops.mul,
    "true_divide": ops.div,
    "divide": ops.div,
    "power": ops.pow,
    "matmul": ops.matmul,
    "maximum": ops.maximum,
    "minimum": ops.minimum,
    "greater": ops.greater,
    "greater_equal": ops.greater_equal,
    "less": ops.less,
    "less_equal": ops.less_equal,
    "equal": ops.equal,
    "not_equal": ops.not_equal,
    "negative": ops.neg,
    "positive": lambda x: x,
    "absolute": ops.abs,
    "sign": ops.sign,
    "exp": ops.exp,
    "expm1": lambda x: ops.exp(x) - 1,
    "log": ops.log,
    "log1p": ops.log1p,
    "sqrt": ops.sqrt,
    "square": ops.square,
    "reciprocal": ops.reciprocal,
    "sin": ops.sin,
    "cos": ops.cos,
    "tan": ops.tan,
    "tanh": ops.tanh,
}


def _method(name):
    return lambda x, *a, **k: getattr(_as_traced(x), name)(*a, **k)


def _as_traced(x) -> Traced:
    if not isinstance(x, Traced):
        raise AutoDiffError(f"automatic differentiation expected a traced array, got {x!r}")
    return x


def _where(cond, a, b):
    first = next(v for v in (cond, a, b) if isinstance(v, Traced))
    return first._wrap(ops.where(*_align((cond, a, b))))


def _clip(x, lo, hi):
    t = x.t
    if lo is not None:
        t = ops.maximum(t, _tensor(lo))
    if hi is not None:
        t = ops.minimum(t, _tensor(hi))
    return x._wrap(t)


def _like(value):
    def fn(x, *a, dtype=None, **k):
        x = _as_traced(x)
        fill = a[0] if a else k.get("fill_value", value)
        return x._wrap(Tensor(np.full(x.t.shape, fill, dtype or x.dtype)))

    return fn


def _join(stack):
    def fn(arrays, axis=0):
        arrays = list(arrays)
        first = next(v for v in arrays if isinstance(v, Traced))
        ax = int(axis) % (first.ndim + (1 if stack else 0)) + first.b
        joined = (ops.stack if stack else ops.concat)([_tensor(v) for v in arrays], ax)
        return first._wrap(joined)

    return fn


def _example_axes(x, axis) -> list:
    if axis is None:
        return list(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    return [int(a) % x.ndim for a in axes]


def _flip(x, axis=None):
    x = _as_traced(x)
    axes = _example_axes(x, axis)
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


def _expand_dims(x, axis):
    x = _as_traced(x)
    ax = int(axis) % (x.ndim + 1)
    return x.reshape(x.shape[:ax] + (1,) + x.shape[ax:])


def _squeeze(x, axis=None):
    x = _as_traced(x)
    if axis is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        axes = _example_axes(x, axis)
    return x.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))


_FUNCTIONS = {
    **{n: _method(n) for n in ("sum", "mean", "max", "min", "prod", "reshape", "transpose")},
    "amax": _method("max"),
    "amin": _method("min"),
    "ravel": _method("ravel"),
    "copy": _method("copy"),
    "where": _where,
    "clip": lambda x, lo, hi: _clip(_as_traced(x), lo, hi),
    "zeros_like": _like(0),
    "ones_like": _like(1),
    "full_like": _like(None),
    "concatenate": _join(stack=False),
    "stack": _join(stack=True),
    "flip": _flip,
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "dot": lambda a, b: _dot(a, b),
}


def _rank(v) -> int:
    return v.ndim if isinstance(v, Traced) else np.ndim(v)


def _matmul(a, b) -> Traced:
    """``a @ b`` per example, as a vmap does: vectors become a row / a column, the operands'
    example axes are lined up behind the batch axis (an unbatched operand gets a batch axis
    of 1), ``matmul`` broadcasts the rest, and the vector axes go again. (Elementwise
    alignment would pad a batched vector to a (1, k) matrix and add a spurious axis.)"""
    ra, rb = _rank(a), _rank(b)
    if ra == 0 or rb == 0:
        _where_traced(a, b)._fail("matmul of a 0-d array (numpy raises for it too)")
    ta, tb = _with_batch_axis(a, ra, -2), _with_batch_axis(b, rb, -1)
    nd = max(ta.ndim, tb.ndim)
    ta, tb = (ops.reshape(t, t.shape[:1] + (1,) * (nd - t.ndim) + t.shape[1:]) for t in (ta, tb))
    out = ops.matmul(ta, tb)
    batched = any(isinstance(v, Traced) and v.b for v in (a, b))
    drop = ([out.ndim - 2] if ra == 1 else []) + ([out.ndim - 1] if rb == 1 else [])
    drop += [] if batched else [0]
    out = ops.reshape(out, tuple(s for i, s in enumerate(out.shape) if i not in drop))
    return Traced(out, 1 if batched else 0, _where_traced(a, b).where)


def _with_batch_axis(v, rank, vector_axis) -> Tensor:
    """``v`` as a tensor with a leading batch axis (1 when unbatched) and, when it is a
    vector, a unit axis making it a row (``vector_axis=-2``) or a column (-1)."""
    t = _tensor(v) if isinstance(v, Traced) else Tensor(np.asarray(v))
    if not (isinstance(v, Traced) and v.b):
        t = ops.reshape(t, (1,) + t.shape)
    if rank == 1:
        t = ops.expand_dims(t, t.ndim - 1 if vector_axis == -2 else t.ndim)
    return t


def _dot(a, b) -> Traced:
    """``np.dot``: ``matmul`` for arrays of rank 1 and 2 (numpy's ``dot`` differs above)."""
    if _rank(a) > 2 or _rank(b) > 2:
        _where_traced(a, b)._fail("np.dot of an array of rank > 2 (use @ / np.matmul)")
    if _rank(a) == 0 or _rank(b) == 0:
        return _where_traced(a, b)._wrap(ops.mul(*_align((a, b))))
    return _matmul(a, b)


def _where_traced(*values) -> Traced:
    return next(v for v in values if isinstance(v, Traced))


def trace(f, x: Tensor, batched: bool, where: str) -> Tensor:
    """Run the Python function ``f`` on ``x`` as core ops; returns the output Tensor.

    Args:
        f: a function of one array (numpy code; a numba dispatcher's ``py_func``).
        x: the input tensor (a tape records the ops if one is active).
        batched: ``x``'s leading axis is a batch; ``f`` sees one example.
        where: how errors name the function.

    Raises:
        AutoDiffError: naming the construct that cannot be differentiated.
    """
    try:
        out = f(Traced(x, 1 if batched else 0, where))
    except AutoDiffError:
        raise
    except Exception as e:  # numba-only constructs, numpy refusing a traced value, ...
        raise AutoDiffError(
            f"{where}: cannot differentiate automatically: tracing it through core ops failed "
            f"with {type(e).__name__}: {e}; pass an explicit gradient=..."
        ) from e
    if isinstance(out, Traced):
        return out.t
    if isinstance(out, (np.ndarray, np.generic, int, float)):
        raise AutoDiffError(
            f"{where}: cannot differentiate automatically: the output does not depend on the "
            "input through traceable numpy operations; pass an explicit gradient=..."
        )
    raise AutoDiffError(
        f"{where}: cannot differentiate automatically: expected one array out, got "
        f"{type(out).__name__}"
    )
