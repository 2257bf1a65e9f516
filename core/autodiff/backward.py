"""Reverse mode over a tape: walk the nodes backwards and call their gradient functions.

Gradients are ops, so while this runs every *other* active tape records them (higher order),
and the tape being differentiated records them as its ``backward_nodes``. Broadcast inputs
get their gradient reduced back to their shape here, in one place (``sum_to``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import ops
from ..engine import dispatch as engine
from ..registry.validation import (
    GradientError,
    NotDifferentiableError,
    StaleValueError,
    check_gradient,
    reducible,
)
from ..tensors import recording
from ..tensors.kinds import Constant, stand_in
from ..tensors.nested import flatten_tensors, restructure
from ..tensors.tensor import Tensor
from .refusal import reverse_pass

__all__ = [
    "GradientError",
    "NotDifferentiableError",
    "StaleValueError",
    "BackwardStep",
    "BackwardPass",
    "reverse",
]


@dataclass(slots=True)
class BackwardStep:
    """What reverse mode did at one forward node, in the engine's order."""

    node_id: int
    dy: tuple  # per output: Tensor or None
    grads: dict  # input name -> gradient contribution (reduced to the input's shape)
    accumulated: dict = field(default_factory=dict)  # input name -> total after adding
    backward_node_ids: list = field(default_factory=list)


class BackwardPass:
    """The recorder of one ``tape.gradient`` call (in ``recording.Recording.backward``): the
    gradient ops it runs become the tape's ``backward_nodes``, each with ``grad_of``, the
    forward node being processed, and each step's record becomes a ``BackwardStep``
    (``step``).

    Both keep a value above ``limit`` bytes by shape only (a stand-in with the same id,
    ``tensor_kinds.stand_in``), so the array is freed once its step is done, as plain numpy
    frees it; ``limit=None`` keeps every value (an outer tape records the gradient for
    higher order, or ``settings.backward_keep_bytes = None``). What that buys
    (``bench/house_measurements.md``): an MLP's ``gradient()`` at batch 2048 peaks at 10 MiB
    instead of 28 and leaves 0 MiB instead of 24 on the tape, at no measurable cost in time.
    """

    __slots__ = ("tape", "grad_of", "limit")

    def __init__(self, tape, limit):
        self.tape, self.grad_of, self.limit = tape, None, limit

    def record_node(self, prim, backend, inputs, outputs, attrs, grad, source, saved=None):
        tape, limit = self.tape, self.limit
        if limit is not None:  # plain loops: this runs for every backward op
            for t in inputs.values():
                d = t._data
                if d is not None and d.nbytes > limit:
                    inputs = {k: stand_in(v, limit) for k, v in inputs.items()}
                    break
            for t in outputs:
                d = t._data
                if d is not None and d.nbytes > limit:
                    outputs = tuple([stand_in(o, limit) for o in outputs])
                    break
        node = tape.new_node(prim, backend, inputs, outputs, attrs, [], grad, source, self.grad_of)
        tape.backward_nodes.append(node)
        return node

    def step(self, node_id, dys, grads, accumulated, backward_node_ids) -> BackwardStep:
        """What the tape keeps of one step of reverse mode (``tape.backward_steps``)."""
        limit = self.limit
        if limit is not None:
            for t in (*dys, *grads.values(), *accumulated.values()):  # one loop: every step
                d = t._data if t is not None else None
                if d is not None and d.nbytes > limit:
                    dys = [_kept(d, limit) for d in dys]
                    grads = {k: _kept(g, limit) for k, g in grads.items()}
                    accumulated = {k: _kept(g, limit) for k, g in accumulated.items()}
                    break
        return BackwardStep(node_id, tuple(dys), grads, accumulated, backward_node_ids)


def _kept(t, limit):
    return None if t is None else stand_in(t, limit)


def reverse(tape, target, sources, output_gradients, unconnected_gradients):
    """Reverse mode over ``tape`` (``Tape.gradient``'s work), unless a grader refuses it
    here (``refusal``): ``_reverse`` in a counted reverse pass."""
    with reverse_pass():
        return _reverse(tape, target, sources, output_gradients, unconnected_gradients)


def _reverse(tape, target, sources, output_gradients, unconnected_gradients):
    """Check the request, seed the targets' dy, walk the nodes the sources reach in
    reverse, one ``_backprop_node`` each, under a recording that gives the gradient's ops to
    the tape (and to outer tapes)."""
    targets, flat_sources = _check_request(target, sources, unconnected_gradients)
    grads = _seed(targets, output_gradients)
    for s in flat_sources:  # a gradient source is an input of the recorded computation
        tape.watched.setdefault(s.id, s)
    live = {s.id for s in flat_sources if s.dtype.kind == "f"}
    relevant = _relevant_nodes(tape, live)
    tape.backward_nodes = []
    tape.backward_steps = []
    rec, bw = _backward_recording(tape)
    source = engine.caller_source()  # built-in gradients' ops are drawn at this line
    source_ids = {s.id for s in flat_sources}
    with recording.recording_as(rec):
        for node in reversed(relevant):
            outs = node.outputs  # the gradients that reached its outputs (inline: hot loop)
            if len(outs) == 1:
                d = grads.get(outs[0].id)
                if d is None:
                    continue
                dys = (d,)
            else:
                dys = tuple([grads.get(o.id) for o in outs])
                if all(d is None for d in dys):
                    continue
            bw.grad_of = node.id
            g = node.grad
            rec.source = source if g is not None and g.builtin else None
            _backprop_node(tape, node, dys, grads, live, bw)
            for o in outs:  # its gradient is complete and used: let it go
                if o.id not in source_ids:
                    grads.pop(o.id, None)
    result = []
    for s in flat_sources:
        g = grads.get(s.id)
        if g is None and unconnected_gradients == "zero":
            g = ops.zeros_like(s)
        result.append(g)
    return restructure(sources, iter(result))


def _check_request(target, sources, unconnected_gradients):
    """The targets and the flat list of sources, or a named error for a bad request."""
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError(
            f"Tape.gradient: unconnected_gradients must be 'none' or 'zero', "
            f"got {unconnected_gradients!r}"
        )
    targets = list(target) if isinstance(target, (list, tuple)) else [target]
    flat_sources = list(flatten_tensors([sources]))
    for s in targets + flat_sources:
        if not isinstance(s, Tensor):
            raise TypeError(f"Tape.gradient: expected Tensors, got {type(s).__name__}")
    for s in flat_sources:
        if s._shape_dtype()[1].kind != "f":
            raise TypeError(
                f"Tape.gradient: source {s._label()} is {s._shape_dtype()[1]}; only floating "
                "tensors have gradients (its gradient would always be None): compute with a "
                "float copy, x = tv.cast(x, 'float32'), and differentiate with respect to it"
            )
    return targets, flat_sources


def _relevant_nodes(tape, live: set) -> list:
    """The nodes, in order, that read a ``live`` tensor (a source, or a floating output of an
    earlier such node); ``live`` grows to every tensor a source reaches."""
    relevant = []
    for node in tape.nodes:
        for t in node.inputs.values():
            if t.id in live:
                relevant.append(node)
                for o in node.outputs:
                    d = o._data
                    if (d.dtype if d is not None else o._meta[1]).kind == "f":
                        live.add(o.id)
                break
    return relevant


def _backward_recording(tape):
    """The recording the gradient's ops run under: every tape recording now records them
    (higher order), the tape being differentiated too when its own ``with`` block is open
    (TensorFlow's rule; the nodes to walk are already chosen, so those it adds are not
    walked), and a ``BackwardPass`` gives them to ``tape.backward_nodes``. Values above
    ``settings.backward_keep_bytes`` are kept by shape, unless a tape needs them."""
    outer = recording.current()
    tapes = outer.tapes if outer is not None else ()
    enclosing = outer.backward if outer is not None else ()  # a gradient inside a gradient
    limit = None if tapes or enclosing else engine.settings.backward_keep_bytes
    bw = BackwardPass(tape, limit)
    rec = recording.Recording(tapes, enclosing + (bw,), None, outer.observer if outer else None)
    return rec, bw


def _seed(targets, output_gradients):
    grads = {}
    if output_gradients is not None and not isinstance(output_gradients, (list, tuple)):
        output_gradients = [output_gradients]
    if output_gradients is not None and len(output_gradients) != len(targets):
        raise ValueError(
            f"Tape.gradient: {len(targets)} targets but {len(output_gradients)} output_gradients"
        )
    for i, t in enumerate(targets):
        if output_gradients is not None and output_gradients[i] is not None:
            dy = output_gradients[i]
            if not isinstance(dy, Tensor):
                dy = Tensor(np.asarray(dy, dtype=t.dtype))
            if dy.shape != t.shape:
                raise ValueError(
                    f"Tape.gradient: output_gradients[{i}] has shape {dy.shape}, "
                    f"expected the target's shape {t.shape}"
                )
        else:
            if t.size != 1:
                raise ValueError(
                    f"Tape.gradient: the target has shape {t.shape}, not a scalar; pass "
                    "output_gradients (dy of the target's shape) or reduce it, e.g. tv.sum(y)"
                )
            if t.dtype.kind != "f":
                raise TypeError(f"Tape.gradient: the target must be floating, got {t.dtype}")
            dy = Tensor(np.ones(t.shape, t.dtype))
        grads[t.id] = grads[t.id] + dy if t.id in grads else dy
    return grads


def _backprop_node(tape, node, dys, grads, live, recorder):
    """One step of reverse mode at ``node``: its VJP for the inputs a source reaches, each
    gradient checked and reduced to its input's shape, then added to that input's total;
    ``recorder`` (the ``BackwardPass``) records the step."""
    dy = dys[0] if len(dys) == 1 else _dy_per_output(node, dys)
    needed = []  # the inputs a source reaches (a loop: no comprehension frame per node)
    for k, x in node.inputs.items():
        if x.id in live:
            needed.append(k)
    backward_nodes = tape.backward_nodes
    first_backward = len(backward_nodes)
    thunks = node.primitive.vjp(node, dy, needed)
    anomaly = recording.anomaly_hook()  # detect_anomaly: gradients made outside kernels too
    step_grads, accumulated = {}, {}
    for name in needed:
        thunk = thunks.get(name)
        if thunk is None:
            continue
        x = node.inputs[name]
        if type(x) is Constant and not all(s.needed for s in node.saved):
            raise _constant_input_error(node, name)
        g = thunk() if callable(thunk) else thunk
        xd = x._data
        gd = g._data if type(g) is Tensor else None
        if gd is None or xd is None or gd.shape != xd.shape or gd.dtype != xd.dtype:
            g = checked_gradient(node, name, x, g)
        if anomaly is not None:
            anomaly.gradient(node, name, g)
        step_grads[name] = g
        prev = grads.get(x.id)
        if prev is None:
            grads[x.id] = g
        else:
            grads[x.id] = accumulated[name] = ops.add(prev, g)
    made = len(backward_nodes) - first_backward
    ids = [backward_nodes[-1].id] if made == 1 else [n.id for n in backward_nodes[first_backward:]]
    tape.backward_steps.append(recorder.step(node.id, dys, step_grads, accumulated, ids))


def _dy_per_output(node, dys) -> tuple:
    """For a node with several outputs: the ``dy`` its VJP gets, zeros for an output no
    gradient reached."""
    return tuple(
        d if d is not None else Tensor(np.zeros(*o._shape_dtype()))
        for d, o in zip(dys, node.outputs)
    )


def _constant_input_error(node, name) -> GradientError:
    return GradientError(
        f"node {node.id} ({node.label}): input {name!r} is a Python number the op made "
        "a constant, so the values its gradient reads were not kept; pass a tensor "
        "(tv.tensor(value)) to differentiate with respect to it"
    )


def checked_gradient(node, name, x, g):
    """The shared validator (``grad_validation``), after the engine's own broadcast
    reduction: the one place a gradient may be summed down to its input's shape."""
    shape, dtype = x._shape_dtype()
    where = f"gradient of {node.label!r} (node {node.id}) for input {name!r}"
    if isinstance(g, Tensor):
        gshape = g._shape_dtype()[0]
        if gshape != shape and reducible(
            shape, gshape, [o._shape_dtype()[0] for o in node.outputs]
        ):
            g = ops.sum_to(g, shape)
    return check_gradient(g, shape, dtype, where)
