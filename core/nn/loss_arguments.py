"""What the losses (``core.nn.losses``) share: their arguments read and checked, and the
reduction of per-example losses.

Predictions must be floating; labels are read as values (to check them) and, as a tensor,
in the predictions' dtype (float Tensor labels stay differentiable); ``reduction`` and
``label_smoothing`` are checked; ``weights`` are TensorFlow.js's per-example (or broadcast)
weights and "mean" then divides by their sum; ``class_targets`` turns integer or one-hot
labels into the (N, C) targets of a cross entropy.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..tensors.arrays import to_array
from ..tensors.tensor import Tensor
from ..tensors.tracing import traced

__all__ = [
    "predictions_tensor",
    "label_values",
    "label_tensor",
    "check_options",
    "example_weights",
    "reduce_losses",
    "weighted",
    "class_targets",
    "class_weights_tensor",
    "check_unit_interval",
]


def predictions_tensor(x, fn: str) -> Tensor:
    """The predictions as a floating Tensor (arrays and lists as float32); ``fn`` names the
    loss in errors."""
    if not isinstance(x, Tensor):
        x = Tensor(np.asarray(to_array(x, where=fn), dtype=np.float32))
    if x.dtype.kind != "f":
        raise TypeError(f"{fn}: predictions must be floating, got {x.dtype}")
    return x


def label_values(y, fn: str):
    """The labels' values (to check them); ``label_tensor`` gives what the loss computes with.
    Labels ``tv.jit`` traces stay a Tensor (their values belong to the call): the loss then
    computes with ops and checks values with ``check_values``."""
    if isinstance(y, Tensor):
        return y if traced(y) else y.numpy()
    return np.asarray(to_array(y, where=fn))


def label_tensor(labels, y: np.ndarray, like: Tensor) -> Tensor:
    """The labels as ``like``'s dtype and ``y``'s shape. Float labels that are a Tensor stay
    one (cast and reshaped with ops), so a gradient reaches them as in PyTorch (soft targets
    from a teacher, a symmetric MSE); anything else is a constant."""
    if isinstance(labels, Tensor) and labels.dtype.kind == "f":
        t = labels if labels.dtype == like.dtype else ops.cast(labels, like.dtype)
        return t if t.shape == y.shape else ops.reshape(t, y.shape)
    if isinstance(y, Tensor):  # traced labels (tv.jit): the same cast, as an op
        return y if y.dtype == like.dtype else ops.cast(y, like.dtype)
    return Tensor(y.astype(like.dtype, copy=False))


_REDUCTIONS = ("mean", "sum", "none")


def check_options(fn, reduction, label_smoothing=0.0):
    """Check ``reduction`` and ``label_smoothing``; returns the smoothing as a float."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    e = float(label_smoothing)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    return e


def example_weights(weights, shape, like: Tensor, fn: str) -> Tensor:
    """Per-example weights (TensorFlow.js's ``weights``): shape (N,) for a batch of N, or any
    shape that broadcasts against the losses' ``shape``; a Tensor stays one (differentiable)."""
    w = weights if isinstance(weights, Tensor) else Tensor(np.asarray(to_array(weights, where=fn)))
    if w.dtype != like.dtype:
        w = ops.cast(w, like.dtype)
    if w.ndim == 1 and len(shape) > 1 and w.shape[0] == shape[0] and w.shape != shape[-1:]:
        w = ops.reshape(w, (shape[0],) + (1,) * (len(shape) - 1))  # one weight per example
    try:
        np.broadcast_shapes(w.shape, shape)
    except ValueError:
        raise ValueError(
            f"{fn}: weights of shape {w.shape} do not broadcast against the losses' shape "
            f"{shape} (give one weight per example, shape ({shape[0] if shape else 1},))"
        ) from None
    return w


def reduce_losses(losses, reduction, denominator=None):
    """``losses`` (weighted already) reduced: "none" as they are, "sum", or "mean" = their sum
    over ``denominator`` (a tensor: the weights' sum) or their mean."""
    if reduction == "none":
        return losses
    total = ops.sum(losses)
    if reduction == "sum":
        return total
    if denominator is None:
        return ops.mean(losses)
    return total / denominator


def weighted(losses, weights, fn, reduction):
    """``losses`` times ``weights`` (if any), reduced; "mean" divides by the weights' sum."""
    if weights is None:
        return reduce_losses(losses, reduction)
    w = example_weights(weights, losses.shape, losses, fn)
    wl = losses * w
    return reduce_losses(wl, reduction, denominator=ops.sum(ops.broadcast_to(w, wl.shape)))


def class_targets(labels, logits_shape, dtype, fn: str) -> np.ndarray:
    """Integer labels (N,) or one-hot (N, C) -> a float (N, C) target array; checks both."""
    y = label_values(labels, fn)
    n, c = logits_shape[0], logits_shape[-1]
    if isinstance(y, Tensor) and y.dtype.kind in "iu" and y.shape == tuple(logits_shape[:-1]):
        return ops.one_hot(y, c, dtype)  # traced labels (tv.jit): OneHot checks the range
    if isinstance(y, Tensor) and y.dtype.kind == "f" and y.shape == tuple(logits_shape):
        return y if y.dtype == dtype else ops.cast(y, dtype)
    if y.dtype.kind in "iu" and y.shape == tuple(logits_shape[:-1]):
        if y.size and (y.min() < 0 or y.max() >= c):
            raise ValueError(
                f"{fn}: integer labels must be in [0, {c}), got values in [{y.min()}, {y.max()}]"
            )
        return np.eye(c, dtype=dtype)[y]
    if y.dtype.kind == "f" and y.shape == tuple(logits_shape):
        return y.astype(dtype, copy=False)
    raise ValueError(
        f"{fn}: labels must be integer class ids of shape {tuple(logits_shape[:-1])} or "
        f"one-hot floats of shape {tuple(logits_shape)}; got {y.dtype} labels of shape "
        f"{y.shape} for logits of shape {tuple(logits_shape)} (batch {n}, {c} classes)"
    )


def class_weights_tensor(class_weights, c, like, fn) -> Tensor:
    """A weight per class, shape ``(c,)``, in ``like``'s dtype (a Tensor stays one)."""
    cw = class_weights if isinstance(class_weights, Tensor) else Tensor(
        np.asarray(to_array(class_weights, where=fn))
    )  # fmt: skip
    if cw.shape != (c,):
        raise ValueError(
            f"{fn}: class_weights must have shape ({c},) (one per class), got {cw.shape}"
        )
    return cw if cw.dtype == like.dtype else ops.cast(cw, like.dtype)


def check_unit_interval(y: np.ndarray) -> None:
    """Binary cross entropy's labels must lie in [0, 1]."""
    if y.size and (y.min() < 0 or y.max() > 1):
        raise ValueError(
            f"binary_cross_entropy: labels must be numbers in [0, 1], got values in "
            f"[{y.min()}, {y.max()}]"
        )
