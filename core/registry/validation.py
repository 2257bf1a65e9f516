"""One validator for every gradient: built-in, override, custom_grad, DifferentiableFunction.

A gradient is right or the error names the kernel (or function), the input and what was
expected against what came: an unknown input name in a gradient dict, a gradient of the
wrong shape or dtype kind, a saved input the kernel does not have. The only reduction
allowed is the engine's own broadcast reduction (``reducible``): a gradient shaped like the
broadcast the forward made, never an arbitrary larger array summed down.
"""

from __future__ import annotations

import numpy as np

from ..tensors.tensor import Tensor

__all__ = [
    "GradientError",
    "NotDifferentiableError",
    "check_keys",
    "check_gradient",
    "check_dy",
    "reducible",
    "saved_key_error",
    "StaleValueError",
    "stale_error",
]


class GradientError(RuntimeError):
    """A gradient function returned something wrong, or a gradient is missing."""


class NotDifferentiableError(GradientError):
    """A gradient was needed through a primitive that has none: no gradient is registered
    for its kernel, or its gradient (numpy or compiled code) cannot be differentiated again
    (``Primitive.once_only``). ``check_grads`` notes it instead of reporting a wrong one."""


def check_keys(where: str, thunks: dict, inputs, optional=()) -> None:
    """Every key of a gradient dict names an input, or a ``GradientError`` naming it.

    Args:
        where: who returned the dict (``gradient of 'Mul' (node 3)``).
        thunks: the dict ``grad_fn`` returned.
        inputs: the node's input names.
        optional: names the kernel may be run without (``GradConfig.optional_inputs``).
    """
    unknown = [k for k in thunks if k not in inputs and k not in optional]
    if unknown:
        raise GradientError(
            f"{where} returned gradients for {', '.join(map(repr, unknown))}, which "
            f"{'is not an input' if len(unknown) == 1 else 'are not inputs'} of the kernel "
            f"(its inputs: {', '.join(map(repr, inputs))}); a misspelt name would leave that "
            "input's gradient silently zero"
        )


def check_gradient(g, shape, dtype, where: str, *, arrays_only=False, hint="", whose="") -> Tensor:
    """``g`` as a Tensor of exactly ``shape`` and ``dtype``, or a ``GradientError``.

    Args:
        g: what the gradient function gave (Tensor, numpy array, Python number).
        shape, dtype: the input's.
        where: ``<function>: gradient for input 'x'`` (named in the error).
        arrays_only: a numpy array is required (``DifferentiableFunction.backward``).
        hint: appended to a shape or dtype error.
        whose: said after the expected shape or dtype (`` (X1's)``).

    Returns:
        The gradient as a Tensor.
    """
    if arrays_only and not isinstance(g, (np.ndarray, np.generic)):
        tip = " (return .numpy())" if isinstance(g, Tensor) else ""
        raise GradientError(f"{where} must be a numpy array, got {type(g).__name__}{tip}")
    if isinstance(g, (float, int)) and not isinstance(g, bool):
        g = Tensor(np.asarray(g, dtype))  # a Python number takes the input's dtype
    elif isinstance(g, (np.ndarray, np.generic)) and g.dtype.kind in "fiub":
        g = Tensor(np.asarray(g))
    elif not isinstance(g, Tensor):
        raise GradientError(f"{where}: expected a Tensor, got {type(g).__name__}")
    gshape, gdtype = g._shape_dtype()
    if gshape != tuple(shape):
        raise GradientError(f"{where}: expected shape {tuple(shape)}{whose}, got {gshape}{hint}")
    if gdtype != dtype:
        what = "dtype" if gdtype.kind == np.dtype(dtype).kind else "dtype kind"
        raise GradientError(f"{where}: expected {what} {dtype}{whose}, got {gdtype}{hint}")
    return g


def check_dy(y, dy, where: str, api: str) -> None:
    """A ``ValueError`` unless ``y`` is a scalar or ``dy`` has its shape: the fix it names is
    the functional API's own ``dy=`` argument (``output_gradients`` is ``Tape.gradient``'s).

    Args:
        y: the function's output; dy: the output gradient given (or None).
        where: ``grad(f)``, named in the error; api: ``grad``, ``grads``, ...
    """
    shape, got = tuple(y.shape), None if dy is None else tuple(np.shape(dy))
    fix = f"pass dy of the output's shape: tv.{api}(f)(x, dy=tv.ones({shape}))"
    if got is None and y.size != 1:
        raise ValueError(
            f"{where}: the function returned shape {shape}, not a scalar; return a scalar "
            f"(e.g. tv.sum(y) or tv.mean(y)), or {fix}"
        )
    if got is not None and got != shape:
        raise ValueError(f"{where}: dy has shape {got}, not the output's {shape}; {fix}")


def reducible(shape, gshape, out_shapes) -> bool:
    """True when a gradient of ``gshape`` for an input of ``shape`` is the broadcast the
    forward made: each axis where they differ (aligned from the right; ``shape`` has 1 or
    nothing there) is an axis of some output with ``gshape``'s size, and that output has at
    least ``gshape``'s rank. A (3, 2) or (1, 2) gradient for a (2,) input of a kernel whose
    output is (2,) is not: it is an error, never summed."""
    if len(shape) > len(gshape) or tuple(shape) == tuple(gshape):
        return False
    n = len(gshape)
    padded = (1,) * (n - len(shape)) + tuple(shape)
    differ = [i for i in range(n) if padded[i] != gshape[i]]
    if any(padded[i] != 1 for i in differ):
        return False
    for out in out_shapes:  # an output at least as long: a broadcast never adds more axes
        if len(out) >= n and all(out[len(out) - n + i] == gshape[i] for i in differ):
            return True
    return False


def saved_key_error(kernel: str, inputs, outputs, e: Exception) -> GradientError:
    """The error for a gradient config that saves an input or output the kernel lacks."""
    key = e.args[0] if e.args else "?"
    if isinstance(e, KeyError):
        what = f"inputs_to_save names {key!r}, which is not an input of kernel {kernel!r}"
        return GradientError(f"{what} (its inputs: {', '.join(map(repr, inputs))})")
    return GradientError(
        f"outputs_to_save of kernel {kernel!r} asks for an output index it does not have "
        f"(it has {len(outputs)} output(s))"
    )


class StaleValueError(RuntimeError):
    """A value saved for backward was changed (``Variable.assign``) before ``gradient()``."""


def stale_error(node, s) -> StaleValueError:
    """The error for saved value ``s`` of ``node``, assigned after the node saved it."""
    where = "unknown line (settings.record_source is off)"
    if node.source:
        where = f"{node.source[0]}:{node.source[1]} in {node.source[2]}"
    changes = s.tensor._version - s.version
    return StaleValueError(
        f"Tape.gradient: variable {s.tensor._label()} was assigned {changes} time(s) after node "
        f"{node.id} ({node.label}, recorded at {where}) saved it for backward as {s.role} "
        f"{s.name!r}; its gradient would use the new value. Call gradient() before assigning "
        "(or record a fresh forward pass after it), as PyTorch requires for in-place changes."
    )


class AutoDiffError(TypeError):
    """A function cannot be differentiated automatically; the message names the construct."""
