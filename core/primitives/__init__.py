"""The built-in primitives, one table per op family, registered from one explicit list.

Each family module's ``ROWS`` holds one ``core.registry.kernels.primitive.Primitive`` per primitive:
kernel name, numpy kernel, VJP (written with ops, so it differentiates again), what the VJP
saves, the LaTeX formula of its local derivative, the batched replay's rule
(``core/registry/batching.py``) and, for a fused kernel, the ops the lesson graph draws in its place.
``tv.define_op`` takes the same fields for a new op.
"""

from __future__ import annotations

import re

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
from .define import install

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
ROWS = tuple(d for family in FAMILIES for d in family.ROWS)


def register() -> None:
    """Register every built-in primitive (its row: numpy kernel, VJP, formula and rules), or
    put each back as its row says."""
    for row in ROWS:
        install(row, builtin=True)


_SLOT = re.compile(r"\{(x|a|b|y|dy)\}")


def fill(formula: str, values: dict) -> str:
    """Replace the ``{x}``/``{a}``/``{b}``/``{y}``/``{dy}`` slots of a gradient formula by
    ``values[slot]``; other braces are LaTeX and stay.

    A formula (a row's ``formula``) is the local derivative ∂y/∂input of a kernel's
    output ``y``; the gradient sent back is ``dy`` times it, elementwise, unless the formula
    holds ``{dy}`` (then it is the whole gradient: matmul, sum).

    Example:
        >>> fill("{b} {a}^{{b} - 1}", {"a": "x", "b": "3"})
        '3 x^{3 - 1}'
    """
    return _SLOT.sub(lambda m: str(values.get(m.group(1), m.group(1))), formula)
