"""Metrics on numpy arrays: ``fn(labels, predictions) -> float``."""

from __future__ import annotations

import numpy as np

from . import losses as _losses

__all__ = ["accuracy", "resolve_metrics"]


def accuracy(labels, predictions, threshold: float | None = None) -> float:
    """Fraction of correct predictions.

    Several columns: argmax against integer labels (or the argmax of one-hot labels). One
    column (binary): ``predictions > threshold``; by default 0.5 for probabilities in
    [0, 1], else 0 (logits).

    Example:
        >>> import numpy as np
        >>> accuracy(np.array([0, 1]), np.array([[2.0, 1.0], [0.0, 3.0]]))
        1.0
    """
    y, p = np.asarray(labels), np.asarray(predictions)
    if p.ndim >= 2 and p.shape[-1] > 1:
        pred = p.argmax(-1)
        true = y.argmax(-1) if y.shape == p.shape else y
        return float(np.mean(pred == true))
    p = p.reshape(len(p), -1)[:, 0] if p.ndim else p
    if threshold is None:
        threshold = 0.5 if p.size and p.min() >= 0 and p.max() <= 1 else 0.0
    return float(np.mean((p > threshold) == (y.reshape(len(y), -1)[:, 0] > 0.5)))


def _is_classification(loss_fn) -> tuple[bool, float | None]:
    if loss_fn is _losses.softmax_cross_entropy:
        return True, None
    if loss_fn is _losses.binary_cross_entropy:
        return True, 0.5
    kw = getattr(loss_fn, "keywords", None) or {}
    base = getattr(loss_fn, "func", None)
    if base is _losses.binary_cross_entropy or getattr(loss_fn, "from_logits", False):
        return True, 0.0 if kw.get("from_logits", getattr(loss_fn, "from_logits", False)) else 0.5
    return False, None


def resolve_metrics(metrics, loss_fn) -> dict:
    """``"auto"`` / a list of names or functions -> ``{name: fn(labels, predictions)}``."""
    if metrics is None:
        return {}
    if metrics == "auto":
        is_cls, threshold = _is_classification(loss_fn)
        if not is_cls:
            return {}
        return {"accuracy": lambda y, p: accuracy(y, p, threshold)}
    out = {}
    for m in metrics if isinstance(metrics, (list, tuple)) else [metrics]:
        if m in ("accuracy", "acc"):
            threshold = _is_classification(loss_fn)[1]
            out["accuracy"] = lambda y, p, t=threshold: accuracy(y, p, t)
        elif callable(m):
            out[getattr(m, "__name__", type(m).__name__)] = m
        else:
            raise ValueError(
                f"fit: unknown metric {m!r} (expected 'accuracy' or a function "
                "(labels, predictions) -> float)"
            )
    return out
