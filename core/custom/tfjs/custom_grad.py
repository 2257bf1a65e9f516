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

from ...engine import dispatch as engine
from ...registry.gradients import GradConfig
from ...tensors import recording
from ...tensors import tensor as _tensor_mod
from ...tensors.tensor import Tensor
from ..builder import Primitive, as_input, watch_uses
from ..captured import captured_tensors
from .vjp import INTERMEDIATE_KERNEL, KERNEL, Spec, grad_fn

__all__ = ["custom_grad"]


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
        if recording.recording():
            end = _tensor_mod.new_id()  # f's tensors have ids in (start, end)
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

    start = _tensor_mod.new_id()  # tensors made by f have larger ids
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
    spec = Spec(name, names, xs, len(outputs), grad_func, tuple(hazards + captured))
    spec.captured, spec.marker = len(captured), prims[1]
    spec.made, spec.known = made, known | {id(t) for t in spec.hazards}
    grad = GradConfig(KERNEL, functools.partial(grad_fn, spec))
    attrs = {"num_outputs": len(outputs), "intermediates": len(hazards)}
    engine.record(prims[0], dict(zip(names, xs)), outputs, attrs, grad, roles)
