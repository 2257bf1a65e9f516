"""matmul: batched, broadcasting over leading dimensions, numpy's 1-D rules; and the fused
dense layer ``fused_matmul`` (``act(a @ b + bias)`` in one kernel)."""

from __future__ import annotations

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.kinds import Constant, Variable
from ..tensors.tensor import Tensor
from .arguments import as_tensor, cast
from .shape import reshape

_TENSORS = frozenset((Tensor, Variable, Constant))  # exact types fused_matmul's fast path takes


def matmul(a, b) -> Tensor:
    """Matrix product as ``numpy.matmul``. Matrix @ vector and vector @ matrix are one
    kernel; other 1-D operands are promoted, then squeezed (reshapes around the kernel)."""
    a, b = _promote(a, b)
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ValueError(f"matmul: operands must have rank >= 1, got shapes {sa} and {sb}")
    if len(sa) + len(sb) == 3:  # matrix @ vector or vector @ matrix: one kernel, no reshapes
        if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
            raise ValueError(f"matmul: inner dimensions differ: {sa} @ {sb}")
        return run_kernel(K.MATMUL, {"a": a, "b": b})
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
        common = np.result_type(da, db)
        a, b = cast(a, common), cast(b, common)
    if a.dtype.kind == "b":
        raise TypeError("matmul: bool operands are not supported")
    return a, b


FUSED_ACTIVATIONS = ("linear", "relu", "tanh", "sigmoid")
_FUSED_ATTRS: dict = {}  # one shared attrs dict per (activation, transpose_a, transpose_b)


def fused_matmul(
    a, b, bias=None, activation: str = "linear", transpose_a=False, transpose_b=False
) -> Tensor:
    """``act(op(a) @ op(b) + bias)`` in one kernel (``_FusedMatMul``, TensorFlow.js's
    ``tf.fused.matMul``): rank-2 ``a`` and ``b``, ``op`` transposes when asked, ``bias`` of
    shape ``(n,)``, ``activation`` one of ``FUSED_ACTIVATIONS``. One tape node per layer.

    Example:
        >>> import tapeviz as tv
        >>> from tapeviz.core.ops.matrix import fused_matmul
        >>> fused_matmul(tv.ones((2, 3)), tv.ones((3, 4)), tv.ones(4), "relu").numpy()[0]
        array([4., 4., 4., 4.], dtype=float32)
    """
    d = a.peek() if type(a) in _TENSORS else None
    e = b.peek() if type(b) in _TENSORS else None
    if d is None or e is None or d.dtype is not e.dtype or d.dtype.kind != "f":
        a, b = _promote(a, b)  # the fast path above: float tensors of one dtype
        d, e = a.peek(), b.peek()
    sa, sb = d.shape, e.shape
    if len(sa) != 2 or len(sb) != 2:
        raise ValueError(f"fused_matmul: expected rank-2 operands, got shapes {sa} and {sb}")
    k, n = (sa[0] if transpose_a else sa[1]), (sb[0] if transpose_b else sb[1])
    if k != (sb[1] if transpose_b else sb[0]):
        raise ValueError(f"fused_matmul: inner dimensions differ: {sa} @ {sb} (transposes "
                         f"{transpose_a}, {transpose_b})")  # fmt: skip
    attrs = _FUSED_ATTRS.get((activation, bool(transpose_a), bool(transpose_b)))
    if attrs is None:
        if activation not in FUSED_ACTIVATIONS:
            raise ValueError(
                f"fused_matmul: activation must be one of {FUSED_ACTIVATIONS}, got {activation!r}"
            )
        attrs = {"activation": activation, "transpose_a": bool(transpose_a),
                 "transpose_b": bool(transpose_b)}  # fmt: skip
        _FUSED_ATTRS[(activation, bool(transpose_a), bool(transpose_b))] = attrs
    if bias is None:
        return run_kernel(K.FUSED_MATMUL, {"a": a, "b": b}, attrs)
    bias = as_tensor(bias, "fused_matmul")
    c = bias._array
    if c.shape != (n,):
        raise ValueError(f"fused_matmul: bias must have shape ({n},), got {c.shape}")
    if c.dtype is not d.dtype and c.dtype != d.dtype:
        bias = cast(bias, a.dtype)
    return run_kernel(K.FUSED_MATMUL, {"a": a, "b": b, "bias": bias}, attrs)
