"""``Primitive``: what one kind of tape node *is*, in one place.

A primitive has a name; a kernel per backend (raw arrays in, raw arrays out); its VJP and
what the VJP saves (a ``GradConfig``, written in ops so it differentiates again, with the
LaTeX ``formula`` of its local derivatives); an optional batching rule (how to run it once
on a stack of inputs, for gradient checking); and flags: its display ``kind``, whether its
gradient can be differentiated again (``once_only``) and, for primitives built by the custom
gradient styles, a ``forward`` that re-runs it on tensors. Every tape node points at its
primitive (``node.primitive``); a node's ``style`` is presentation derived from it.

Built-in primitives live in the registry (``core/registry/kernels.py``: one ``Primitive`` per kernel
name), each filled from one ``Definition`` row of its family's table (``core/primitives``).
``custom_grad``, ``DifferentiableFunction`` and ``CompiledLayer`` build their own
(``core/custom/builder.py``), and ``tv.define_op`` makes a new op from one definition
(``core/primitives/define.py``). The interpreters read nothing else: reverse mode (``core/autodiff/backward.py``)
and the audit call ``Primitive.vjp``; the batched replay and the audit re-run a node with
``Primitive.evaluate``; the lesson graph draws a ``decomposition`` in a fused node's place.

The engine imports this module, never the reverse (it imports only the layers below: the
tensor, the recording state and the gradient validator).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

import numpy as np

from ..tensors.recording import no_grad
from ..tensors.tensor import Tensor
from .validation import GradientError, NotDifferentiableError, check_keys, stale_error

__all__ = ["Primitive", "Declared", "KINDS"]

# display kinds: tapeviz draws each its own way; a new kind falls back to "builtin"'s look
KINDS = ("builtin", "custom_grad", "DifferentiableFunction", "CompiledLayer")


class Declared(NamedTuple):
    """A row's kernel and gradient fields as written (``Primitive``'s docstring says what
    each is); ``install`` registers them, and registers them again to restore a built-in."""

    kernels: dict
    vjp: Callable | None
    inputs_to_save: tuple
    outputs_to_save: tuple
    save_all_inputs: bool
    needed_by: Mapping | None
    optional: tuple
    formula: Mapping | None
    batch: Callable | None
    decomposition: Callable | None
    numba: str | None


class Primitive:
    """One kind of node: kernels per backend, VJP, batching rule, formula and flags.

    A built-in primitive is written as one row of its family's table (``core/primitives``),
    every field by keyword, e.g. exp::

        Primitive(K.EXP, kernel=unary(np.exp), vjp=_exp, outputs_to_save=(0,),
                  formula={"x": "{y}"}, batch=B.elementwise)

    ``install`` (``core/primitives/define.py``) puts a row in the registry with those fields
    in force; ``tv.define_op`` builds one for a new op. The custom gradient styles build
    their own, per call, and give them a gradient directly.

    Row fields (what ``install`` registers; kept as written in ``declared``):
        kernel: the numpy kernel, ``fn(arrays: {input name: array}, attrs) -> array | tuple``.
        kernels: ``{backend name: kernel}`` for other backends.
        numba: the compiled kernel in ``core/backends/numba`` as ``"module.name"``
            (``"reduce.sum_kernel"``), registered by the numba backend when it loads (numba
            is imported on first use); None: numba runs the numpy kernel, saying why.
        vjp: ``vjp(dy, saved, attrs) -> {input name: () -> Tensor}``, written with ops (so it
            differentiates again), or None: not differentiable.
        inputs_to_save: the input names the VJP reads (``save_all_inputs``: every input, in
            order, for an op with a variable input count).
        outputs_to_save: the output indices the VJP reads; ``saved`` holds the saved inputs,
            then these outputs.
        needed_by: ``{saved input name or output index: (input names)}``: whose gradient reads
            each saved value (a value only constants' gradients read is not kept).
        optional: inputs the kernel may run without (an optional bias).
        formula: ``{input name: LaTeX of ∂y/∂input}`` (``{x}``, ``{y}`` slots) for the stepper
            and the graph.

    Attributes in force (what the engine and the interpreters read):
        name: the kernel name nodes of it carry (``node.kernel``).
        label: what to call its nodes (the user's function name for custom primitives).
        kernels: ``{backend name: KernelConfig}``.
        grad: the ``GradConfig`` (VJP, what it saves, formula), or None: not differentiable.
        batch: ``rule(fn, ins, attrs, size) -> tuple of arrays`` running the kernel once on
            inputs with a leading batch axis (``ins``: ``{name: (array, batched)}``), or None
            (the replay then runs it once per row).
        kind: display kind (``KINDS``).
        forward: for primitives without kernels: ``forward(*tensors)`` re-runs the node on
            tensors (the audit and the batched replay use it, unrecorded).
        once_only: its gradient is not differentiable again (hand-written numpy or compiled
            code); ``once_only_error`` is the one message for it.
        why_not: for a primitive built without a gradient (``grad`` None), why, and what to
            do; ``no_gradient_error`` is the one message for differentiating it.
        decomposition: ``f(inputs: {name: Tensor}, attrs) -> Tensor`` computing a node's
            output with ordinary ops (a fused kernel's parts), or None: the lesson graph
            draws those ops in the node's place.
    """

    __slots__ = (
        "name", "label", "kernels", "grad", "batch", "kind", "forward", "once_only", "why_not",
        "decomposition", "declared", "__weakref__",
    )  # fmt: skip

    def __init__(self, name, *, kernel=None, kernels=None, vjp=None, inputs_to_save=(),
                 outputs_to_save=(), save_all_inputs=False, needed_by=None, optional=(),
                 formula=None, batch=None, decomposition=None, numba=None, label=None,
                 kind="builtin",
                 forward=None, once_only=False, why_not=None):  # fmt: skip
        self.name = name
        self.label = label or name
        self.kernels: dict = {}
        self.grad = None
        self.batch = batch
        self.kind = kind
        self.forward = forward
        self.once_only = once_only
        self.why_not = why_not
        self.decomposition = decomposition
        backends = {"numpy": kernel} if kernel is not None else {}
        self.declared = Declared(
            {**backends, **(kernels or {})}, vjp, tuple(inputs_to_save), tuple(outputs_to_save),
            save_all_inputs, needed_by, tuple(optional), formula, batch, decomposition, numba,
        )  # fmt: skip

    @property
    def formula(self) -> dict:
        """``{input name: LaTeX of the local derivative}`` (empty without one)."""
        return dict(self.grad.formula) if self.grad is not None else {}

    @property
    def replayable(self) -> bool:
        """True when ``evaluate`` can re-run a node of it (a kernel or a ``forward``)."""
        return bool(self.kernels) or self.forward is not None

    def evaluate(self, node, arrays: dict, attrs=None) -> tuple:
        """Re-run a node of this primitive on raw arrays (``{input name: array}``, in the
        node's input order): its kernel on the node's backend, else ``forward`` on tensors,
        unrecorded. Returns a tuple of arrays. The one way audit and replay run a node."""
        attrs = node.attrs if attrs is None else attrs
        config = self.kernels.get(node.backend)
        if config is not None:
            out = config.fn(arrays, attrs)
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if self.forward is None:
            raise LookupError(
                f"node {node.id} ({node.label}): primitive {self.name!r} has no kernel on "
                f"backend {node.backend!r} and no forward to re-run it"
            )
        with no_grad():
            out = self.forward(*[Tensor(np.asarray(a)) for a in arrays.values()])
        out = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(o.numpy() if isinstance(o, Tensor) else np.asarray(o) for o in out)

    def vjp(self, node, dy, needed, saved=None) -> dict:
        """The one way to call a node's VJP (reverse mode and the audit both do).

        Args:
            node: a recorded node of this primitive (its ``grad`` is the one in force when
                it was recorded: a ``gradient_override`` or a custom style's per-call one).
            dy: the gradient of its output (a tuple, one per output, for several).
            needed: the input names whose gradient is wanted; a gradient that makes every
                input's at once (``DifferentiableFunction``) gets it, as PyTorch's
                ``needs_input_grad``; thunks of the others are simply not called.
            saved: the values the VJP reads, when the caller supplies its own (the audit's
                float64 ones); by default the node's, checked for release and mutation.

        Returns:
            ``{input name: zero-argument callable -> gradient}``, keys checked against the
            node's inputs.
        """
        grad = node.grad
        if grad is None:
            raise self.no_gradient_error(node)
        if saved is None:  # the node's own, each checked (inline: once per backward step)
            saved = ()
            if node.saved:
                saved = []
                for s in node.saved:
                    t = s.tensor
                    if t is None and s.needed:
                        raise _released_error(node)
                    if t is not None and t._version != s.version:
                        raise stale_error(node, s)
                    saved.append(t)
                saved = tuple(saved)
        if grad.wants_needed:
            thunks = grad.grad_fn(dy, saved, node.attrs, frozenset(needed))
        else:
            thunks = grad.grad_fn(dy, saved, node.attrs)
        if type(thunks) is not dict and not isinstance(thunks, dict):
            raise GradientError(
                f"gradient of {node.label!r} (node {node.id}) must return a dict from input "
                f"name to a zero-argument callable, got {type(thunks).__name__}"
            )
        if not thunks.keys() <= node.inputs.keys():
            where = f"gradient of {node.label!r} (node {node.id})"
            check_keys(where, thunks, node.inputs, grad.optional_inputs)
        return thunks

    def once_only_error(self, why: str, fix: str):
        """The one error for differentiating a ``once_only`` primitive's gradient again."""
        return NotDifferentiableError(
            f"{self.label}: cannot differentiate its gradient again: {why}. {fix}"
        )

    def no_gradient_error(self, node):
        """The one error for differentiating through a node of a primitive with no gradient
        (the same type as ``once_only_error``: reverse mode, audit and check_grads treat a
        node that is not differentiable, or not twice, alike)."""
        where = f"node {node.id}, {node.label}"
        if self.why_not is not None:
            return NotDifferentiableError(f"node {node.id} ({node.label}) is not "
                                          f"differentiable: {self.why_not}")  # fmt: skip
        return NotDifferentiableError(
            f"no gradient is registered for kernel {node.kernel!r} ({where}); register one with "
            f"tv.register_gradient({node.kernel!r}, ...) or cut the path with tv.stop_gradient"
        )

    def __repr__(self):
        backends = ", ".join(sorted(self.kernels)) or "no kernels"
        grad = "differentiable" if self.grad is not None else "no gradient"
        return f"Primitive({self.name!r}, {self.kind}, {backends}, {grad})"


def _released_error(node) -> RuntimeError:
    return RuntimeError(
        f"Tape.gradient: the saved values of node {node.id} ({node.label}) were "
        "released by an earlier gradient(); use Tape(persistent=True)"
    )
