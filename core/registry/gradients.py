"""The gradient registry: ``kernel name -> GradConfig``, on the kernel's ``Primitive``.

``register_gradient`` gives a kernel its VJP (``grad_fn(dy, saved, attrs)`` returning
``{input name: () -> Tensor}``, written with ops so it can be differentiated again) and what
the tape saves for it; ``gradient_override`` replaces one within a block (context-local, as a
tape). The table itself is ``core.registry.kernels.kernels.PRIMITIVES``: kernels and gradients are two faces
of one ``Primitive`` per kernel name.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .kernels import BUILTIN_GRADIENTS, PRIMITIVES, edited, forget_if_empty, primitive

__all__ = [
    "GradConfig",
    "register_gradient",
    "unregister_gradient",
    "get_gradient",
    "grad_in_force",
    "gradient_override",
    "gradient_table",
    "OVERRIDES",
    "UnknownKernelError",
]


@dataclass(frozen=True)
class GradConfig:
    """How to differentiate one kernel: the gradient function and what it needs saved.

    ``inputs_to_save`` names inputs; ``outputs_to_save`` lists output indices. ``saved`` is
    passed to ``grad_fn`` as a tuple: the saved inputs in order, then the saved outputs.
    ``save_all_inputs`` saves every input in order (for kernels with a variable input count).
    """

    kernel_name: str
    grad_fn: Callable
    inputs_to_save: tuple[str, ...] = ()
    outputs_to_save: tuple[int, ...] = ()
    save_all_inputs: bool = False
    builtin: bool = False
    # ((saved input name or output index, (input names whose gradient reads it)), ...):
    # a value only constant inputs' gradients read is not kept (see tape._saved_by_config)
    needed_by: tuple = ()
    # input names the gradient dict may name although a run lacked them (an optional bias)
    optional_inputs: tuple = ()
    # ((input name, LaTeX of the local derivative ∂y/∂input), ...); see core.primitives.define
    formula: tuple = ()
    # True: grad_fn(dy, saved, attrs, needed) also gets the input names needing a gradient
    wants_needed: bool = False
    # what the tape saves, worked out once: ((is_input, key, readers or None), ...)
    save_plan: tuple = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self):
        readers = dict(self.needed_by)
        plan = tuple((True, k, readers.get(k)) for k in self.inputs_to_save)
        plan += tuple((False, int(i), readers.get(int(i))) for i in self.outputs_to_save)
        object.__setattr__(self, "save_plan", plan)


def register_gradient(
    name: str,
    grad_fn: Callable,
    inputs_to_save: Sequence[str] = (),
    outputs_to_save: Sequence[int] = (),
    *,
    save_all_inputs: bool = False,
    needed_by: dict | None = None,
    optional_inputs: Sequence[str] = (),
    formula: dict | None = None,
    _builtin: bool = False,
) -> GradConfig:
    """Register the gradient of kernel ``name``; replaces (and warns about) an existing one.

    The kernel must be registered first (``register_kernel``): a name no backend has raises
    ``KeyError`` naming the nearest registered kernels, so a typo is not silently a gradient
    that nothing runs.

    Args:
        name: the kernel name.
        grad_fn: ``grad_fn(dy, saved, attrs) -> {input name: () -> Tensor}``; ``dy`` is a
            Tensor (a tuple of Tensors for multi-output kernels), ``saved`` a tuple of the
            saved inputs then the saved outputs. Only the thunks that are needed are called.
        inputs_to_save: names of the inputs the gradient needs.
        outputs_to_save: indices of the outputs the gradient needs.
        needed_by: optional ``{saved input name or output index: (input names)}``: which
            inputs' gradients read each saved value. A value that only gradients of
            constants (Python numbers, ``x * 0.5``) read is then not kept.
        optional_inputs: input names the kernel may be run without (an optional bias): the
            gradient dict may name them when absent. Any other name that is not an input of
            the run is an error (a misspelt name would give a silent zero gradient).
        formula: optional ``{input name: LaTeX}`` of the local derivative ∂y/∂input, with
            ``{x}``/``{a}``/``{b}``/``{y}`` standing for inputs and output (``{dy}`` where the
            formula is the whole gradient); tapeviz shows it with the user's numbers.

    Returns:
        The registered ``GradConfig``.

    Example:
        >>> import tapeviz as tv
        >>> g = tv.get_gradient("Relu")
        >>> cfg = tv.register_gradient("Relu", lambda dy, saved, attrs: {"x": lambda: dy})
        ... # doctest: +SKIP
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_gradient: name must be a non-empty kernel name, got {name!r}")
    if not callable(grad_fn):
        raise TypeError(f"register_gradient({name!r}): grad_fn must be callable, got {grad_fn!r}")
    if isinstance(inputs_to_save, str):
        raise TypeError(
            f"register_gradient({name!r}): inputs_to_save must be a sequence of input names, "
            f"got the string {inputs_to_save!r}"
        )
    prim = PRIMITIVES.get(name)
    if not _builtin and (prim is None or not prim.kernels):
        raise UnknownKernelError(_unknown_kernel_message(name))
    config = GradConfig(
        name,
        grad_fn,
        tuple(inputs_to_save),
        tuple(int(i) for i in outputs_to_save),
        save_all_inputs,
        _builtin,
        tuple((k, tuple(v)) for k, v in (needed_by or {}).items()),
        tuple(optional_inputs),
        tuple((str(k), str(v)) for k, v in (formula or {}).items()),
    )
    prim = primitive(name)
    if _builtin:
        BUILTIN_GRADIENTS.add(name)
    if prim.grad is not None and not _builtin:
        warnings.warn(
            f"register_gradient: overriding the gradient of kernel {name!r}", stacklevel=2
        )
    prim.grad = config
    edited()
    return config


class UnknownKernelError(KeyError):
    """A kernel name no backend has (``register_gradient`` of a typo); a ``KeyError``."""

    def __str__(self) -> str:  # the message as written (KeyError would quote it)
        return str(self.args[0]) if self.args else ""


def _unknown_kernel_message(name: str) -> str:
    """``register_gradient`` for a name no backend has a kernel for: a typo would otherwise
    register a gradient nothing ever runs. Names the nearest registered kernels."""
    import difflib

    known = sorted(n for n, p in PRIMITIVES.items() if p.kernels)
    lower = {k.lower(): k for k in known}
    near = [lower[k] for k in difflib.get_close_matches(name.lower(), list(lower), n=3)]
    hint = f"did you mean {', '.join(repr(n) for n in near)}? " if near else ""
    return (
        f"register_gradient({name!r}): no kernel named {name!r} is registered on any backend; "
        f"{hint}register the kernel first (tv.register_kernel({name!r}, backend, fn)), then "
        "its gradient"
    )


def unregister_gradient(name: str) -> None:
    """Remove the gradient of kernel ``name``; a ``KeyError`` if it has none."""
    prim = PRIMITIVES.get(name)
    if prim is None or prim.grad is None:
        raise KeyError(f"no gradient is registered for kernel {name!r}")
    prim.grad = None
    edited()
    forget_if_empty(name)


def get_gradient(name: str) -> GradConfig | None:
    """The ``GradConfig`` of kernel ``name`` in this context (a ``gradient_override`` in
    force here wins), or ``None`` when it is not differentiable."""
    prim = PRIMITIVES.get(name)
    if prim is None:
        overrides = OVERRIDES.get()
        return overrides.get(name) if overrides else None
    return grad_in_force(prim)


def grad_in_force(prim) -> GradConfig | None:
    """The gradient ``prim``'s nodes get when recorded in this context: its own, or a
    ``gradient_override`` in force here."""
    overrides = OVERRIDES.get()
    return overrides.get(prim.name, prim.grad) if overrides else prim.grad


# the gradient_override blocks open in this context: {kernel name: GradConfig}. A context
# variable, as the tape's Recording: another thread (fit_in_thread) or an asyncio task that
# did not open the block keeps the registered gradients (engine.run_kernel reads it)
OVERRIDES: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "gradient_overrides", default=None
)


@contextlib.contextmanager
def gradient_override(
    name: str,
    grad_fn: Callable,
    inputs_to_save: Sequence[str] | None = None,
    outputs_to_save: Sequence[int] | None = None,
):
    """Within the block, kernel ``name`` uses ``grad_fn``; the previous gradient comes back
    on exit, also when the block raises.

    The override is context-local, as a tape is: it holds for the code in the block (and
    the tasks it starts with a copy of its context), not for other threads running at the
    same time. Without ``inputs_to_save``/``outputs_to_save`` the previous config's choices
    are kept. Nodes recorded inside the block keep the override until their gradient is
    computed.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"gradient_override: name must be a non-empty kernel name, got {name!r}")
    if not callable(grad_fn):
        raise TypeError(f"gradient_override({name!r}): grad_fn must be callable, got {grad_fn!r}")
    primitive(name)  # a kernel registered later in the block finds its primitive
    previous = get_gradient(name)
    if inputs_to_save is None:
        inputs_to_save = previous.inputs_to_save if previous else ()
    if outputs_to_save is None:
        outputs_to_save = previous.outputs_to_save if previous else ()
    override = GradConfig(
        name,
        grad_fn,
        tuple(inputs_to_save),
        tuple(outputs_to_save),
        previous.save_all_inputs if previous else False,
        optional_inputs=previous.optional_inputs if previous else (),
    )
    token = OVERRIDES.set({**(OVERRIDES.get() or {}), name: override})
    try:
        yield override
    finally:
        OVERRIDES.reset(token)
        forget_if_empty(name)


def gradient_table() -> dict[str, GradConfig]:
    """The whole gradient registry as ``{kernel: GradConfig}`` (a copy)."""
    table = {n: p.grad for n, p in PRIMITIVES.items() if p.grad is not None}
    table.update(OVERRIDES.get() or {})
    return table
