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
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ValueError(f"matmul: operands must have rank >= 1, got shapes {sa} and {sb}")
    a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
    sa2, sb2 = a2.shape, b2.shape
    if sa2[-1] != sb2[-2]:
        raise ValueError(f"matmul: inner dimensions differ: {sa} @ {sb} ({sa2[-1]} != {sb2[-2]})")
    try:
        batch = ()
        if len(sa2) > 2 or len(sb2) > 2:
            batch = np.broadcast_shapes(sa2[:-2], sb2[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: batch dimensions {a2.shape[:-2]} and {b2.shape[:-2]} do not broadcast"
        ) from None
    out = run_kernel(K.MATMUL, {"a": a2, "b": b2})
    if len(sa) == 1 or len(sb) == 1:
        shape = batch + (() if len(sa) == 1 else (sa2[-2],)) + (() if len(sb) == 1 else (sb2[-1],))
        out = reshape(out, shape)
    return out


def _promote(a, b):
    a, b = as_tensor(a, "matmul"), as_tensor(b, "matmul")
    da, db = a.dtype, b.dtype
    if da is not db and da != db:
        from .elementwise import cast

        common = np.result_type(da, db)
        a, b = cast(a, common), cast(b, common)
    if a.dtype.kind == "b":
        raise TypeError("matmul: bool operands are not supported")
    return a, b


def dot(a, b) -> Tensor:
    return matmul(a, b)


__all__ = ["matmul", "dot"]
