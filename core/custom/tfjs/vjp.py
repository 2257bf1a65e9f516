"""What runs when a gradient flows through a ``custom_grad`` node (``custom_grad.py`` records
it): the user's ``grad_func`` called once for every input, each gradient checked, and the
intermediates ``f`` made that ``grad_func`` reads marked for outer tapes, so a second
derivative through one raises instead of being silently wrong."""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ...engine import dispatch as engine
from ...registry.gradients import GradConfig
from ...registry.validation import GradientError, NotDifferentiableError, check_gradient
from ...tensors.tensor import Tensor
from ..builder import outer_tapes, thunks_once

__all__ = ["KERNEL", "INTERMEDIATE_KERNEL", "Spec", "grad_fn", "grad_func_place", "sums_to"]

KERNEL = "CustomGrad"
INTERMEDIATE_KERNEL = "CustomGradIntermediate"


class Spec:
    """What the gradient of one call needs: names, input shapes/dtypes, grad_func."""

    __slots__ = (
        "name", "names", "inputs", "shapes", "num_outputs", "grad_func", "hazards", "captured",
        "marker", "made", "known",
    )  # fmt: skip

    def __init__(self, name, names, xs, num_outputs, grad_func, hazards):
        self.name, self.names, self.inputs = name, names, xs
        self.shapes = [(x.shape, x.dtype) for x in xs]
        self.num_outputs, self.grad_func, self.hazards = num_outputs, grad_func, hazards
        self.captured = 0  # how many of the hazards grad_func reaches through its closure
        self.marker = None  # the Primitive of the node marking the hazards
        self.made = (0, 0)  # the ids of the tensors f made: (start, end), exclusive
        self.known = set()  # ids of f's inputs, outputs, saved tensors and hazards


def grad_fn(spec, dy, saved, attrs):
    return thunks_once(
        spec.names,
        lambda: _run_grad_func(spec, dy, saved),
        lambda i: (
            f"custom_grad({spec.name}): grad_func returned None for input {i} "
            f"({spec.names[i]!r}), whose gradient is needed"
        ),
    )


def _run_grad_func(spec, dy, saved):
    if spec.hazards:
        _mark_intermediates(spec)
    dy_arg = list(dy) if spec.num_outputs > 1 else dy
    outer = outer_tapes()
    before = [len(t.nodes) for t in outer]
    try:
        result = spec.grad_func(dy_arg, list(saved))
    except GradientError:
        raise
    except Exception as e:
        raise GradientError(
            f"custom_grad({spec.name}): grad_func raised {type(e).__name__}: {e}"
        ) from e
    grads = _as_list(spec, result)
    grads = [_check_gradient(spec, i, g) for i, g in enumerate(grads)]
    hidden = _hidden_intermediates(spec, outer, before)
    return _through_marker(spec, grads, hidden) if hidden else grads


def _hidden_intermediates(spec, outer, before) -> int:
    """How many tensors ``f`` made, none of its inputs, outputs or saved (or closure-found)
    tensors, the ops of ``grad_func`` read: reached some way the closure scan cannot see (an
    object attribute, a bound method, a global dict, deep nesting). The outer tapes saw
    those ops take them as constants."""
    start, end = spec.made
    found = set()
    for tape, n in zip(outer, before):
        for node in tape.nodes[n:]:
            for t in node.inputs.values():
                if start < t.id < end and id(t) not in spec.known and t.dtype.kind == "f":
                    found.add(id(t))
    return len(found)


def _through_marker(spec, grads, hidden):
    """The gradients, passed on the outer tapes through a node whose gradient for ``f``'s
    inputs raises (for the gradients themselves it is the identity): the first derivative is
    unchanged, a second derivative through the hidden intermediates is an error."""
    which = [i for i, g in enumerate(grads) if g is not None]
    if not which:
        return grads
    out = list(grads)
    for i in which:
        out[i] = Tensor(grads[i]._array)
    inputs = dict(zip(spec.names, spec.inputs))
    inputs.update({f"grad{i}": grads[i] for i in which})
    how = f"{hidden} (reached without save(): an attribute, a method, a global)"
    grad = GradConfig(INTERMEDIATE_KERNEL, functools.partial(_pass_through, spec, which, how))
    engine.record(spec.marker, inputs, tuple(out[i] for i in which), {}, grad, [], outer_only=True)
    return out


def _pass_through(spec, which, how, dy, saved, attrs):
    dys = dy if isinstance(dy, tuple) else (dy,)
    thunks = _intermediate_grad(spec, how, dy, saved, attrs)
    for k, i in enumerate(which):
        thunks[f"grad{i}"] = functools.partial(lambda d: d, dys[k])
    return thunks


def _as_list(spec, result) -> list:
    n = len(spec.names)
    if isinstance(result, (list, tuple)):
        if len(result) != n:
            raise GradientError(
                f"custom_grad({spec.name}): grad_func returned {len(result)} gradients, "
                f"expected {n} (one per input: {', '.join(spec.names)})"
            )
        return list(result)
    if n != 1:
        raise GradientError(
            f"custom_grad({spec.name}): grad_func returned one {type(result).__name__}, "
            f"expected a list of {n} gradients (one per input: {', '.join(spec.names)})"
        )
    return [result]


def _check_gradient(spec, i, g):
    shape, dtype = spec.shapes[i]
    if g is None or dtype.kind != "f":  # a non-float input never needs a gradient
        return None
    where = f"custom_grad({spec.name}): gradient for input {i} ({spec.names[i]!r})"
    place = f"; in grad_func{grad_func_place(spec.grad_func)}"
    gshape = getattr(g, "shape", None)
    hint = ""
    if gshape is not None and gshape != shape:
        if sums_to(gshape, shape):
            hint = f"{place}: it is a broadcast of the input, reduce it with tv.sum_to(g, {shape})"
        else:
            hint = f"{place}: return one gradient of the input's shape {shape}"
    elif getattr(g, "dtype", dtype) != dtype:
        hint = f"{place}: cast it with tv.cast(g, '{dtype}')"
    return check_gradient(g, shape, dtype, where, hint=hint)


def sums_to(gshape, shape) -> bool:
    """True when ``tv.sum_to(g, shape)`` can reduce a gradient of ``gshape``: ``shape``
    broadcasts to ``gshape`` (what a broadcast in the forward would have made)."""
    try:
        return np.broadcast_shapes(tuple(shape), tuple(gshape)) == tuple(gshape)
    except ValueError:
        return False


def grad_func_place(grad_func) -> str:
    """`` at file.py:LINE`` where ``grad_func`` is defined (``""`` when unknown): a wrong
    gradient is found after ``grad_func`` returned, so the traceback cannot show its line."""
    code = getattr(inspect.unwrap(grad_func), "__code__", None)
    if code is None:
        code = getattr(getattr(grad_func, "func", None), "__code__", None)  # a partial
    if code is None:
        return ""
    return f" at {code.co_filename}:{code.co_firstlineno}"


def _mark_intermediates(spec):
    """Tell outer tapes that the saved intermediates come from the inputs, through a node
    whose gradient raises: a second derivative that needs them fails instead of being wrong."""
    if not outer_tapes():
        return
    n_saved, n_captured = len(spec.hazards) - spec.captured, spec.captured
    how = " and ".join(
        [f"{n_saved} saved"] * bool(n_saved) + [f"{n_captured} closure-captured"] * bool(n_captured)
    )
    grad = GradConfig(INTERMEDIATE_KERNEL, functools.partial(_intermediate_grad, spec, how))
    inputs = dict(zip(spec.names, spec.inputs))
    engine.record(spec.marker, inputs, spec.hazards, {}, grad, [], outer_only=True)


def _intermediate_grad(spec, how, dy, saved, attrs):
    def fail():
        raise NotDifferentiableError(
            f"custom_grad({spec.name}): cannot differentiate its gradient again: grad_func uses "
            f"{how} intermediate value(s) computed inside {spec.name}, which the outer tape can "
            "only see as constants, so the second derivative would be silently wrong. Fix: "
            "save only the inputs or the outputs (and capture nothing else) and recompute the "
            "intermediate inside grad_func with ops (e.g. y = exp(x) from the saved x)."
        )

    return {n: fail for n in spec.names}
