"""LaTeX of each built-in kernel's local derivatives: the one table of gradient formulas.

``FORMULAS[kernel][input]`` is the local derivative ∂y/∂input of the kernel's output ``y``,
written with placeholders ``{x}``, ``{a}``, ``{b}`` (the inputs) and ``{y}`` (the output)
that ``fill`` replaces with the user's names or numbers (other braces are LaTeX); the gradient sent back is then
``dy`` times it, elementwise. A formula that holds ``{dy}`` is the whole gradient instead
(matmul, sum: not elementwise). ``gradients.register`` passes each row to
``register_gradient(formula=…)``, so the formula lives with the gradient it describes.
"""

from __future__ import annotations

import re

from .. import kernel_names as K

_SLOT = re.compile(r"\{(x|a|b|y|dy)\}")

FORMULAS = {
    K.NEG: {"x": "-1"},
    K.ABS: {"x": r"\operatorname{sign}({x})"},
    K.SIGN: {"x": "0"},
    K.EXP: {"x": "{y}"},
    K.LOG: {"x": r"\frac{1}{{x}}"},
    K.LOG1P: {"x": r"\frac{1}{1 + {x}}"},
    K.SQRT: {"x": r"\frac{1}{2 {y}}"},
    K.RSQRT: {"x": r"-\frac{{y}^3}{2}"},
    K.SQUARE: {"x": "2 {x}"},
    K.RECIPROCAL: {"x": "-{y}^2"},
    K.SIN: {"x": r"\cos {x}"},
    K.COS: {"x": r"-\sin {x}"},
    K.TAN: {"x": "1 + {y}^2"},
    K.TANH: {"x": "1 - {y}^2"},
    K.SIGMOID: {"x": "{y} (1 - {y})"},
    K.RELU: {"x": "[{x} > 0]"},
    K.SOFTPLUS: {"x": r"\sigma({x})"},
    K.ERF: {"x": r"\frac{2}{\sqrt{\pi}} e^{-{x}^2}"},
    K.IDENTITY: {"x": "1"},
    K.STOP_GRADIENT: {"x": "0"},
    K.ADD: {"a": "1", "b": "1"},
    K.SUB: {"a": "1", "b": "-1"},
    K.MUL: {"a": "{b}", "b": "{a}"},
    K.DIV: {"a": r"\frac{1}{{b}}", "b": r"-\frac{{a}}{{b}^2}"},
    K.POW: {"a": "{b} {a}^{{b} - 1}", "b": r"{y} \ln {a}"},
    K.MATMUL: {"a": r"{dy}\, {b}^\top", "b": r"{a}^\top {dy}"},
    K.SUM: {"x": r"{dy} \text{ copied to every summed entry}"},
}


def fill(formula: str, values: dict) -> str:
    """Replace the ``{x}``/``{a}``/``{b}``/``{y}``/``{dy}`` slots of ``formula`` by
    ``values[slot]``; other braces are LaTeX and stay.

    Example:
        >>> fill(FORMULAS["Mul"]["a"], {"b": "(-3)"})
        '(-3)'
    """
    return _SLOT.sub(lambda m: str(values.get(m.group(1), m.group(1))), formula)
