"""Built-in gradients, one module per op family, registered from one explicit list."""

from __future__ import annotations

from ..registry import register_gradient
from . import elementwise, fused, linalg, nn, reduce, shape
from .formulas import FORMULAS

FAMILIES = (elementwise, fused, reduce, linalg, shape, nn)


def register() -> None:
    for family in FAMILIES:
        for name, fn, inputs_to_save, outputs_to_save, *needed_by in family.GRADIENTS:
            register_gradient(
                name,
                fn,
                inputs_to_save,
                outputs_to_save,
                needed_by=needed_by[0] if needed_by else None,
                formula=FORMULAS.get(name),
                _builtin=True,
            )
