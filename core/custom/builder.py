"""What the three custom-gradient styles share: they are builders of primitives.

``custom_grad``, ``DifferentiableFunction`` and ``CompiledLayer`` each make a ``Primitive``
(``core/primitive.py``) once per function, class instance or layer, and then, per call, use
the same three pieces: one input conversion (``as_input``), one recording path
(``Primitive.record``) and one gradient validator
(``core/grad_validation.py``, called by each style with its own words for ``where``).
"""

from __future__ import annotations

import functools

from .. import engine
from ..grad_validation import GradientError
from ..primitive import Primitive
from ..tensor import Tensor
from ..tensor_data import from_data

__all__ = ["Primitive", "as_input", "outer_tapes", "thunks_once"]


def as_input(x, where: str) -> Tensor:
    """A call's argument as a Tensor: tensors pass; arrays, numbers and lists are wrapped
    (a numpy array without a copy, taken by the tape if it saves it; a list holding tensors
    is stacked with ops). ``where`` names the function and input in the error."""
    if isinstance(x, Tensor):
        return x
    try:
        return from_data(x, where=where)
    except TypeError as e:
        raise TypeError(f"{where} must be a Tensor or an array: {e}") from None


def outer_tapes() -> tuple:
    """The tapes recording now that are not being differentiated (higher order)."""
    rec = engine.current()
    return rec.tapes if rec is not None else ()


def thunks_once(names, run, missing):
    """The engine's ``{input name: thunk}``, for a user backward that makes every gradient
    in one call: the first thunk called runs ``run()`` (a list, one gradient per input);
    a needed gradient that came back ``None`` raises ``GradientError(missing(i))``."""
    cache = []

    def pick(i):
        if not cache:
            cache.append(run())
        g = cache[0][i]
        if g is None:
            raise GradientError(missing(i))
        return g

    return {n: functools.partial(pick, i) for i, n in enumerate(names)}
