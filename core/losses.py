"""Losses: ``fn(labels, predictions) -> scalar`` (mean over the batch), TensorFlow.js order.

mse = mean((y - p)^2); softmax CE = mean(logsumexp(z) - z[label]) in one fused kernel;
binary CE from logits = mean(y softplus(-z) + (1 - y) softplus(z)) (= softplus(z) - z y, with
no cancellation and no kink: max(z, 0) - z y + log(1 + exp(-|z|)) is the same value, but its
pieces' derivatives at z = 0, relu'(0) = 0 and |z|'(0) = 0, belong to different sides).

Options (as PyTorch, checked against it in float64 in tests/core/test_losses_options.py):
``reduction="mean" | "sum" | "none"`` ("none": one loss per example, per element for mse
and binary CE); ``class_weights=`` (softmax CE; PyTorch's ``weight``: a weight per class, and
with integer labels the mean divides by the weights of the examples' classes, PyTorch's
weighted mean; with float (one-hot or soft) labels by the number of examples, as PyTorch
for probability targets); ``label_smoothing=`` (softmax CE: targets ``(1 - e) t + e / C``,
PyTorch's definition; binary CE: ``(1 - e) y + e / 2``, TensorFlow.js's, PyTorch has none).
``weights=`` stays TensorFlow.js's per-example (or per-element, broadcast) weights: they
multiply the losses, and "mean" then divides by the weights' sum (TensorFlow.js's MEAN).
"""

from __future__ import annotations

import numpy as np

from . import ops
from .arrays import to_array
from .ops.nn import softmax_cross_entropy_with_logits
from .tensor import Tensor
from .tracing import check_values, traced

__all__ = [
    "mean_squared_error",
    "softmax_cross_entropy",
    "binary_cross_entropy",
    "get",
]


def _pred(x, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        x = Tensor(np.asarray(to_array(x, where=fn), dtype=np.float32))
    if x.dtype.kind != "f":
        raise TypeError(f"{fn}: predictions must be floating, got {x.dtype}")
    return x


def _labels(y, fn: str):
    """The labels' values (to check them); ``_label_tensor`` gives what the loss computes with.
    Labels ``tv.jit`` traces stay a Tensor (their values belong to the call): the loss then
    computes with ops and checks values with ``check_values``."""
    if isinstance(y, Tensor):
        return y if traced(y) else y.numpy()
    return np.asarray(to_array(y, where=fn))


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


_REDUCTIONS = ("mean", "sum", "none")


def _check_options(fn, reduction, label_smoothing=0.0):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    e = float(label_smoothing)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    return e


def _weights(weights, shape, like: Tensor, fn: str) -> Tensor:
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


def _reduce(losses, reduction, weights=None, denominator=None):
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


def _weighted(losses, weights, fn, reduction):
    if weights is None:
        return _reduce(losses, reduction)
    w = _weights(weights, losses.shape, losses, fn)
    wl = losses * w
    return _reduce(wl, reduction, denominator=ops.sum(ops.broadcast_to(w, wl.shape)))


def mean_squared_error(labels, predictions, *, reduction="mean", weights=None) -> Tensor:
    """Mean of ``(labels - predictions)**2`` over every element (``reduction``: "sum" their
    sum, "none" each; ``weights``: per-example weights, see the module docstring).

    Example:
        >>> import tapeviz as tv
        >>> tv.losses.mean_squared_error([[1.0], [2.0]], tv.tensor([[0.0], [4.0]])).item()
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
    _check_options("mean_squared_error", reduction)
    d = p - _label_tensor(labels, y, p)
    return _weighted(d * d, weights, "mean_squared_error", reduction)


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


def softmax_cross_entropy(labels, logits, *, reduction="mean", class_weights=None,
                          label_smoothing=0.0, weights=None) -> Tensor:  # fmt: skip
    """Cross entropy of ``softmax(logits)`` against the labels, stable for large logits.

    Args:
        labels: integer class ids of shape (N,) or one-hot (or soft) floats of shape (N, C).
        logits: unnormalized scores of shape (N, C).
        reduction: "mean" (default), "sum" or "none" (one loss per example), as PyTorch.
        class_weights: a weight per class, shape (C,) (PyTorch's ``weight``): with integer
            labels the mean divides by the sum of the examples' class weights.
        label_smoothing: e in [0, 1]: targets ``(1 - e) t + e / C`` (PyTorch's definition).
        weights: per-example weights (TensorFlow.js's), shape (N,); "mean" divides by
            their sum (times the class weights', when both are given).

    Example:
        >>> import tapeviz as tv
        >>> z = tv.tensor([[1000.0, 0.0], [0.0, 1000.0]])
        >>> tv.losses.softmax_cross_entropy([0, 0], z).item()  # (0 + 1000) / 2, no overflow
        500.0
    """
    fn = "softmax_cross_entropy"
    z = _pred(logits, fn)
    if z.ndim < 2:
        raise ValueError(f"{fn}: logits must have shape (batch, classes), got {z.shape}")
    e = _check_options(fn, reduction, label_smoothing)
    t = class_targets(labels, z.shape, z.dtype, fn)
    if isinstance(labels, Tensor) and labels.dtype.kind == "f":  # soft labels: differentiable
        t = _label_tensor(labels, t, z)
    elif not isinstance(t, Tensor):
        t = Tensor(t)
    plain = reduction == "mean" and class_weights is None and not e and weights is None
    if plain:  # one kernel (SoftmaxCrossEntropyWithLogits); its gradient is one kernel too
        return softmax_cross_entropy_with_logits(t, z)
    c = z.shape[-1]
    if e:
        t = t * (1.0 - e) + e / c
    per_class = ops.neg(t * ops.log_softmax(z, -1))
    denominator = None
    if class_weights is not None:
        cw = _class_weights(class_weights, c, z, fn)
        per_class = per_class * cw
        y = _labels(labels, fn)
        if getattr(y, "dtype", np.dtype(float)).kind in "iu":  # PyTorch's weighted mean
            denominator = ops.sum(ops.one_hot(y, c, z.dtype) * cw, -1)  # w[y_i] per example
    losses = ops.sum(per_class, -1)
    if weights is not None:
        w = _weights(weights, losses.shape, losses, fn)
        losses = losses * w
        if denominator is None:
            denominator = ops.broadcast_to(w, losses.shape)
        else:
            denominator = denominator * w
    if denominator is not None:
        denominator = ops.sum(ops.broadcast_to(denominator, losses.shape))
    return _reduce(losses, reduction, denominator=denominator)


def _class_weights(class_weights, c, like, fn) -> Tensor:
    cw = class_weights if isinstance(class_weights, Tensor) else Tensor(
        np.asarray(to_array(class_weights, where=fn))
    )  # fmt: skip
    if cw.shape != (c,):
        raise ValueError(
            f"{fn}: class_weights must have shape ({c},) (one per class), got {cw.shape}"
        )
    return cw if cw.dtype == like.dtype else ops.cast(cw, like.dtype)


def binary_cross_entropy(labels, predictions, from_logits: bool = False, *, reduction="mean",
                         label_smoothing=0.0, weights=None) -> Tensor:  # fmt: skip
    """Binary cross entropy for 0/1 labels; ``from_logits=True`` takes raw scores (stable).

    ``reduction`` "mean", "sum" or "none" (per element); ``label_smoothing`` e: labels
    ``(1 - e) y + e / 2`` (TensorFlow.js's); ``weights``: per-example weights.

    Example:
        >>> import tapeviz as tv
        >>> round(tv.losses.binary_cross_entropy([1.0], tv.tensor([0.0]), True).item(), 4)
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
    e = _check_options(fn, reduction, label_smoothing)
    yt = _label_tensor(labels, y, p)
    if e:
        yt = yt * (1.0 - e) + 0.5 * e
    if from_logits:
        losses = yt * ops.softplus(-p) + (1 - yt) * ops.softplus(p)
    else:
        eps = 1e-7
        q = ops.clip(p, eps, 1 - eps)
        losses = ops.neg(yt * ops.log(q) + (1 - yt) * ops.log(1 - q))
    return _weighted(losses, weights, fn, reduction)


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
