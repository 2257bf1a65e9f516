"""Losses: ``fn(labels, predictions) -> scalar`` (mean over the batch), TensorFlow.js order.

mse = mean((y - p)^2); softmax CE = mean(logsumexp(z) - z[label]) in one fused kernel;
binary CE from logits = mean(y softplus(-z) + (1 - y) softplus(z)) (= softplus(z) - z y, with
no cancellation and no kink: max(z, 0) - z y + log(1 + exp(-|z|)) is the same value, but its
pieces' derivatives at z = 0, relu'(0) = 0 and |z|'(0) = 0, belong to different sides).
"""

from __future__ import annotations

import numpy as np

from . import ops
from .ops.nn import softmax_cross_entropy_with_logits
from .tensor import Tensor, _to_array
from .tracing import check_values, traced

__all__ = [
    "mean_squared_error",
    "softmax_cross_entropy",
    "binary_cross_entropy",
    "get",
]


def _pred(x, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        x = Tensor(np.asarray(_to_array(x, where=fn), dtype=np.float32))
    if x.dtype.kind != "f":
        raise TypeError(f"{fn}: predictions must be floating, got {x.dtype}")
    return x


def _labels(y, fn: str):
    """The labels' values (to check them); ``_label_tensor`` gives what the loss computes with.
    Labels ``tv.jit`` traces stay a Tensor (their values belong to the call): the loss then
    computes with ops and checks values with ``check_values``."""
    if isinstance(y, Tensor):
        return y if traced(y) else y.numpy()
    return np.asarray(_to_array(y, where=fn))


def _label_tensor(labels, y: np.ndarray, like: Tensor) -> Tensor:
    """The labels as ``like``'s dtype and ``y``'s shape. Float labels that are a Tensor stay
    one (cast and reshaped with ops), so a gradient reaches them as in PyTorch (soft targets
    from a teacher, a symmetric MSE); anything else is a constant."""
    if isinstance(labels, Tensor) and labels.dtype.kind == "f":
        t = labels if labels.dtype == like.dtype else ops.cast(labels, like.dtype)
        return t if t.shape == y.shape else ops.reshape(t, y.shape)
    if isinstance(y, Tensor):  # traced labels (tv.jit): the same cast, as an op
        return y if y.dtype == like.dtype else ops.cast(y, like.dtype)
    return Tensor(y.astype(like.dtype, copy=False))


def mean_squared_error(labels, predictions) -> Tensor:
    """Mean of ``(labels - predictions)**2`` over every element.

    Example:
        >>> import tapeviz.core as core
        >>> core.losses.mean_squared_error([[1.0], [2.0]], core.tensor([[0.0], [4.0]])).item()
        2.5
    """
    p = _pred(predictions, "mean_squared_error")
    y = _labels(labels, "mean_squared_error")
    if y.shape != p.shape:
        if y.ndim == 1 and p.shape == (y.shape[0], 1):
            y = y[:, None]
        else:
            raise ValueError(
                f"mean_squared_error: labels have shape {y.shape} but predictions have shape "
                f"{p.shape}"
            )
    if y.dtype.kind not in "fiub":
        raise TypeError(f"mean_squared_error: labels must be numbers, got {y.dtype}")
    d = p - _label_tensor(labels, y, p)
    return ops.mean(d * d)


def class_targets(labels, logits_shape, dtype, fn: str) -> np.ndarray:
    """Integer labels (N,) or one-hot (N, C) -> a float (N, C) target array; checks both."""
    y = _labels(labels, fn)
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


def softmax_cross_entropy(labels, logits) -> Tensor:
    """Cross entropy of ``softmax(logits)`` against the labels, stable for large logits.

    Args:
        labels: integer class ids of shape (N,) or one-hot (or soft) floats of shape (N, C).
        logits: unnormalized scores of shape (N, C).

    Example:
        >>> import tapeviz.core as core
        >>> z = core.tensor([[1000.0, 0.0], [0.0, 1000.0]])
        >>> core.losses.softmax_cross_entropy([0, 0], z).item()  # (0 + 1000) / 2, no overflow
        500.0
    """
    z = _pred(logits, "softmax_cross_entropy")
    if z.ndim < 2:
        raise ValueError(
            f"softmax_cross_entropy: logits must have shape (batch, classes), got {z.shape}"
        )
    t = class_targets(labels, z.shape, z.dtype, "softmax_cross_entropy")
    if isinstance(labels, Tensor) and labels.dtype.kind == "f":  # soft labels: differentiable
        t = _label_tensor(labels, t, z)
    elif not isinstance(t, Tensor):
        t = Tensor(t)
    # one kernel (SoftmaxCrossEntropyWithLogits); its gradient is one kernel too
    return softmax_cross_entropy_with_logits(t, z)


def binary_cross_entropy(labels, predictions, from_logits: bool = False) -> Tensor:
    """Binary cross entropy for 0/1 labels; ``from_logits=True`` takes raw scores (stable).

    Example:
        >>> import tapeviz.core as core
        >>> round(core.losses.binary_cross_entropy([1.0], core.tensor([0.0]), True).item(), 4)
        0.6931
    """
    fn = "binary_cross_entropy"
    p = _pred(predictions, fn)
    y = _labels(labels, fn)
    if y.shape != p.shape:
        if y.ndim == 1 and p.shape == (y.shape[0], 1):
            y = y[:, None]
        else:
            raise ValueError(
                f"{fn}: labels have shape {y.shape} but predictions have shape {p.shape}"
            )
    if y.dtype.kind not in "fiub":
        raise ValueError(f"{fn}: labels must be numbers in [0, 1], got {y.dtype} {y.shape}")
    if isinstance(y, Tensor):  # traced labels (tv.jit): checked on every call
        check_values(_unit_interval, y)
    else:
        _unit_interval(y)
    yt = _label_tensor(labels, y, p)
    if from_logits:
        return ops.mean(yt * ops.softplus(-p) + (1 - yt) * ops.softplus(p))
    eps = 1e-7
    q = ops.clip(p, eps, 1 - eps)
    return -ops.mean(yt * ops.log(q) + (1 - yt) * ops.log(1 - q))


def _unit_interval(y: np.ndarray) -> None:
    if y.size and (y.min() < 0 or y.max() > 1):
        raise ValueError(
            f"binary_cross_entropy: labels must be numbers in [0, 1], got values in "
            f"[{y.min()}, {y.max()}]"
        )


def _bce_logits(labels, logits):
    return binary_cross_entropy(labels, logits, from_logits=True)


_bce_logits.__name__ = "binary_cross_entropy_from_logits"
_bce_logits.from_logits = True

_NAMES = {
    "mse": mean_squared_error,
    "mean_squared_error": mean_squared_error,
    "softmax_cross_entropy": softmax_cross_entropy,
    "binary_cross_entropy": binary_cross_entropy,
    "binary_cross_entropy_from_logits": _bce_logits,
}


def get(loss):
    """A loss function from a name (``"mse"``, ``"softmax_cross_entropy"``, ...) or callable."""
    if callable(loss):
        return loss
    fn = _NAMES.get(loss) if isinstance(loss, str) else None
    if fn is None:
        raise ValueError(
            f"losses.get: unknown loss {loss!r} (expected a callable or one of "
            f"{', '.join(sorted(_NAMES))})"
        )
    return fn
