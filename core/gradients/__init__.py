"""Built-in gradients, one module per op family, registered from one explicit list.

An entry's ``inputs_to_save`` of ``"*"`` saves every input (kernels with a variable input
count, such as ``Einsum``). A family's ``BATCHING`` gives the batched replay's rule for its
primitives (``core/batching.py``); its ``DECOMPOSITIONS`` the ops a fused kernel stands for
(the lesson graph draws them in its place).
"""

from __future__ import annotations

from ..gradient_registry import register_gradient
from ..registry import register_batching, register_decomposition
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
from .formulas import FORMULAS

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


def register() -> None:
    for family in FAMILIES:
        optional = getattr(family, "OPTIONAL_INPUTS", {})  # inputs a kernel may be run without
        for name, fn, inputs_to_save, outputs_to_save, *needed_by in family.GRADIENTS:
            save_all = inputs_to_save == "*"
            register_gradient(
                name,
                fn,
                () if save_all else inputs_to_save,
                outputs_to_save,
                save_all_inputs=save_all,
                needed_by=needed_by[0] if needed_by else None,
                optional_inputs=optional.get(name, ()),
                formula=FORMULAS.get(name),
                _builtin=True,
            )
        for name, rule in getattr(family, "BATCHING", {}).items():
            register_batching(name, rule)
        for name, parts in getattr(family, "DECOMPOSITIONS", {}).items():
            register_decomposition(name, parts)
