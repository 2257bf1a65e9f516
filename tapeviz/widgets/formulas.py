"""The math of a node's gradient, from the formula registered with its gradient.

Built-in gradients carry the LaTeX of their local derivatives (the ``formula`` of each
primitive's definition, ``core/primitives/<family>.py``); ``gradient_formula`` writes it as
one line, and ``chain_rule_latex`` writes one step of backprop with the user's variable
names and numbers, e.g. ∂L/∂a = ∂L/∂e · ∂e/∂a = (−2)(−3) = 6. A gradient without a formula
is described by the first line of its VJP's docstring; custom ones by their style.
"""

from __future__ import annotations

import inspect
import re

import numpy as np

from tapeviz.core.primitives import fill
from tapeviz.core.tensors.tensor import Tensor

__all__ = ["chain_rule_latex", "gradient_formula", "tex_name", "tex_to_text"]

_STYLES = {
    "custom_grad": "custom_grad {label}: dx = grad_func(dy, saved) (the user's gradient)",
    "DifferentiableFunction": (
        "DifferentiableFunction {label}: dLdX = backward(dLdY, compute_gradients, saved X, "
        "saved Y, memory)"
    ),
    "CompiledLayer": "CompiledLayer {label}: dx = gradient(x, dy[, y])",
}


def gradient_formula(node) -> str:
    """The gradient of ``node`` as one line of math (or words), e.g. for a Tanh node
    ``"Tanh: ∂y/∂x = 1 - y^2"`` (the registered LaTeX, ``y`` the output).

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([0.5])
        >>> with tv.Tape() as tape:
        ...     y = tv.tanh(x)
        >>> gradient_formula(tape.nodes[0])
        'Tanh: ∂y/∂x = 1 - y^2'
    """
    grad = getattr(node, "grad", None)
    if grad is None:
        return f"{node.kernel}: no gradient registered"
    style = getattr(node, "style", "builtin")
    if style in _STYLES:
        return _STYLES[style].format(label=node.label)
    text = _registered(node, grad)
    if text is None:  # a VJP without a formula: the first line of its docstring
        doc = inspect.getdoc(grad.grad_fn)
        text = doc.splitlines()[0] if doc else f"{node.kernel}: gradient by {_name(grad)}"
    if style == "override":
        text = f"{text} (overridden gradient)"
    return text


def _name(grad) -> str:
    return getattr(grad.grad_fn, "__qualname__", repr(grad.grad_fn))


def _registered(node, grad) -> str | None:
    """``"Mul: ∂y/∂a = b; ∂y/∂b = a"`` from the formula registered with the gradient."""
    if not getattr(grad, "formula", ()):
        return None
    slots = {k: k for k in node.inputs} | {"y": "y", "dy": "dy"}
    parts = [f"∂y/∂{k} = {tex_to_text(fill(f, slots))}" for k, f in grad.formula]
    return f"{node.kernel}: " + "; ".join(parts)


_GROUP = r"\{([^{}]*)\}"
_TEX_WORDS = {"^\\top": "ᵀ", r"\sigma": "σ", r"\pi": "π", r"\,": " ", r"\cdot": "·"}


def _paren(text: str) -> str:
    return text if re.fullmatch(r"-?[\w.]+(\^\w+)?", text) else f"({text})"


def _exp(text: str) -> str:
    return text if re.fullmatch(r"\w+", text) else f"({text})"


def tex_to_text(tex: str) -> str:
    """A formula's LaTeX as plain text for places that do not typeset math (the plain
    stepper's panel, tooltips): ``\\frac{1}{b}`` -> ``1/b``, ``\\sqrt{\\pi}`` -> ``√π``.

    Example:
        >>> tex_to_text(r"-\\frac{a}{b^2}")
        '-a/b^2'
    """
    out = tex
    for old, new in _TEX_WORDS.items():
        out = out.replace(old, new)
    out = re.sub(r"\\(?:operatorname|text|mathrm)" + _GROUP, r"\1", out)
    for _ in range(4):  # innermost groups first: nested fractions and roots
        out = re.sub(r"\\frac" + _GROUP + _GROUP,
                     lambda m: f"{_paren(m[1].strip())}/{_paren(m[2].strip())}", out)  # fmt: skip
        out = re.sub(r"\\sqrt" + _GROUP, lambda m: "√" + _paren(m[1].strip()), out)
        out = re.sub(r"\^" + _GROUP, lambda m: "^" + _exp(m[1].strip()), out)
    out = re.sub(r"\\([A-Za-z]+)", r"\1", out)  # \cos, \sin, \ln: the word
    return re.sub(r"\s+", " ", out.replace("{", "").replace("}", "")).strip()


def _num(t) -> str | None:
    """A scalar tensor's value for a formula, in parentheses; None when not a scalar."""
    data = t.peek() if isinstance(t, Tensor) else None
    if data is None or np.size(data) != 1:
        return None
    return f"({float(np.asarray(data).reshape(-1)[0]):.4g})"


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def tex_name(name: str) -> str:
    """A variable name safe inside LaTeX (``net_loss`` -> ``net\\_loss``); a name that is
    an expression or words (``x1w1 + x2w2``, ``Add out``: what a lesson calls an unnamed
    intermediate) is one term: ``(\\text{x1w1 + x2w2})``, so ``∂L/∂`` applies to all of it."""
    plain = name.replace("/", "").replace(".", "").isidentifier() or _number(name)
    for ch in "\\_#%&$^{}":
        name = name.replace(ch, "\\" + ch)
    return name if plain else rf"(\text{{{name}}})"


def _d(top: str, bottom: str) -> str:
    return rf"\frac{{\partial {top}}}{{\partial {bottom}}}"


def chain_rule_latex(node, slot: str, dy, grad, names: dict, loss: str = "L") -> str | None:
    """One step of backprop as LaTeX, with the user's names and numbers.

    Args:
        node: the forward node; ``slot``: its input (e.g. ``"a"``).
        dy: the gradient arriving at the node's output; ``grad``: the one sent to ``slot``.
        names: ``{tensor id: name}`` (the user's variable names, LaTeX-safe: ``tex_name``).
        loss: the name of what is differentiated.

    Returns:
        e.g. ``∂L/∂a = ∂L/∂e · ∂e/∂a = ∂L/∂e · b = (-2)(-3) = 6`` in LaTeX; None when the
        node's gradient has no registered formula.
    """
    formula = dict(getattr(node.grad, "formula", ()) or ())
    if slot not in formula:
        return None
    out, x = node.outputs[0], node.inputs[slot]
    o, i = names.get(out.id, "y"), names.get(x.id, slot)
    symbols = {k: names.get(t.id, k) for k, t in node.inputs.items()} | {"y": o}
    numbers = {k: _num(t) for k, t in node.inputs.items()} | {"y": _num(out)}
    whole = "{dy}" in formula[slot]
    symbols["dy"], numbers["dy"] = _d(loss, o), _num(dy)
    head = f"{_d(loss, i)} = "
    if whole:
        line = head + fill(formula[slot], symbols)
    elif o == loss:  # the first step: ∂L/∂L = 1 needs no saying
        line = head + fill(formula[slot], symbols)
    else:
        local = fill(formula[slot], symbols)
        line = head + rf"{_d(loss, o)} \cdot {_d(o, i)} = {_d(loss, o)} \cdot {local}"
    used = [k for k in numbers if "{" + k + "}" in formula[slot]]
    times_dy = not whole and o != loss
    if all(numbers[k] is not None for k in used + ["dy"] * times_dy):
        nums = fill(formula[slot], numbers)
        nums = f"{numbers['dy']}\\,{nums}" if times_dy else nums
        value = _num(grad)
        if value is None or nums != value:  # "f = (-2) = -2" says -2 once: "f = -2"
            line += " = " + nums
        if value is not None:
            line += f" = {value[1:-1]}"
    return line
