"""Shared helpers for ops: converting arguments and checking them, naming the op.

The lowest layer of the ops: user data becomes tensors here (``as_tensor``, ``from_data``:
a list holding tensors is stacked with kernels, so a tape records it), with the two ops that
conversion needs, ``cast`` and ``identity``. Every other ops module builds on this one."""

from __future__ import annotations

import numbers

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.arrays import CONVERTING, HoldsTensor, to_array
from ..tensors.foreign import Foreign
from ..tensors.kinds import Constant, Variable
from ..tensors.tensor import Tensor
from ..tensors.tracing import TRACER


def unchanged(x: Tensor) -> Tensor:
    """What an op returns when it would leave ``x`` as it is (a reshape to its own shape, a
    cast to its own dtype, ``np.copy``): ``x`` itself when it is an immutable Tensor, but a
    new tensor (an ``Identity`` node, so gradients flow) for a ``Variable``: ``assign``
    changes a variable, and a copy or a view taken before must not change with it (numpy's
    rule: a copy is a copy)."""
    if isinstance(x, Variable):
        return identity(x)
    return x


def cast(x, dtype) -> Tensor:
    """Convert to ``dtype``; differentiable between float types."""
    x = as_tensor(x, "cast")
    dtype = np.dtype(dtype)
    if dtype.kind not in "fiub":
        raise TypeError(f"cast: unsupported dtype {dtype}")
    if dtype == x.dtype:
        return unchanged(x)
    return run_kernel(K.CAST, {"x": x}, {"dtype": dtype, "src": x.dtype})


def identity(x) -> Tensor:
    """The same value as a new tensor (an ``Identity`` node: gradients flow through it)."""
    return run_kernel(K.IDENTITY, {"x": as_tensor(x, "identity")})


def from_data(data, dtype=None, where="tensor") -> Tensor:
    """A Tensor from user data; a list or tuple holding tensors is stacked with ops, so a
    tape records it (``tv.tensor([x, 3 * x])``, ``tv.mean([x, x + 2])``)."""
    if type(data) is not list and type(data) is not tuple:
        arr = to_array(data, dtype, where)
        return Foreign(arr) if arr is data else Tensor(arr)
    CONVERTING.on = True
    try:
        return Tensor(to_array(data, dtype, where))
    except HoldsTensor:
        pass
    finally:
        CONVERTING.on = False
    return _stack_nested(data, dtype, where)


def _stack_nested(data, dtype, where) -> Tensor:
    """Stack the items of ``data`` (tensors, numbers, nested lists) with kernels: each item
    reshaped to a leading axis of 1, then concatenated (the nodes ``tv.stack`` records)."""
    if not data:
        raise ValueError(f"{where}: cannot stack an empty list")
    items = [x if isinstance(x, Tensor) else from_data(x, None, where) for x in data]
    like = next((x for x in data if isinstance(x, Tensor)), items[0]).dtype
    items = [  # numbers take the tensors' dtype (weak typing); tensors promote
        x if isinstance(d, (Tensor, list, tuple)) else Tensor(to_array(d, like, where))
        for x, d in zip(items, data)
    ]
    common = np.result_type(*[x.dtype for x in items])
    items = [x if x.dtype == common else cast(x, common) for x in items]
    shapes = {x.shape for x in items}
    if len(shapes) > 1:
        raise ValueError(f"{where}: cannot stack tensors of different shapes {sorted(shapes)}")
    rows = {
        f"x{i}": run_kernel(K.RESHAPE, {"x": x}, {"shape": (1,) + x.shape, "input_shape": x.shape})
        for i, x in enumerate(items)
    }
    out = run_kernel(K.CONCAT, rows, {"axis": 0, "sizes": (1,) * len(items)})
    return out if dtype is None or out.dtype == np.dtype(dtype) else cast(out, dtype)


def as_tensor(x, op: str, like: Tensor | None = None) -> Tensor:
    """A Tensor from ``x``; a Python number takes ``like``'s dtype (weak typing, as JAX)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and type(x) in _PY_NUMBERS:
        return Constant(constant_array(x, like.dtype))
    if (
        like is not None
        and isinstance(x, (numbers.Number, np.bool_))
        and not isinstance(x, np.generic)
    ):
        return Tensor(np.asarray(x, dtype=_weak_dtype(x, like.dtype)))
    return from_data(x, where=op)  # a list holding tensors is stacked with ops


_PY_NUMBERS = (float, int, bool)
# 0-d read-only arrays of Python numbers by (type, value, dtype): `x * 0.9` in a loop makes
# one array, each op still gets its own Constant tensor (so graphs and tidy are unchanged)
_CONSTANTS: dict = {}


def constant_array(x, dtype) -> np.ndarray:
    key = (type(x), x, dtype)
    arr = _CONSTANTS.get(key)
    if arr is None:
        arr = np.array(x, _weak_dtype(x, dtype))
        # 0.0 == -0.0 and nan != nan: keep those out of the cache
        if x and x == x:
            arr.flags.writeable = False
            if len(_CONSTANTS) >= 4096:
                _CONSTANTS.clear()
            _CONSTANTS[key] = arr
    return arr


def _weak_dtype(x, dtype):
    """A Python number keeps the tensor's dtype; a float with an int tensor gives float32."""
    if isinstance(x, bool) or dtype.kind == "f":
        return dtype
    if isinstance(x, float):
        return np.dtype(np.float32)
    return dtype if dtype.kind in "iu" else np.dtype(np.int32)


def binary_args(a, b, op: str) -> tuple[Tensor, Tensor]:
    """Both as tensors of one dtype (numpy promotion), shapes broadcast-compatible.

    A Python number is weakly typed: ``int32 tensor * 0.5`` is float32, not float64.
    """
    weak = False
    if isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            b, weak = as_tensor(b, op, a), type(b) in _PY_NUMBERS
    elif isinstance(b, Tensor):
        a, weak = as_tensor(a, op, b), type(a) in _PY_NUMBERS
    else:
        a, b = as_tensor(a, op), as_tensor(b, op)
    pa, pb = a.peek(), b.peek()
    if pa is None or pb is None:
        a._array, b._array  # noqa: B018 - raises DisposedError naming the tensor
    da, db = pa.dtype, pb.dtype
    if da is not db and da != db:
        common = np.result_type(da, db)
        if weak and common.kind == "f":  # the number was a float, the tensor int or bool
            common = np.dtype(np.float32)
        a = a if da == common else cast(a, common)
        b = b if db == common else cast(b, common)
    sa, sb = pa.shape, pb.shape  # a cast keeps the shape
    if sa != sb:
        broadcast_shape(sa, sb, op)
    return a, b


def broadcast_shape(sa, sb, op: str) -> tuple[int, ...]:
    """numpy's broadcast of two shapes, or a ValueError naming the op."""
    if sa == sb or not sb:
        return sa
    if not sa:
        return sb
    long, short = (sa, sb) if len(sa) >= len(sb) else (sb, sa)
    n = len(long) - len(short)
    out = list(long)
    for i, d in enumerate(short):
        e = out[n + i]
        if d != e:
            if e == 1:
                out[n + i] = d
            elif d != 1:
                raise ValueError(
                    f"{op}: shapes {sa} and {sb} cannot be broadcast together (numpy rules: "
                    "trailing dimensions must match or be 1)"
                )
    return tuple(out)


def require_float(x: Tensor, op: str) -> None:
    if x.dtype.kind != "f":
        raise TypeError(
            f"{op}: expected a floating tensor (float32 or float64), got {x.dtype}; "
            f"cast it first, e.g. tv.cast(x, 'float32')"
        )


def norm_axis(axis, ndim: int, op: str):
    """Axis argument -> sorted tuple of non-negative axes (None stays None)."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for ax in axes:
        if not isinstance(ax, (int, np.integer)):
            raise TypeError(f"{op}: axis must be int or a tuple of ints, got {axis!r}")
        if not -ndim <= ax < max(ndim, 1):
            raise ValueError(f"{op}: axis {ax} is out of range for a tensor of rank {ndim}")
        out.append(int(ax) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def drawn(draw) -> Tensor:
    """A tensor of random values, ``draw()`` (a fresh array each time it is called). Under
    ``tv.jit`` the compiled program calls ``draw`` again on every call: fresh values, not
    the ones drawn while tracing."""
    t = Tensor(draw())
    tracer = TRACER.get()
    if tracer is not None:
        tracer.random(t, draw)
    return t
