"""Rows into the registry: ``install`` (every built-in primitive is a ``Primitive`` row of
its family's table in ``core/primitives``), ``family`` and ``define_op`` (a new op).

Everything a primitive is, in one call: its kernel per backend, its VJP and what the VJP
reads, the formula the stepper shows, its batching rule and the ops it stands for (drawn in
its place by the lesson graph). The VJP is written with ops, so it differentiates again
(Hessians); a gradient that cannot be (numpy or compiled code) is a custom style's
(``CompiledLayer``, ``DifferentiableFunction``), which say so. The op ``define_op``
returns converts its arguments and calls ``engine.bind``; reverse mode, forward mode
(``jvp``, via the VJP), Hessians, the audit, ``check_grads``, the graph and the stepper then
work on it with nothing else to register.

    >>> import numpy as np, tapeviz as tv
    >>> cube = tv.define_op(
    ...     "DocCube",
    ...     kernels={"numpy": lambda ins, attrs: ins["x"] ** 3},
    ...     vjp=lambda dy, saved, attrs: {"x": lambda: dy * 3 * saved[0] ** 2},
    ...     inputs_to_save=("x",),
    ...     formula={"x": "3{x}^2"},
    ... )
    >>> x = tv.variable([2.0])
    >>> with tv.Tape() as tape:
    ...     y = cube(x)
    >>> tape.gradient(y, x).numpy()
    array([12.], dtype=float32)
    >>> tv.remove_op("DocCube")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..engine.dispatch import bind
from ..ops.arguments import as_tensor
from ..registry.gradients import register_gradient
from ..registry.kernels import (
    PRIMITIVES,
    Primitive,
    register_batching,
    register_decomposition,
    register_kernel,
    remove_primitive,
)
from ..tensors.tensor import Tensor

__all__ = ["define_op", "remove_op", "family", "install"]

_DEFINED: set[str] = set()  # the names define_op made: the only ones remove_op forgets


def family(*rows: Primitive, batch: Callable | None = None) -> tuple:
    """A family's table: its rows, with ``batch`` the batching rule of those without one."""
    for row in rows:
        if row.declared.batch is None and batch is not None:
            row.declared = row.declared._replace(batch=batch)
            row.batch = batch
    return rows


def install(row: Primitive, *, builtin: bool = False) -> Primitive:
    """Put primitive ``row`` in the registry with its declared fields in force: its kernels,
    then its VJP, batching rule and decomposition; registering a row again restores it (a
    kernel or gradient removed or replaced since is back as written). ``builtin``: a gradient
    tapeviz ships (one a user registers later over it is an override, drawn dashed).
    Kernels another backend registered on an earlier object of that name stay."""
    earlier = PRIMITIVES.get(row.name)
    if earlier is not row:
        if earlier is not None:
            row.kernels.update(earlier.kernels)
        PRIMITIVES[row.name] = row
    d = row.declared
    for backend, fn in d.kernels.items():
        register_kernel(row.name, backend, fn)
    if d.vjp is not None:
        register_gradient(
            row.name,
            d.vjp,
            d.inputs_to_save,
            d.outputs_to_save,
            save_all_inputs=d.save_all_inputs,
            needed_by=d.needed_by,
            optional_inputs=d.optional,
            formula=d.formula,
            _builtin=builtin,
        )
    if d.batch is not None:
        register_batching(row.name, d.batch)
    if d.decomposition is not None:
        register_decomposition(row.name, d.decomposition)
    return row


def define_op(
    name: str,
    *,
    kernels: Mapping[str, Callable],
    inputs: Sequence[str] = ("x",),
    vjp: Callable | None = None,
    inputs_to_save: Sequence[str] = (),
    outputs_to_save: Sequence[int] = (),
    formula: Mapping[str, str] | None = None,
    batch: Callable | None = None,
    decomposition: Callable | None = None,
    doc: str | None = None,
) -> Callable:
    """Define a new op, and its primitive, in one place.

    Args:
        name: the kernel name its nodes carry (must be new: ``remove_op`` frees it).
        kernels: ``{backend name: fn(arrays: {input name: array}, attrs) -> array | tuple}``;
            at least one (``"numpy"`` is always there).
        inputs: the input names, in the order the op takes them positionally.
        vjp: ``vjp(dy, saved, attrs) -> {input name: () -> Tensor}``, written with ops (so
            it differentiates again: Hessians), ``saved`` the values named by ``inputs_to_save``
            then ``outputs_to_save``; None: the op is not differentiable (a clear error says so).
        inputs_to_save: input names the VJP reads; ``outputs_to_save``: output indices it
            reads (the names ``tv.register_gradient`` and the built-in rows use).
        formula: ``{input name: LaTeX of ∂y/∂input}`` with ``{x}``/``{y}`` for the values,
            shown by the stepper and the graph with the user's numbers.
        batch: how to run the kernel once on a stack of inputs (``core.registry.kernels.batching``: e.g.
            ``batching.elementwise``); None: the batched replay runs it row by row.
        decomposition: ``f(inputs: {name: Tensor}, attrs) -> Tensor`` with ordinary ops; the
            lesson graph draws those ops in the node's place.
        doc: the op's docstring.

    Returns:
        The op: ``op(*tensors, **attrs) -> Tensor`` (a tuple for several outputs), with
        ``op.primitive`` its ``Primitive``. Numbers and arrays are converted as every op
        converts them (a Python number takes the first tensor's dtype).
    """
    _check_definition(name, kernels, inputs, vjp, inputs_to_save)
    row = Primitive(
        name, kernels=dict(kernels), vjp=vjp, inputs_to_save=inputs_to_save,
        outputs_to_save=outputs_to_save,
        formula=formula, batch=batch, decomposition=decomposition,
    )  # fmt: skip
    try:
        prim = install(row)
    except Exception:
        remove_primitive(name)  # nothing half-registered stays behind
        raise
    _DEFINED.add(name)
    names = tuple(inputs)

    def op(*args, **attrs):
        if len(args) != len(names):
            raise TypeError(
                f"{name}: expected {len(names)} input(s) ({', '.join(names)}), got {len(args)}"
            )
        like = next((a for a in args if isinstance(a, Tensor)), None)
        ins = {n: as_tensor(a, name, like) for n, a in zip(names, args)}
        return bind(prim, ins, attrs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc or f"The op {name!r} (made by tv.define_op)."
    op.primitive = prim
    return op


def remove_op(name: str) -> None:
    """Forget the op ``define_op`` made as ``name``: its kernels, gradient and rules."""
    if name not in _DEFINED:
        known = name in PRIMITIVES
        raise KeyError(
            f"remove_op: {name!r} is a kernel tv.define_op did not make (built-in, or registered "
            "with tv.register_kernel: tv.unregister_kernel removes those)"
            if known
            else f"remove_op: no op named {name!r} is defined"
        )
    _DEFINED.discard(name)
    remove_primitive(name)


def _check_definition(name, kernels, inputs, vjp, inputs_to_save) -> None:
    where = f"define_op({name!r})"
    if not isinstance(name, str) or not name:
        raise TypeError(f"define_op: name must be a non-empty str, got {name!r}")
    prim = PRIMITIVES.get(name)
    if prim is not None and (prim.kernels or prim.grad is not None):
        raise ValueError(
            f"{where}: an op or kernel named {name!r} already exists; pick a new name "
            "(or tv.remove_op it first)"
        )
    if not isinstance(kernels, Mapping) or not kernels:
        raise TypeError(
            f"{where}: kernels must be a non-empty dict {{backend: fn(arrays, attrs)}}, "
            f"got {kernels!r}"
        )
    if isinstance(inputs, str) or not inputs:
        raise TypeError(f"{where}: inputs must be a sequence of input names, got {inputs!r}")
    unknown = [s for s in inputs_to_save if s not in inputs]
    if unknown:
        raise ValueError(
            f"{where}: inputs_to_save names {unknown}, which are not inputs {tuple(inputs)}"
        )
    if vjp is not None and not callable(vjp):
        raise TypeError(f"{where}: vjp must be callable, got {vjp!r}")
