"""``Traced``: the array a traced function sees (``core.backends.numba.trace``).

It holds a core Tensor and whether its leading axis is a batch axis (``f`` then sees one
example: shapes, axes and indices are shifted past it, as a vmap does). It answers what numpy
code asks of an array (``shape``, ``ndim``, ``x.sum(axis)``, ``x[1:]``, operators) with core
ops, and refuses, with ``AutoDiffError`` naming the construct, what cannot be traced: loops
over elements, in-place writes, value-dependent control flow, conversion to a number.

numpy's ufuncs and functions on a traced array look up ``UFUNCS`` and ``FUNCTIONS`` by name;
``trace.py`` fills both (it says what each numpy name becomes in core ops).
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ...registry.validation import AutoDiffError
from ...tensors.tensor import Tensor

__all__ = [
    "AutoDiffError",
    "Traced",
    "UFUNCS",
    "FUNCTIONS",
    "as_tensor",
    "align",
    "as_traced",
    "first_traced",
    "rank",
    "refuse",
    "wrap",
]

#: numpy ufunc name -> function of the ufunc's inputs returning a Traced (filled by trace.py)
UFUNCS: dict = {}
#: numpy function name -> function of numpy's arguments (filled by trace.py)
FUNCTIONS: dict = {}


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
        t = self.t
        if lo is not None:
            t = ops.maximum(t, as_tensor(lo))
        if hi is not None:
            t = ops.minimum(t, as_tensor(hi))
        return self._wrap(t)

    # --- numpy protocols ----------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        name = ufunc.__name__
        if method != "__call__":
            self._fail(f"np.{name}.{method} (ufunc methods are not supported)")
        if out is not None:
            self._fail(f"np.{name}(..., out=...) (an in-place write)")
        fn = UFUNCS.get(name)
        if fn is None or kwargs:
            self._fail(f"np.{name} (not supported by automatic differentiation)")
        return fn(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        fn = FUNCTIONS.get(func.__name__)
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


def as_tensor(v):
    """The core value of ``v``: a traced array's tensor, an ndarray as a Tensor, a number as is."""
    if isinstance(v, Traced):
        return v.t
    if isinstance(v, np.ndarray):
        return Tensor(v)
    return v  # a Python or numpy number: the op types it weakly


def align(values) -> list:
    """Tensors for ``values``; batched ones of lower example rank get axes inserted after
    the batch axis, so examples broadcast against each other as numpy would (vmap)."""
    nd = max(v.ndim if isinstance(v, Traced) else np.ndim(v) for v in values)
    out = []
    for v in values:
        if isinstance(v, Traced) and v.b and v.ndim < nd:
            shape = v.t.shape[:1] + (1,) * (nd - v.ndim) + v.shape
            out.append(ops.reshape(v.t, shape))
        else:
            out.append(as_tensor(v))
    return out


def as_traced(x) -> Traced:
    """``x`` itself when it is a traced array; else raise ``AutoDiffError``."""
    if not isinstance(x, Traced):
        raise AutoDiffError(f"automatic differentiation expected a traced array, got {x!r}")
    return x


def first_traced(*values) -> Traced:
    """The first traced array among ``values`` (numpy hands us calls with at least one)."""
    return next(v for v in values if isinstance(v, Traced))


def rank(v) -> int:
    """The example rank of a traced array (batch axis excluded), or ``np.ndim(v)``."""
    return v.ndim if isinstance(v, Traced) else np.ndim(v)


def refuse(v: Traced, construct: str):
    """Raise ``AutoDiffError``: ``construct`` cannot be differentiated (names ``v``'s function)."""
    v._fail(construct)


def wrap(v: Traced, t):
    """``t`` as a traced array batched like ``v`` (a non-Tensor ``t`` as is)."""
    return v._wrap(t)
