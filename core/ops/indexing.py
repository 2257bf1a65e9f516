"""numpy's index-valued and boolean functions: ``any``, ``all``, ``argsort``,
``argpartition``, ``nonzero``, ``searchsorted`` (results without a gradient: bool or int64),
and the gathers ``take``, ``take_along_axis``, ``compress`` (one indexing op, so the gradient
reaches the gathered elements; indices are constants).
"""

from __future__ import annotations

import numpy as np

from ..tensors.tensor import Tensor
from .arguments import as_tensor, norm_axis
from .elementwise import equal, greater, not_equal
from .order import ravel, take_along
from .reduce import sum as _sum
from .shape import broadcast_to, getitem


def _indices(indices, op: str) -> np.ndarray:
    idx = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu" and not (idx.size == 0 and idx.dtype.kind == "f"):
        raise TypeError(f"{op}: indices must be integers, got {idx.dtype}")
    return idx.astype(np.intp, copy=False)


def any(a, axis=None, keepdims=False) -> Tensor:  # noqa: A001 - numpy's name
    """Whether any element is nonzero (NaN is nonzero), as ``numpy.any``: a bool tensor; on
    a size-0 tensor False. No gradient."""
    a = as_tensor(a, "any")
    return greater(_sum(not_equal(a, 0), axis, keepdims), 0)


def all(a, axis=None, keepdims=False) -> Tensor:  # noqa: A001 - numpy's name
    """Whether every element is nonzero (NaN is nonzero), as ``numpy.all``: a bool tensor;
    on a size-0 tensor True. No gradient."""
    a = as_tensor(a, "all")
    return equal(_sum(equal(a, 0), axis, keepdims), 0)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None) -> Tensor:
    """Indices that sort ``a`` along ``axis`` (None: flattened), as ``numpy.argsort``; int64,
    no gradient (``tv.sort`` moves the values with their gradients)."""
    a = as_tensor(a, "argsort")
    return Tensor(np.asarray(np.argsort(a._array, axis, kind=kind, order=order, stable=stable)))


def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> Tensor:
    """Indices that partition ``a`` around ``kth``, as ``numpy.argpartition``; int64."""
    a = as_tensor(a, "argpartition")
    return Tensor(np.asarray(np.argpartition(a._array, kth, axis, kind, order)))


def nonzero(a) -> tuple[Tensor, ...]:
    """The indices of nonzero elements, one int64 tensor per axis, as ``numpy.nonzero``."""
    a = as_tensor(a, "nonzero")
    if a.ndim == 0:
        raise ValueError("nonzero: a 0-d tensor has no indices (numpy: use atleast_1d first)")
    return tuple(Tensor(i) for i in np.nonzero(a._array))


def searchsorted(a, v, side="left", sorter=None) -> Tensor:
    """Where ``v`` would be inserted in sorted 1-D ``a``, as ``numpy.searchsorted``; int64."""
    a = as_tensor(a, "searchsorted")
    values = v._array if isinstance(v, Tensor) else v
    s = sorter._array if isinstance(sorter, Tensor) else sorter
    return Tensor(np.asarray(np.searchsorted(a._array, values, side, s)))


def take(a, indices, axis=None, out=None, mode="raise") -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None), as
    ``numpy.take``; ``mode`` 'raise' (negative indices count from the end), 'wrap' or 'clip'.
    The gradient scatter-adds into the taken places (a repeated index gets each share)."""
    if out is not None:
        raise TypeError("numpy.take on tapeviz tensors: out= is not supported (immutable)")
    a = as_tensor(a, "take")
    if axis is None:
        a, ax = ravel(a), 0
    else:
        (ax,) = norm_axis(axis, a.ndim, "take")
    idx = _indices(indices, "take")
    n = a.shape[ax]
    if mode == "wrap":
        idx = idx % n if n else idx
    elif mode == "clip":
        idx = np.clip(idx, 0, max(n - 1, 0))
    elif mode != "raise":
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if idx.size and n == 0:
        raise IndexError(f"take: cannot take from an empty axis {ax} of shape {a.shape}")
    return getitem(a, (slice(None),) * ax + (idx,))


def take_along_axis(arr, indices, axis=-1) -> Tensor:
    """``numpy.take_along_axis``: ``arr`` gathered by ``indices`` (same rank, broadcast on the
    other axes) along ``axis`` (None: the flattened array); the gradient follows each value."""
    arr = as_tensor(arr, "take_along_axis")
    idx = _indices(indices, "take_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(
                f"take_along_axis: with axis=None the indices must be 1-D, got {idx.shape}"
            )
        arr, ax = ravel(arr), 0
    else:
        (ax,) = norm_axis(axis, arr.ndim, "take_along_axis")
    if idx.ndim != arr.ndim:
        raise ValueError(
            f"take_along_axis: indices of rank {idx.ndim} do not match the array's rank "
            f"{arr.ndim} (shape {arr.shape})"
        )
    try:
        shape = np.broadcast_shapes(
            tuple(1 if i == ax else d for i, d in enumerate(arr.shape)),
            tuple(1 if i == ax else d for i, d in enumerate(idx.shape)),
        )
    except ValueError:
        raise ValueError(
            f"take_along_axis: indices of shape {idx.shape} do not broadcast against the "
            f"array's shape {arr.shape} outside axis {ax}"
        ) from None
    idx = np.broadcast_to(idx, shape[:ax] + (idx.shape[ax],) + shape[ax + 1 :])
    full = shape[:ax] + (arr.shape[ax],) + shape[ax + 1 :]
    if arr.shape != full:  # a size-1 axis of arr meets longer indices: numpy broadcasts arr
        arr = broadcast_to(arr, full)
    return take_along(arr, idx, ax)


def compress(condition, a, axis=None, out=None) -> Tensor:
    """The slices of ``a`` along ``axis`` (flattened when None) where the 1-D ``condition``
    is true, as ``numpy.compress``; gradient to the kept slices."""
    if out is not None:
        raise TypeError("numpy.compress on tapeviz tensors: out= is not supported (immutable)")
    cond = condition._array if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {cond.shape}")
    return take(a, np.flatnonzero(cond), axis)
