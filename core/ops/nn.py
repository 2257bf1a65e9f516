"""Neural-network ops in the TensorFlow.js layout: NHWC inputs, HWIO filters."""

from __future__ import annotations

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.tensor import Tensor
from .arguments import as_tensor, drawn, require_float, unchanged


def _pair(v, name: str, op: str) -> tuple[int, int]:
    t = (v, v) if isinstance(v, (int, np.integer)) else tuple(v)
    if len(t) != 2 or any(int(s) < 1 for s in t):
        raise ValueError(f"{op}: {name} must be a positive int or a pair, got {v!r}")
    return int(t[0]), int(t[1])


def conv_pads(in_hw, k_hw, strides, padding, op: str):
    """TensorFlow's "valid"/"same" padding -> ((top, bottom), (left, right))."""
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        pads = []
        for size, k, s in zip(in_hw, k_hw, strides):
            out = -(-size // s)
            total = builtins_max((out - 1) * s + k - size, 0)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    raise ValueError(f"{op}: padding must be 'valid' or 'same', got {padding!r}")


def builtins_max(a, b):
    return a if a > b else b


def _out_size(size, k, s, pad, op):
    out = (size + pad[0] + pad[1] - k) // s + 1
    if out < 1:
        raise ValueError(f"{op}: window {k} does not fit input size {size} with padding {pad}")
    return out


def conv2d(x, filters, strides=1, padding: str = "valid") -> Tensor:
    """2-D convolution (cross-correlation). ``x``: (N, H, W, C); ``filters``: (KH, KW, C, O).

    Example:
        >>> import tapeviz as tv, numpy as np
        >>> x = tv.tensor(np.ones((1, 4, 4, 1), np.float32))
        >>> tv.conv2d(x, tv.tensor(np.ones((3, 3, 1, 2), np.float32))).shape
        (1, 2, 2, 2)
    """
    x, w = as_tensor(x, "conv2d"), as_tensor(filters, "conv2d")
    require_float(x, "conv2d")
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError(
            f"conv2d: expected x of rank 4 (N, H, W, C) and filters of rank 4 (KH, KW, C, O), "
            f"got {x.shape} and {w.shape}"
        )
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"conv2d: x has {x.shape[3]} channels but the filters expect {w.shape[2]}")
    if x.dtype != w.dtype:
        raise TypeError(f"conv2d: x is {x.dtype} but filters are {w.dtype}")
    strides = _pair(strides, "strides", "conv2d")
    pads = conv_pads(x.shape[1:3], w.shape[:2], strides, padding, "conv2d")
    for d in range(2):
        _out_size(x.shape[1 + d], w.shape[d], strides[d], pads[d], "conv2d")
    return run_kernel(K.CONV2D, {"x": x, "filter": w}, {"strides": strides, "pads": pads})


def _pool(kernel, op):
    def fn(x, pool_size=2, strides=None, padding: str = "valid") -> Tensor:
        x = as_tensor(x, op)
        require_float(x, op)
        if x.ndim != 4:
            raise ValueError(f"{op}: expected x of rank 4 (N, H, W, C), got shape {x.shape}")
        ksize = _pair(pool_size, "pool_size", op)
        strides = ksize if strides is None else _pair(strides, "strides", op)
        pads = conv_pads(x.shape[1:3], ksize, strides, padding, op)
        for d in range(2):
            _out_size(x.shape[1 + d], ksize[d], strides[d], pads[d], op)
        return run_kernel(kernel, {"x": x}, {"ksize": ksize, "strides": strides, "pads": pads})

    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"{op} over NHWC input (window ``pool_size``, default stride = window)."
    return fn


max_pool2d = _pool(K.MAX_POOL, "max_pool2d")
avg_pool2d = _pool(K.AVG_POOL, "avg_pool2d")


def dropout(x, rate: float, seed: int | None = None, training: bool = True) -> Tensor:
    """Zero each element with probability ``rate`` and scale the rest by ``1/(1-rate)``."""
    return dropout_drawing(x, rate, lambda: seed, training)


def dropout_drawing(x, rate: float, next_seed, training: bool = True) -> Tensor:
    """``dropout`` whose mask is drawn with the seed ``next_seed()`` returns (``nn.Dropout``:
    its generator's next seed), asked each time a mask is drawn, under ``tv.jit`` too."""
    x = as_tensor(x, "dropout")
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    if not training or rate == 0:
        return unchanged(x)
    shape, dtype = x.shape, x.dtype

    def draw():
        keep = np.random.default_rng(next_seed()).random(shape) >= rate
        return (keep / (1 - rate)).astype(dtype)

    return x * drawn(draw)


def softmax_cross_entropy_with_logits(labels, logits) -> Tensor:
    """Mean over rows of ``-sum(labels * log_softmax(logits), -1)`` in one kernel
    (``SoftmaxCrossEntropyWithLogits``), stable for large logits. ``labels`` are float
    targets of the logits' shape (one-hot, soft, or rows of any sum: the gradient does not
    assume rows sum to 1); the result is a scalar.

    Example:
        >>> import tapeviz as tv
        >>> from tapeviz.core.ops.nn import softmax_cross_entropy_with_logits as sce
        >>> round(sce(tv.tensor([[0.0, 1.0]]), tv.tensor([[0.0, 0.0]])).item(), 4)
        0.6931
    """
    z = as_tensor(logits, "softmax_cross_entropy_with_logits")
    t = as_tensor(labels, "softmax_cross_entropy_with_logits")
    _check_logits(z, t, "softmax_cross_entropy_with_logits")
    return run_kernel(K.SOFTMAX_CROSS_ENTROPY, {"logits": z, "labels": t})


def softmax_cross_entropy_grad(dy, logits, labels) -> Tensor:
    """The loss's gradient for the logits, ``(softmax(logits) * T - labels) * dy / n``, in one
    kernel (``SoftmaxCrossEntropyGrad``); ``dy`` is a scalar, ``n`` the number of rows, ``T``
    each row's label sum (1 for one-hot or probability labels; other labels are allowed)."""
    dy = as_tensor(dy, "softmax_cross_entropy_grad")
    z = as_tensor(logits, "softmax_cross_entropy_grad")
    t = as_tensor(labels, "softmax_cross_entropy_grad")
    _check_logits(z, t, "softmax_cross_entropy_grad")
    if dy.shape != () or dy.dtype != z.dtype:
        raise ValueError(
            f"softmax_cross_entropy_grad: dy must be a scalar of {z.dtype}, got {dy.shape} "
            f"{dy.dtype}"
        )
    return run_kernel(K.SOFTMAX_CROSS_ENTROPY_GRAD, {"dy": dy, "logits": z, "labels": t})


def _check_logits(z: Tensor, t: Tensor, op: str) -> None:
    require_float(z, op)
    if z.ndim == 0 or t.shape != z.shape or t.dtype != z.dtype:
        raise ValueError(
            f"{op}: expected logits of rank >= 1 and labels of the same shape and dtype, got "
            f"logits {z.shape} {z.dtype} and labels {t.shape} {t.dtype}"
        )
