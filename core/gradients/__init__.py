"""The built-in primitives, one table per op family, registered from one explicit list.

Each family module's ``DEFINITIONS`` holds one ``core.define.Definition`` per primitive:
kernel name, numpy kernel, VJP (written with ops, so it differentiates again), what the VJP
saves, the LaTeX formula of its local derivative, the batched replay's rule
(``core/batching.py``) and, for a fused kernel, the ops the lesson graph draws in its place.
``tv.define_op`` takes the same fields for a new op.
"""

from __future__ import annotations

import re

from ..define import install
from . import (
    contract,
    decomp,
    elementwise,
    elementwise_binary,
    elementwise_math,
    fused,
    linalg,
    nn,
    reduce,
    scan,
    shape,
)

FAMILIES = (
    elementwise,
    elementwise_binary,
    elementwise_math,
    fused,
    reduce,
    scan,
    linalg,
    contract,
    decomp,
    shape,
    nn,
)
DEFINITIONS = tuple(d for family in FAMILIES for d in family.DEFINITIONS)


def register() -> None:
    """Register every built-in primitive: its numpy kernel, VJP, formula and rules."""
    for definition in DEFINITIONS:
        install(definition, builtin=True)


_SLOT = re.compile(r"\{(x|a|b|y|dy)\}")


def fill(formula: str, values: dict) -> str:
    """Replace the ``{x}``/``{a}``/``{b}``/``{y}``/``{dy}`` slots of a gradient formula by
    ``values[slot]``; other braces are LaTeX and stay.

    A formula (``Definition.formula``) is the local derivative ∂y/∂input of a kernel's
    output ``y``; the gradient sent back is ``dy`` times it, elementwise, unless the formula
    holds ``{dy}`` (then it is the whole gradient: matmul, sum).

    Example:
        >>> fill("{b} {a}^{{b} - 1}", {"a": "x", "b": "3"})
        '3 x^{3 - 1}'
    """
    return _SLOT.sub(lambda m: str(values.get(m.group(1), m.group(1))), formula)
