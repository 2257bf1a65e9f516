"""TensorFlow.js ``customGrad``: a function with its own gradient, recorded as one tape node.

``f(*inputs, save)`` runs once, under ``no_grad`` (the ops inside are not recorded), and returns
its value with ``grad_func(dy, saved)``. The gradient is written with ops, so it differentiates
again, as long as it uses only ``f``'s inputs and outputs: an *intermediate*, saved or
captured by ``grad_func``'s closure, is a constant to an outer tape, and a second derivative
through it would be silently wrong (PyTorch's trap). Here the outer tape sees where the
intermediate came from and raises instead.
"""

from __future__ import annotations

import functools
import inspect

from .. import engine
from .. import tensor as _tensor_mod
from ..grad_validation import GradientError, NotDifferentiableError, check_gradient
from ..registry import GradConfig
from ..tensor import Tensor
from .builder import Primitive, as_input, outer_tapes, thunks_once, watch_uses
from .captured import captured_tensors

__all__ = ["custom_grad"]

KERNEL = "CustomGrad"
INTERMEDIATE_KERNEL = "CustomGradIntermediate"


def custom_grad(f):
    """Make an op from ``f`` whose gradient is ``grad_func`` (TensorFlow.js ``tf.customGrad``).

    Args:
        f: ``f(*inputs, save)`` returning ``{"value": y, "grad_func": g}`` or ``(y, g)``.
            ``y`` is a Tensor (or a list/tuple of Tensors for several outputs). ``save(list)``
            keeps tensors for backward (each call adds to the list). ``g(dy, saved)`` returns
            the gradient of the single input, or a list with one gradient per input, written
            with ops; ``dy`` is a list when there are several outputs.

    Returns:
        An op: call it on tensors; one tape node (style ``"custom_grad"``) records it.

    Example:
        >>> import tapeviz as tv
        >>> @tv.custom_grad
        ... def square(x, save):
        ...     save([x])
        ...     return {"value": x * x, "grad_func": lambda dy, saved: dy * saved[0] * 2}
        >>> tv.grad(lambda x: square(x).sum())(tv.tensor([1.0, 3.0])).numpy()
        array([2., 6.], dtype=float32)
    """
    if not callable(f):
        raise TypeError(f"custom_grad: expected a function, got {type(f).__name__}")
    name = getattr(f, "__name__", type(f).__name__)
    names_by_arity: dict[int, list[str]] = {}

    @functools.wraps(f)
    def op(*inputs):
        xs = [as_input(x, f"custom_grad({name}): input {i}") for i, x in enumerate(inputs)]
        names = names_by_arity.get(len(xs))
        if names is None:
            names = names_by_arity[len(xs)] = _input_names(f, len(xs))
        value, outputs, grad_func, saved, start = _forward(f, name, xs)
        if engine.recording():
            end = next(_tensor_mod._ids)  # f's tensors have ids in (start, end)
            _record(prims, name, names, xs, outputs, grad_func, saved, (start, end))
        return value

    # the primitive of every call (its forward re-runs op: the audit and the batched
    # replay use it), and that of the node marking saved intermediates for outer tapes
    prims = (
        Primitive(KERNEL, label=name, kind="custom_grad", forward=op),
        Primitive(INTERMEDIATE_KERNEL, label=f"{name}: saved intermediate", kind="custom_grad"),
    )
    op.primitive = prims[0]
    return op


def _input_names(f, n) -> list[str]:
    """The parameter names of ``f`` before ``save`` (shown in the graph), else x0, x1, …"""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(params) >= n + 1 and all(p.kind in positional for p in params[: n + 1]):
        return [p.name for p in params[:n]]
    return [f"x{i}" for i in range(n)]


def _forward(f, name, xs):
    saved: list[Tensor] = []

    def save(tensors):
        saved.extend(_check_saved(tensors, name))

    start = next(_tensor_mod._ids)  # tensors made by f have larger ids
    with watch_uses(f"custom_grad({name}): {name}", xs):
        try:
            result = f(*xs, save)
        except Exception as e:
            if hasattr(e, "add_note"):  # Python 3.11+
                e.add_note(f"raised in the forward of custom_grad({name})")
            raise
    value, grad_func = _unpack(result, name)
    outs = list(value) if isinstance(value, (list, tuple)) else [value]
    if not outs:
        raise ValueError(f"custom_grad({name}): {name} returned an empty value")
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TypeError(
                f"custom_grad({name}): the value must be a Tensor or a list of Tensors, "
                f"got {type(o).__name__} at output {k}"
            )
        if o.id < start or any(o is p for p in outs[:k]):  # not made by f: a fresh output
            outs[k] = Tensor(o._array)
    if isinstance(value, (list, tuple)):
        value = type(value)(outs)
    else:
        value = outs[0]
    return value, tuple(outs), grad_func, saved, start


def _check_saved(tensors, name) -> list[Tensor]:
    items = [tensors] if isinstance(tensors, Tensor) else tensors
    if not isinstance(items, (list, tuple)):
        raise TypeError(
            f"custom_grad({name}): save() takes a list of Tensors, got {type(tensors).__name__}"
        )
    for k, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"custom_grad({name}): save() takes Tensors, got {type(t).__name__} at "
                f"position {k} (wrap arrays with tv.tensor)"
            )
    return list(items)


def _unpack(result, name):
    if isinstance(result, dict):
        if "value" not in result or not ({"grad_func", "gradFunc"} & result.keys()):
            raise ValueError(
                f"custom_grad({name}): {name} must return {{'value': ..., 'grad_func': ...}}, got "
                f"a dict with keys {sorted(result)}"
            )
        value, grad_func = result["value"], result.get("grad_func", result.get("gradFunc"))
    elif isinstance(result, tuple) and len(result) == 2:
        value, grad_func = result
    else:
        raise TypeError(
            f"custom_grad({name}): {name} must return {{'value': ..., 'grad_func': ...}} or the "
            f"pair (value, grad_func), got {type(result).__name__}"
        )
    if not callable(grad_func):
        raise TypeError(
            f"custom_grad({name}): grad_func must be callable, got {type(grad_func).__name__}"
        )
    return value, grad_func


def _record(prims, name, names, xs, outputs, grad_func, saved, made):
    start = made[0]
    roles = []
    hazards = []
    for k, t in enumerate(saved):
        if any(t is x for x in xs):
            roles.append(("input", names[next(i for i, x in enumerate(xs) if t is x)], t))
        elif any(t is o for o in outputs):
            roles.append(("output", next(i for i, o in enumerate(outputs) if t is o), t))
        else:
            roles.append(("memory", f"saved{k}", t))
            if t.id > start and t.dtype.kind == "f":  # made inside f from the inputs
                hazards.append(t)
    known = {id(t) for t in (*xs, *outputs, *saved)}
    captured = [  # reached through grad_func's closure, not save(): the same hazard
        t
        for t in captured_tensors(grad_func)
        if id(t) not in known and t.id > start and t.dtype.kind == "f"
    ]
    spec = _Spec(name, names, xs, len(outputs), grad_func, tuple(hazards + captured))
    spec.captured, spec.marker = len(captured), prims[1]
    spec.made, spec.known = made, known | {id(t) for t in spec.hazards}
    grad = GradConfig(KERNEL, functools.partial(_grad_fn, spec))
    attrs = {"num_outputs": len(outputs), "intermediates": len(hazards)}
    prims[0].record(dict(zip(names, xs)), outputs, attrs, grad, roles)


class _Spec:
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


def _grad_fn(spec, dy, saved, attrs):
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
    spec.marker.record(inputs, tuple(out[i] for i in which), {}, grad, [], outer_only=True)
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
    gshape = getattr(g, "shape", None)
    hint = ""
    if gshape is not None and gshape != shape and len(gshape) >= len(shape):
        hint = f"; reduce a broadcast with tv.sum_to(g, {shape})"
    elif getattr(g, "dtype", dtype) != dtype:
        hint = f"; cast it with tv.cast(g, '{dtype}')"
    return check_gradient(g, shape, dtype, where, hint=hint)


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
    spec.marker.record(inputs, spec.hazards, {}, grad, [], outer_only=True)


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
