"""The ``__array_function__`` table: numpy function -> tapeviz op, through small adapters
that take numpy's signature (``np.sum(a, axis, dtype, out, keepdims, ...)``) and reject the
arguments tensors cannot honour (``out=``, ``where=``) with an error naming the function."""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..tensors.tensor import Tensor
from . import linalg as la
from .arguments import as_tensor
from .creation import linspace_tensors
from .order import split_equal

_NO = np._NoValue


def _check(name, **extra):
    for k, v in extra.items():
        if v is not None and v is not _NO and not (k == "where" and v is True):
            raise TypeError(f"numpy.{name} on tapeviz tensors: argument {k}={v!r} is not "
                            "supported (tensors are immutable: no out=, where=, initial=)")  # fmt: skip


def _keep(k):
    return False if k is _NO else bool(k)


def _cast(t, dtype):
    return t if dtype is None else o.cast(t, dtype)


def _reduction(op, name, has_dtype=True):
    def fn(a, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
        _check(name, out=out, initial=initial, where=where)
        return _cast(op(a, axis, _keep(keepdims)), dtype)

    def fn_nodtype(a, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
        return fn(a, axis, None, out, keepdims, initial, where)

    return fn if has_dtype else fn_nodtype


def _moment(op, name):
    def fn(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, *, where=_NO, mean=_NO,
           correction=_NO):  # fmt: skip
        _check(name, out=out, where=where, mean=mean)
        ddof = ddof if correction is _NO else correction
        return _cast(op(_floating(a, dtype, name), axis, _keep(keepdims), ddof), dtype)

    return fn


def _floating(a, dtype, name):
    """numpy averages integers and masks in float64 (or the ``dtype=`` asked for)."""
    a = as_tensor(a, f"numpy.{name}")
    if a.dtype.kind in "biu":
        return o.cast(a, np.float64 if dtype is None else dtype)
    return a


def _mean(a, axis=None, dtype=None, out=None, keepdims=_NO, *, where=_NO):
    _check("mean", out=out, where=where)
    return _cast(o.mean(_floating(a, dtype, "mean"), axis, _keep(keepdims)), dtype)


def _join(op, name):
    def fn(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
        _check(name, out=out)
        if axis is None:
            arrays, axis = [o.ravel(a) for a in arrays], 0
        return _cast(op(list(arrays), axis), dtype)

    return fn


def _stack_along(axis, least, name):
    def fn(tup, *, dtype=None, casting="same_kind"):
        ts = [least(t) for t in tup]
        ax = 0 if name == "hstack" and ts[0].ndim == 1 else axis
        return _cast(o.concat(ts, ax), dtype)

    return fn


def _reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise TypeError(f"numpy.reshape on tapeviz tensors: only order='C', got {order!r}")
    return o.reshape(a, shape if shape is not None else newshape)


def _clip(a, a_min=_NO, a_max=_NO, out=None, *, min=_NO, max=_NO, **kw):  # noqa: A002
    _check("clip", out=out)
    lo, hi = (min if a_min is _NO else a_min), (max if a_max is _NO else a_max)
    return o.clip(a, None if lo is _NO else lo, None if hi is _NO else hi)


def _pad(array, pad_width, mode="constant", **kwargs):
    if mode != "constant":
        raise TypeError(f"numpy.pad on tapeviz tensors: only mode='constant', got {mode!r}")
    a = as_tensor(array, "numpy.pad")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
    return o.pad(a, widths.tolist(), kwargs.get("constant_values", 0))


def _where(condition, x=_NO, y=_NO, /):
    if x is _NO and y is _NO:  # the indices of nonzero entries: no gradient
        return np.where(condition._array if isinstance(condition, Tensor) else condition)
    condition = as_tensor(condition, "numpy.where")
    # numpy's result dtype (np.where(bool_tensor, x, np.nan) is float64), not the weak
    # Python-number rule of tapeviz's own tv.where (float32 there)
    want = np.result_type(*[v.dtype if isinstance(v, Tensor) else v if np.isscalar(v)
                            else np.asarray(v) for v in (x, y)])  # fmt: skip
    x, y = (o.cast(v, want) if isinstance(v, Tensor) and v.dtype != want else v for v in (x, y))
    if want.kind == "f":
        x, y = (v if isinstance(v, Tensor) else as_tensor(np.asarray(v, want), "numpy.where")
                for v in (x, y))  # fmt: skip
    return o.where(condition if condition.dtype == bool else o.cast(condition, bool), x, y)


def _split(ary, indices_or_sections, axis=0):
    return split_equal(ary, indices_or_sections, axis, "split")


def _expand_dims(a, axis):
    out = as_tensor(a, "numpy.expand_dims")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    for ax in sorted(ax % (out.ndim + len(axes)) for ax in axes):
        out = o.expand_dims(out, ax)
    return out


def _round(a, decimals=0, out=None):
    _check("round", out=out)
    return o.round(a, decimals)


def _no_out(op, name):
    def fn(*args, out=None, **kwargs):
        _check(name, out=out)
        return op(*args, **kwargs)

    return fn


def _matrices(x, name):
    x = as_tensor(x, f"numpy.{name}")
    if x.ndim < 2:
        raise ValueError(f"numpy.{name}: expected an array of matrices (ndim >= 2), got {x.shape}")
    return x


def _pinv(a, rcond=None, hermitian=False, *, rtol=_NO):
    return la.pinv(a, rcond if rtol is _NO else rtol)


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):  # fmt: skip
    return linspace_tensors(start, stop, num, endpoint, retstep, dtype, axis)


FUNCTIONS = {
    np.sum: _reduction(o.sum, "sum"),
    np.prod: _reduction(o.prod, "prod"),
    np.max: _reduction(o.max, "max", False),
    np.min: _reduction(o.min, "min", False),
    np.amax: _reduction(o.max, "amax", False),
    np.amin: _reduction(o.min, "amin", False),
    np.mean: _mean,
    np.var: _moment(o.var, "var"),
    np.std: _moment(o.std, "std"),
    np.cumsum: _no_out(o.cumsum, "cumsum"),
    np.cumprod: _no_out(o.cumprod, "cumprod"),
    np.concatenate: _join(o.concat, "concatenate"),
    np.stack: _join(o.stack, "stack"),
    np.vstack: _stack_along(0, o.atleast_2d, "vstack"),
    np.hstack: _stack_along(1, o.atleast_1d, "hstack"),
    np.dstack: _stack_along(2, o.atleast_3d, "dstack"),
    np.reshape: _reshape,
    np.transpose: lambda a, axes=None: o.transpose(a, axes),
    np.ravel: o.ravel,
    np.squeeze: lambda a, axis=None: o.squeeze(a, axis),
    np.expand_dims: _expand_dims,
    np.broadcast_to: lambda array, shape, subok=False: o.broadcast_to(array, shape),
    np.tile: o.tile,
    np.pad: _pad,
    np.clip: _clip,
    np.where: _where,
    np.copy: lambda a, order="K", subok=False: o.identity(a),  # a copy is a new tensor
    np.round: _round,
    np.around: _round,
    np.sinc: o.sinc,
    np.fix: lambda x, out=None: _check("fix", out=out) or np.trunc(as_tensor(x, "numpy.fix")),
    np.nan_to_num: o.nan_to_num,
    np.dot: _no_out(o.dot, "dot"),
    np.einsum: _no_out(o.einsum, "einsum"),
    np.trace: _no_out(o.trace, "trace"),
    np.split: _split,
    np.take: o.take,
    np.linspace: _linspace,
    np.take_along_axis: o.take_along_axis,
    np.compress: o.compress,
    np.linalg.norm: la.norm,
    np.linalg.pinv: _pinv,
}  # fmt: skip
for _name in (
    "tensordot inner outer kron cross diag diagonal tril triu repeat roll flip fliplr flipud "
    "rot90 swapaxes moveaxis atleast_1d atleast_2d atleast_3d array_split hsplit vsplit dsplit "
    "sort partition diff"
).split():
    FUNCTIONS[getattr(np, _name)] = getattr(o, _name)
for _name in "inv det slogdet solve cholesky eigh eigvalsh eig svd qr matrix_power".split():
    FUNCTIONS[getattr(np.linalg, _name)] = getattr(la, _name)

# numpy 2's array-API spellings of the same ops (absent from older numpy)
_ARRAY_API = {
    "matrix_transpose": lambda x, /: o.swapaxes(_matrices(x, "matrix_transpose"), -1, -2),
    "astype": lambda x, dtype, /, *, copy=True, device=None: o.cast(x, dtype),
    "linalg.matmul": lambda x1, x2, /: o.matmul(x1, x2),
    "linalg.matrix_transpose": lambda x, /: o.swapaxes(_matrices(x, "matrix_transpose"), -1, -2),
    "linalg.trace": lambda x, /, *, offset=0, dtype=None: o.trace(
        _matrices(x, "linalg.trace"), offset, -2, -1, dtype
    ),
    "linalg.diagonal": lambda x, /, *, offset=0: o.diagonal(
        _matrices(x, "linalg.diagonal"), offset, -2, -1
    ),
    "linalg.vector_norm": la.vector_norm,
    "linalg.matrix_norm": la.matrix_norm,
}
for _name, _fn in _ARRAY_API.items():
    _owner, _, _attr = _name.rpartition(".")
    _func = getattr(np.linalg if _owner else np, _attr, None)
    if _func is not None:
        FUNCTIONS[_func] = _fn

# results without a gradient: numpy runs on the values (also inside a tape)
CONSTANT_FUNCTIONS = {
    getattr(np, n)
    for n in (
        "shape ndim size argmax argmin argsort argpartition argwhere nonzero flatnonzero "
        "count_nonzero searchsorted allclose isclose array_equal array_equiv any all "
        "zeros_like ones_like empty_like full_like result_type iscomplexobj isrealobj"
    ).split()
    if hasattr(np, n)
}
