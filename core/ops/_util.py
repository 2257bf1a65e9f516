"""Shared helpers for ops: converting arguments and checking them, naming the op."""

from __future__ import annotations

import numbers

import numpy as np

from ..tensor import Tensor, _to_array


def as_tensor(x, op: str, like: Tensor | None = None) -> Tensor:
    """A Tensor from ``x``; a Python number takes ``like``'s dtype (weak typing, as JAX)."""
    if isinstance(x, Tensor):
        return x
    if (
        like is not None
        and isinstance(x, (numbers.Number, np.bool_))
        and not isinstance(x, np.generic)
    ):
        return Tensor(np.asarray(x, dtype=_weak_dtype(x, like.dtype)))
    return Tensor(_to_array(x, where=op))


def _weak_dtype(x, dtype):
    if isinstance(x, bool) or dtype.kind == "f":
        return dtype
    if isinstance(x, float):
        return np.float32
    return dtype


def binary_args(a, b, op: str) -> tuple[Tensor, Tensor]:
    """Both as tensors of one dtype (numpy promotion), shapes broadcast-compatible."""
    if isinstance(a, Tensor):
        b = as_tensor(b, op, a)
    elif isinstance(b, Tensor):
        a = as_tensor(a, op, b)
    else:
        a, b = as_tensor(a, op), as_tensor(b, op)
    da, db = a.dtype, b.dtype
    if da != db:
        from .elementwise import cast

        common = np.result_type(da, db)
        a = a if da == common else cast(a, common)
        b = b if db == common else cast(b, common)
    broadcast_shape(a.shape, b.shape, op)
    return a, b


def broadcast_shape(sa, sb, op: str) -> tuple[int, ...]:
    """numpy's broadcast of two shapes, or a ValueError naming the op."""
    if sa == sb:
        return sa
    try:
        return np.broadcast_shapes(sa, sb)
    except ValueError:
        raise ValueError(
            f"{op}: shapes {sa} and {sb} cannot be broadcast together (numpy rules: trailing "
            "dimensions must match or be 1)"
        ) from None


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
