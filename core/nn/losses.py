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

from .. import ops
from ..ops.nn import softmax_cross_entropy_with_logits
from ..tensors.tensor import Tensor
from ..tensors.tracing import check_values
from .loss_arguments import (
    check_options,
    check_unit_interval,
    class_targets,
    class_weights_tensor,
    example_weights,
    label_tensor,
    label_values,
    predictions_tensor,
    reduce_losses,
    weighted,
)

__all__ = [
    "mean_squared_error",
    "softmax_cross_entropy",
    "binary_cross_entropy",
    "get",
]


def mean_squared_error(labels, predictions, *, reduction="mean", weights=None) -> Tensor:
    """Mean of ``(labels - predictions)**2`` over every element (``reduction``: "sum" their
    sum, "none" each; ``weights``: per-example weights, see the module docstring).

    Example:
        >>> import tapeviz as tv
        >>> tv.losses.mean_squared_error([[1.0], [2.0]], tv.tensor([[0.0], [4.0]])).item()
        2.5
    """
    p = predictions_tensor(predictions, "mean_squared_error")
    y = label_values(labels, "mean_squared_error")
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
    check_options("mean_squared_error", reduction)
    d = p - label_tensor(labels, y, p)
    return weighted(d * d, weights, "mean_squared_error", reduction)


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
    z = predictions_tensor(logits, fn)
    if z.ndim < 2:
        raise ValueError(f"{fn}: logits must have shape (batch, classes), got {z.shape}")
    e = check_options(fn, reduction, label_smoothing)
    t = class_targets(labels, z.shape, z.dtype, fn)
    if isinstance(labels, Tensor) and labels.dtype.kind == "f":  # soft labels: differentiable
        t = label_tensor(labels, t, z)
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
        cw = class_weights_tensor(class_weights, c, z, fn)
        per_class = per_class * cw
        y = label_values(labels, fn)
        if getattr(y, "dtype", np.dtype(float)).kind in "iu":  # PyTorch's weighted mean
            denominator = ops.sum(ops.one_hot(y, c, z.dtype) * cw, -1)  # w[y_i] per example
    losses = ops.sum(per_class, -1)
    if weights is not None:
        w = example_weights(weights, losses.shape, losses, fn)
        losses = losses * w
        if denominator is None:
            denominator = ops.broadcast_to(w, losses.shape)
        else:
            denominator = denominator * w
    if denominator is not None:
        denominator = ops.sum(ops.broadcast_to(denominator, losses.shape))
    return reduce_losses(losses, reduction, denominator=denominator)


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
    p = predictions_tensor(predictions, fn)
    y = label_values(labels, fn)
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
        check_values(check_unit_interval, y)
    else:
        check_unit_interval(y)
    e = check_options(fn, reduction, label_smoothing)
    yt = label_tensor(labels, y, p)
    if e:
        yt = yt * (1.0 - e) + 0.5 * e
    if from_logits:
        losses = yt * ops.softplus(-p) + (1 - yt) * ops.softplus(p)
    else:
        eps = 1e-7
        q = ops.clip(p, eps, 1 - eps)
        losses = ops.neg(yt * ops.log(q) + (1 - yt) * ops.log(1 - q))
    return weighted(losses, weights, fn, reduction)


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
