"""MATLAB ``DifferentiableFunction``: forward and backward written on numpy arrays.

A subclass says, in ``super().__init__``, how many outputs ``forward`` makes and what
``backward`` needs: the inputs, the outputs, and ``num_memory_values`` extra arrays. Calling an
instance on tensors records one node that saves exactly those, so the memory inspector shows
their cost. ``backward`` gets MATLAB's arguments in MATLAB's order and runs once per gradient,
told by ``compute_gradients`` which inputs need one. It works on numpy, so its gradient cannot
be differentiated again; a second derivative through it is an error naming the class.
"""

from __future__ import annotations

import functools

import numpy as np

from ...engine import dispatch as engine
from ...registry.gradients import GradConfig
from ...tensors import recording
from ...tensors.tensor import Tensor
from ...tensors.tracing import refuse_opaque
from ..builder import Primitive, as_input, watch_uses
from .vjp import BACKWARD_KERNEL, KERNEL, Spec, grad_fn, split_forward

__all__ = ["DifferentiableFunction"]


class DifferentiableFunction:
    """Base class for an op with a hand-written ``forward`` and ``backward`` on numpy arrays.

    Args:
        num_outputs: M, the number of outputs ``forward`` returns (before memory values).
        save_inputs_for_backward: pass X1…XN to ``backward``.
        save_outputs_for_backward: pass Y1…YM to ``backward``.
        num_memory_values: K extra arrays ``forward`` returns after the outputs, for backward.

    ``forward(self, *X)`` returns ``Y1…YM, mem1…memK`` (numpy arrays). ``backward(self, *args)``
    receives ``dLdY1…dLdYM, compute_gradients, X1…XN (if saved), Y1…YM (if saved),
    mem1…memK`` and returns ``dLdX1…dLdXN`` (each with its X's shape and dtype; ``None`` where
    ``compute_gradients`` is false). ``compute_gradients`` is a tuple with one bool per input.

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> class Cube(tv.DifferentiableFunction):
        ...     def __init__(self):
        ...         super().__init__(save_inputs_for_backward=True)
        ...     def forward(self, x):
        ...         return x**3
        ...     def backward(self, dy, compute_gradients, x):
        ...         return dy * 3 * x**2
        >>> tv.grad(lambda x: Cube()(x).sum())(tv.tensor([1.0, 2.0])).numpy()
        array([ 3., 12.], dtype=float32)
    """

    def __init__(
        self,
        num_outputs: int = 1,
        save_inputs_for_backward: bool = False,
        save_outputs_for_backward: bool = False,
        num_memory_values: int = 0,
    ):
        cls = type(self).__name__
        if not isinstance(num_outputs, (int, np.integer)) or num_outputs < 1:
            raise ValueError(f"{cls}: num_outputs must be an int >= 1, got {num_outputs!r}")
        if not isinstance(num_memory_values, (int, np.integer)) or num_memory_values < 0:
            raise ValueError(
                f"{cls}: num_memory_values must be an int >= 0, got {num_memory_values!r}"
            )
        self.num_outputs = int(num_outputs)
        self.save_inputs_for_backward = bool(save_inputs_for_backward)
        self.save_outputs_for_backward = bool(save_outputs_for_backward)
        self.num_memory_values = int(num_memory_values)

    def forward(self, *X):
        """Return ``Y1…YM, mem1…memK`` as numpy arrays (override this)."""
        raise NotImplementedError(f"{type(self).__name__}: define forward(self, *X)")

    def backward(self, *args):
        """Return ``dLdX1…dLdXN`` as numpy arrays (override this)."""
        raise NotImplementedError(f"{type(self).__name__}: define backward(self, *args)")

    def __call__(self, *X):
        """Apply the function to tensors; returns a Tensor, or a tuple of M Tensors."""
        cls = type(self).__name__
        if not hasattr(self, "num_outputs"):
            raise TypeError(f"{cls}: call super().__init__(...) in {cls}.__init__")
        refuse_opaque("DifferentiableFunction", cls)  # tv.jit cannot see its numpy/compiled code
        xs = [as_input(x, f"{cls}: input X{i + 1}") for i, x in enumerate(X)]
        with watch_uses(f"{cls}.forward", xs):
            try:
                result = self.forward(*[x.numpy() for x in xs])
            except Exception as e:
                if hasattr(e, "add_note"):  # Python 3.11+
                    e.add_note(f"raised in {cls}.forward")
                raise
        ys, mems = split_forward(self, cls, result)
        outputs = tuple(Tensor(y) for y in ys)
        if recording.recording():
            _record(self, cls, xs, outputs, tuple(Tensor(m) for m in mems))
        return outputs[0] if self.num_outputs == 1 else outputs

    def _primitives(self, cls) -> tuple:
        """This instance's primitives (made once): its forward node, and the node of its
        backward that outer tapes record (higher order sees it)."""
        prims = self.__dict__.get("_tv_primitives")
        if prims is None:
            prims = self.__dict__["_tv_primitives"] = (
                Primitive(KERNEL, label=cls, kind=KERNEL, forward=self, once_only=True),
                Primitive(BACKWARD_KERNEL, label=f"{cls}.backward", kind=KERNEL),
            )
        return prims


def _record(fn, cls, xs, outputs, memory):
    names = [f"X{i + 1}" for i in range(len(xs))]
    saved = []
    if fn.save_inputs_for_backward:
        saved += [("input", n, x) for n, x in zip(names, xs)]
    if fn.save_outputs_for_backward:
        saved += [("output", j, y) for j, y in enumerate(outputs)]
    saved += [("memory", f"memory{j + 1}", t) for j, t in enumerate(memory)]
    prims = fn._primitives(cls)
    spec = Spec(fn, cls, names, xs, prims)
    grad = GradConfig(KERNEL, functools.partial(grad_fn, spec), wants_needed=True)
    attrs = {
        "num_outputs": fn.num_outputs,
        "num_memory_values": fn.num_memory_values,
        "save_inputs_for_backward": fn.save_inputs_for_backward,
        "save_outputs_for_backward": fn.save_outputs_for_backward,
    }
    engine.record(prims[0], dict(zip(names, xs)), outputs, attrs, grad, saved)
