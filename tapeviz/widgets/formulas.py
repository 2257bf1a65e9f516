"""The one-line math of a node's gradient: the comment above its gradient function.

Our gradient modules carry the math in a comment line right above each grad fn
(``# tanh: y = tanh x; dx = dy (1 - y^2)``); ``inspect.getcomments`` reads it. Gradients
without one fall back to a small table; custom gradients are described by their style.
"""

from __future__ import annotations

import inspect

__all__ = ["gradient_formula"]

_TABLE = {
    "BatchMatMul": "matmul: y = a @ b; da = dy @ b^T, db = a^T @ dy",
    "BroadcastTo": "broadcast_to: dx = dy summed over the broadcast axes",
    "Concat": "concat: dx_i = the slice of dy where x_i was placed",
    "Identity": "identity: dx = dy",
    "Pad": "pad: dx = dy without the padding",
    "Reshape": "reshape: dx = reshape(dy, x.shape)",
    "Slice": "getitem: dx = zeros with dy scattered back to the selected positions",
    "SliceGrad": "scatter (slice gradient): d(dy) = g gathered at the same positions",
    "Split": "split: dx = concat(dy_1, ..., dy_n)",
    "StopGradient": "stop_gradient: no gradient flows",
    "Tile": "tile: dx = dy summed over the repeats",
    "Transpose": "transpose: dx = transpose(dy, inverse permutation)",
    "AvgPoolGrad": "avg_pool_grad is linear: its gradient is avg_pool(g)",
}

_STYLES = {
    "custom_grad": "custom_grad {label}: dx = grad_func(dy, saved) (the user's gradient)",
    "DifferentiableFunction": (
        "DifferentiableFunction {label}: dLdX = backward(dLdY, compute_gradients, saved X, "
        "saved Y, memory)"
    ),
    "CompiledLayer": "CompiledLayer {label}: dx = gradient(x, dy[, y])",
}


def _comment_of(fn) -> str | None:
    try:
        text = inspect.getcomments(fn)
    except (TypeError, OSError):
        return None
    if not text:
        return None
    lines = [ln.strip().lstrip("#").strip() for ln in text.strip().splitlines()]
    lines = [ln for ln in lines if ln]
    return " ".join(lines) if lines else None


def gradient_formula(node) -> str:
    """The gradient of ``node`` as one line of math (or words), e.g. for a Tanh node
    ``"tanh: y = tanh x; dx = dy (1 - y^2)"``.

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([0.5])
        >>> with tv.Tape() as tape:
        ...     y = tv.tanh(x)
        >>> gradient_formula(tape.nodes[0])
        'tanh: y = tanh x; dx = dy (1 - y^2)'
    """
    grad = getattr(node, "grad", None)
    if grad is None:
        return f"{node.kernel}: no gradient registered"
    style = getattr(node, "style", "builtin")
    if style in _STYLES:
        return _STYLES[style].format(label=node.label)
    text = _comment_of(grad.grad_fn)
    if text is None:
        text = _TABLE.get(node.kernel)
    if text is None:
        doc = inspect.getdoc(grad.grad_fn)
        text = doc.splitlines()[0] if doc else f"{node.kernel}: gradient by {_name(grad)}"
    if style == "override":
        text = f"{text} (overridden gradient)"
    return text


def _name(grad) -> str:
    return getattr(grad.grad_fn, "__qualname__", repr(grad.grad_fn))
