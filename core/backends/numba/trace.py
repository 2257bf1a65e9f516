"""Automatic differentiation of a numba-compilable function by tracing it through core ops.

``trace(f, x, batched)`` calls the Python function ``f`` with a ``Traced`` value
(``traced.py``) that numpy hands back to us (``__array_ufunc__`` / ``__array_function__``),
so array-level numpy code (arithmetic, ``np.exp``, ``np.tanh``, ``np.maximum``, ``np.where``,
slicing, reductions, ...) becomes core ops, which tapes differentiate. This module says what
each numpy ufunc and function becomes (``UFUNCS``, ``FUNCTIONS``). ``batched``: the leading
axis of ``x`` is a batch and ``f`` sees one example (as a vmap does). What cannot be traced
raises ``AutoDiffError`` naming the construct: loops over elements, in-place writes,
value-dependent control flow, unsupported numpy functions.
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ...ops.numpy_dispatch import UFUNC_OPS
from ...tensors.tensor import Tensor
from .traced import (
    FUNCTIONS,
    UFUNCS,
    AutoDiffError,
    Traced,
    align,
    as_tensor,
    as_traced,
    first_traced,
    rank,
    refuse,
    wrap,
)

__all__ = ["AutoDiffError", "Traced", "trace"]

# numpy's ufuncs become the ops numpy dispatch makes of them (one table: expm1 is expm1, not
# exp(x) - 1, which loses every digit near 0); matmul and divmod have their own rules here
_ELEMENTWISE = {u.__name__: op for u, op in UFUNC_OPS.items() if u.nout == 1 and u is not np.matmul}


def _elementwise(op):
    """A ufunc as its core op on the aligned inputs (batched operands broadcast per example)."""
    return lambda *inputs: wrap(first_traced(*inputs), op(*align(inputs)))


def matmul(a, b) -> Traced:
    """``a @ b`` per example, as a vmap does: vectors become a row / a column, the operands'
    example axes are lined up behind the batch axis (an unbatched operand gets a batch axis
    of 1), ``matmul`` broadcasts the rest, and the vector axes go again. (Elementwise
    alignment would pad a batched vector to a (1, k) matrix and add a spurious axis.)"""
    ra, rb = rank(a), rank(b)
    if ra == 0 or rb == 0:
        refuse(first_traced(a, b), "matmul of a 0-d array (numpy raises for it too)")
    ta, tb = _with_batch_axis(a, ra, -2), _with_batch_axis(b, rb, -1)
    nd = max(ta.ndim, tb.ndim)
    ta, tb = (ops.reshape(t, t.shape[:1] + (1,) * (nd - t.ndim) + t.shape[1:]) for t in (ta, tb))
    out = ops.matmul(ta, tb)
    batched = any(isinstance(v, Traced) and v.b for v in (a, b))
    drop = ([out.ndim - 2] if ra == 1 else []) + ([out.ndim - 1] if rb == 1 else [])
    drop += [] if batched else [0]
    out = ops.reshape(out, tuple(s for i, s in enumerate(out.shape) if i not in drop))
    return Traced(out, 1 if batched else 0, first_traced(a, b).where)


def _with_batch_axis(v, example_rank, vector_axis) -> Tensor:
    """``v`` as a tensor with a leading batch axis (1 when unbatched) and, when it is a
    vector, a unit axis making it a row (``vector_axis=-2``) or a column (-1)."""
    t = as_tensor(v) if isinstance(v, Traced) else Tensor(np.asarray(v))
    if not (isinstance(v, Traced) and v.b):
        t = ops.reshape(t, (1,) + t.shape)
    if example_rank == 1:
        t = ops.expand_dims(t, t.ndim - 1 if vector_axis == -2 else t.ndim)
    return t


UFUNCS.update({name: _elementwise(op) for name, op in _ELEMENTWISE.items()})
UFUNCS["matmul"] = matmul


def _method(name):
    return lambda x, *a, **k: getattr(as_traced(x), name)(*a, **k)


def _where(cond, a, b):
    return wrap(first_traced(cond, a, b), ops.where(*align((cond, a, b))))


def _like(value):
    def fn(x, *a, dtype=None, **k):
        x = as_traced(x)
        fill = a[0] if a else k.get("fill_value", value)
        return wrap(x, Tensor(np.full(x.t.shape, fill, dtype or x.dtype)))

    return fn


def _join(stack):
    def fn(arrays, axis=0):
        arrays = list(arrays)
        first = first_traced(*arrays)
        ax = int(axis) % (first.ndim + (1 if stack else 0)) + first.b
        joined = (ops.stack if stack else ops.concat)([as_tensor(v) for v in arrays], ax)
        return wrap(first, joined)

    return fn


def _example_axes(x, axis) -> list:
    if axis is None:
        return list(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    return [int(a) % x.ndim for a in axes]


def _flip(x, axis=None):
    x = as_traced(x)
    axes = _example_axes(x, axis)
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


def _expand_dims(x, axis):
    x = as_traced(x)
    ax = int(axis) % (x.ndim + 1)
    return x.reshape(x.shape[:ax] + (1,) + x.shape[ax:])


def _squeeze(x, axis=None):
    x = as_traced(x)
    if axis is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        axes = _example_axes(x, axis)
    return x.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))


def _dot(a, b) -> Traced:
    """``np.dot``: ``matmul`` for arrays of rank 1 and 2 (numpy's ``dot`` differs above)."""
    if rank(a) > 2 or rank(b) > 2:
        refuse(first_traced(a, b), "np.dot of an array of rank > 2 (use @ / np.matmul)")
    if rank(a) == 0 or rank(b) == 0:
        return wrap(first_traced(a, b), ops.mul(*align((a, b))))
    return matmul(a, b)


FUNCTIONS.update(
    {
        **{n: _method(n) for n in ("sum", "mean", "max", "min", "prod", "reshape", "transpose")},
        "amax": _method("max"),
        "amin": _method("min"),
        "ravel": _method("ravel"),
        "copy": _method("copy"),
        "where": _where,
        "clip": lambda x, lo, hi: as_traced(x).clip(lo, hi),
        "zeros_like": _like(0),
        "ones_like": _like(1),
        "full_like": _like(None),
        "concatenate": _join(stack=False),
        "stack": _join(stack=True),
        "flip": _flip,
        "expand_dims": _expand_dims,
        "squeeze": _squeeze,
        "dot": _dot,
    }
)


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
