"""What the three custom-gradient styles share: they are builders of primitives.

``custom_grad``, ``DifferentiableFunction`` and ``CompiledLayer`` each make a ``Primitive``
(``core/registry/primitive.py``) once per function, class instance or layer, and then, per call, use
the same three pieces: one input conversion (``as_input``), one recording path
(``engine.record``) and one gradient validator
(``core/registry/validation.py``, called by each style with its own words for ``where``).
"""

from __future__ import annotations

import contextlib
import functools

from ..ops.arguments import from_data
from ..registry.primitive import Primitive
from ..registry.validation import GradientError
from ..tensors import recording
from ..tensors import tensor as _tensor_mod
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor

__all__ = ["Primitive", "as_input", "outer_tapes", "thunks_once", "watch_uses"]


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
    rec = recording.current()
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


class ForwardUses:
    """Notes the tensors a custom forward reads that a gradient should reach but cannot: made
    before the forward, not among its inputs, floating, and tracked by a tape recording the
    call (a trainable variable, or a value computed from a watched one). The forward runs
    with this as the Recording's observer and no tape (so nothing it does reaches a tape, as
    under ``no_grad``): its ops report their inputs here (``saw``), and ``numpy()``,
    ``__array__`` and ``item()`` report reads through ``tensor.READS``."""

    def __init__(self, outer, inputs, start):
        self.outer, self.start = outer, start
        self.inputs = {id(x) for x in inputs}
        self.found: dict[int, Tensor] = {}

    def read(self, t) -> None:
        if (
            id(t) not in self.inputs
            and id(t) not in self.found
            and t.id < self.start
            and t.dtype.kind == "f"
            and recording.tracks_in(self.outer, t)
        ):
            self.found[id(t)] = t

    def saw(self, inputs: dict) -> None:
        """An op of the forward ran on ``inputs`` (``engine.run_kernel`` tells)."""
        for t in inputs.values():
            self.read(t)


@contextlib.contextmanager
def watch_uses(where: str, inputs):
    """Run a custom forward unrecorded (``no_grad``); when a tape records the call, raise a
    ``ValueError`` naming each tensor the forward used without taking it as an input
    (``ForwardUses``): its gradient through the op would be silently missing. TensorFlow's
    ``custom_gradient`` raises here too, unless ``grad_fn`` returns the variables'
    gradients; here the fix is to pass the tensor as an input."""
    outer = recording.current()
    if outer is None:
        yield
        return
    uses = ForwardUses(outer, inputs, _tensor_mod.new_id())
    token = _tensor_mod.READS.set(uses.read)
    try:
        with recording.recording_as(recording.Recording(observer=uses)):
            yield
    finally:
        _tensor_mod.READS.reset(token)
    if uses.found:
        names = ", ".join(t._label() for t in uses.found.values())
        kind = "variable" if all(isinstance(t, Variable) for t in uses.found.values()) else "tensor"
        raise ValueError(
            f"{where} uses {kind}(s) {names} without taking it as an input, while a tape "
            "records the call: the op's gradient would silently leave it out (no gradient "
            "flows to it through this op). Pass it as an input of the op and return its "
            "gradient from the backward too (TensorFlow's custom_gradient raises here as well "
            "unless its grad_fn returns the variables' gradients); or, for a constant on "
            "purpose, take its value before the call: c = tv.tensor(w.numpy())."
        )
