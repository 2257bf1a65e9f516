"""matmul: batched, broadcasting over leading dimensions, numpy's 1-D rules."""

from __future__ import annotations

import numpy as np

from .. import kernel_names as K
from ..engine import run_kernel
from ..tensor import Tensor
from ._util import as_tensor


def matmul(a, b) -> Tensor:
    """Matrix product as ``numpy.matmul`` (1-D operands are promoted, then squeezed)."""
    from .shape import reshape

    a, b = _promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: operands must have rank >= 1, got shapes {a.shape} and {b.shape}"
        )
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(
            f"matmul: inner dimensions differ: {a.shape} @ {b.shape} "
            f"({a2.shape[-1]} != {b2.shape[-2]})"
        )
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: batch dimensions {a2.shape[:-2]} and {b2.shape[:-2]} do not broadcast"
        ) from None
    out = run_kernel(K.MATMUL, {"a": a2, "b": b2})
    if a.ndim == 1 or b.ndim == 1:
        shape = (
            batch
            + (() if a.ndim == 1 else (a2.shape[-2],))
            + (() if b.ndim == 1 else (b2.shape[-1],))
        )
        out = reshape(out, shape)
    return out


def _promote(a, b):
    a, b = as_tensor(a, "matmul"), as_tensor(b, "matmul")
    if a.dtype != b.dtype:
        from .elementwise import cast

        common = np.result_type(a.dtype, b.dtype)
        a, b = cast(a, common), cast(b, common)
    if a.dtype.kind == "b":
        raise TypeError("matmul: bool operands are not supported")
    return a, b


def dot(a, b) -> Tensor:
    return matmul(a, b)


__all__ = ["matmul", "dot"]
