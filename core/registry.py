"""The three registries of the TensorFlow.js design: backends, kernels and gradients.

* kernel registry: ``(kernel name, backend name) -> KernelConfig``; a kernel works on raw
  arrays: ``fn(inputs: dict[str, array], attrs: dict) -> array | tuple[array, ...]``.
* gradient registry: ``kernel name -> GradConfig``; ``grad_fn(dy, saved, attrs)`` returns
  ``{input name: () -> Tensor}`` and is written with ops, so it can be differentiated again.
* backend registry: ``name -> Backend`` made by a factory, the highest priority one active.

Kernels and gradients are two faces of one table: ``kernel name -> Primitive``
(``core/primitive.py``), which also holds the batching rule (``register_batching``). The
registries know nothing about particular kernels; backends and gradient families fill them
from one explicit list each (``core/backends/<name>/__init__.py``, ``core/gradients``).
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .backend_registry import (
    _BACKEND_FACTORIES,
    _BACKENDS,
    _GLOBAL_BACKEND,
    Backend,
    backend,
    backend_info,
    ensure_loaded,
    get_backend,
    list_backends,
    register_backend,
    set_backend,
)
from .primitive import Primitive

__all__ = [
    "KernelConfig",
    "GradConfig",
    "Primitive",
    "Backend",
    "primitive",
    "register_batching",
    "register_kernel",
    "unregister_kernel",
    "get_kernel",
    "kernels_for_backend",
    "register_gradient",
    "unregister_gradient",
    "get_gradient",
    "gradient_override",
    "register_backend",
    "unregister_backend",
    "set_backend",
    "get_backend",
    "list_backends",
    "backend",
    "backend_info",
]


@dataclass(frozen=True)
class KernelConfig:
    """A backend-specific implementation of one kernel.

    ``delegates_to`` names another backend whose kernel this one forwards to (a visible,
    documented delegation, e.g. numba -> numpy where numpy is faster).
    """

    kernel_name: str
    backend_name: str
    fn: Callable[[dict, dict], Any]
    delegates_to: str | None = None


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
    # ((input name, LaTeX of the local derivative ∂y/∂input), ...); see gradients/formulas.py
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


# kernel name -> Primitive: the one table behind the kernel and gradient registries
_PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str) -> Primitive:
    """The registry's ``Primitive`` for kernel ``name`` (made empty on first use)."""
    prim = _PRIMITIVES.get(name)
    if prim is None:
        prim = _PRIMITIVES[name] = Primitive(name)
    return prim


def _forget_if_empty(name: str) -> None:
    prim = _PRIMITIVES.get(name)
    if prim is not None and not prim.kernels and prim.grad is None and prim.batch is None:
        del _PRIMITIVES[name]


def register_batching(name: str, rule) -> None:
    """How the batched replay runs kernel ``name`` on inputs with a leading batch axis:
    ``rule(fn, ins, attrs, size) -> tuple of arrays`` (``core/batching.py`` has the
    rules of the built-in families); without one it runs once per batch row."""
    if not callable(rule):
        raise TypeError(f"register_batching({name!r}): rule must be callable, got {rule!r}")
    primitive(name).batch = rule


# --- kernels -------------------------------------------------------------------------------


def register_kernel(
    name: str, backend: str, fn: Callable, *, delegates_to: str | None = None
) -> KernelConfig:
    """Register ``fn`` as kernel ``name`` on ``backend`` (replacing an earlier one).

    Args:
        name: kernel name, e.g. ``"Add"`` (see ``core.kernel_names``) or a new one.
        backend: backend name, e.g. ``"numpy"``.
        fn: ``fn(inputs: dict[str, array], attrs: dict) -> array | tuple of arrays``.
        delegates_to: the backend whose kernel ``fn`` forwards to, if any (shown by tapeviz).

    Returns:
        The registered ``KernelConfig``.

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> _ = tv.register_kernel("Cube", "numpy", lambda i, a: i["x"] ** 3)
        >>> tv.run_kernel("Cube", {"x": tv.tensor([2.0])}).numpy()
        array([8.], dtype=float32)
        >>> tv.unregister_kernel("Cube", "numpy")
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_kernel: name must be a non-empty str, got {name!r}")
    if not isinstance(backend, str) or not backend:
        raise TypeError(f"register_kernel: backend must be a non-empty str, got {backend!r}")
    if not callable(fn):
        raise TypeError(f"register_kernel({name!r}, {backend!r}): fn must be callable, got {fn!r}")
    config = KernelConfig(name, backend, fn, delegates_to)
    primitive(name).kernels[backend] = config
    return config


def unregister_kernel(name: str, backend: str) -> None:
    """Remove kernel ``name`` from ``backend``; a clear ``KeyError`` if it is not there."""
    prim = _PRIMITIVES.get(name)
    if prim is None or backend not in prim.kernels:
        raise KeyError(_missing_kernel_message(name, backend))
    del prim.kernels[backend]
    _forget_if_empty(name)


def get_kernel(name: str, backend: str | None = None) -> KernelConfig:
    """The ``KernelConfig`` for ``name`` on ``backend`` (the active backend by default)."""
    backend = backend or get_backend()
    prim = _PRIMITIVES.get(name)
    config = prim.kernels.get(backend) if prim is not None else None
    if config is None:
        if backend not in _BACKENDS and ensure_loaded(backend):  # loads its kernels (numba)
            return get_kernel(name, backend)
        raise KeyError(_missing_kernel_message(name, backend))
    return config


def kernels_for_backend(backend: str) -> list[KernelConfig]:
    """Every kernel registered for ``backend``, sorted by name."""
    ensure_loaded(backend)
    return sorted(
        (p.kernels[backend] for p in _PRIMITIVES.values() if backend in p.kernels),
        key=lambda c: c.kernel_name,
    )


def _missing_kernel_message(name: str, backend: str) -> str:
    prim = _PRIMITIVES.get(name)
    where = sorted(prim.kernels) if prim is not None else []
    if where:
        return (
            f"kernel {name!r} is not registered for backend {backend!r} "
            f"(registered for: {', '.join(where)})"
        )
    return f"kernel {name!r} is not registered for any backend (backend {backend!r} asked)"


def kernel_table() -> dict[tuple[str, str], KernelConfig]:
    """The whole kernel registry as ``{(kernel, backend): KernelConfig}`` (a copy)."""
    for name in list_backends():
        ensure_loaded(name)
    return {(n, b): c for n, p in _PRIMITIVES.items() for b, c in p.kernels.items()}


# --- gradients -----------------------------------------------------------------------------


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
    prim = _PRIMITIVES.get(name)
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
    return config


class UnknownKernelError(KeyError):
    """A kernel name no backend has (``register_gradient`` of a typo); a ``KeyError``."""

    def __str__(self) -> str:  # the message as written (KeyError would quote it)
        return str(self.args[0]) if self.args else ""


def _unknown_kernel_message(name: str) -> str:
    """``register_gradient`` for a name no backend has a kernel for: a typo would otherwise
    register a gradient nothing ever runs. Names the nearest registered kernels."""
    import difflib

    known = sorted(n for n, p in _PRIMITIVES.items() if p.kernels)
    lower = {k.lower(): k for k in known}
    near = [lower[k] for k in difflib.get_close_matches(name.lower(), list(lower), n=3)]
    hint = f"did you mean {', '.join(repr(n) for n in near)}? " if near else ""
    return (
        f"register_gradient({name!r}): no kernel named {name!r} is registered on any backend; "
        f"{hint}register the kernel first (tv.register_kernel({name!r}, backend, fn)), then "
        "its gradient"
    )


# the kernels whose gradient ships with tapeviz: a gradient registered for one of them is an
# override (drawn dashed); one registered for a kernel of the user's is simply its gradient
BUILTIN_GRADIENTS: set[str] = set()


def unregister_gradient(name: str) -> None:
    """Remove the gradient of kernel ``name``; a ``KeyError`` if it has none."""
    prim = _PRIMITIVES.get(name)
    if prim is None or prim.grad is None:
        raise KeyError(f"no gradient is registered for kernel {name!r}")
    prim.grad = None
    _forget_if_empty(name)


def get_gradient(name: str) -> GradConfig | None:
    """The ``GradConfig`` of kernel ``name`` in this context (a ``gradient_override`` in
    force here wins), or ``None`` when it is not differentiable."""
    prim = _PRIMITIVES.get(name)
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
        _forget_if_empty(name)


def gradient_table() -> dict[str, GradConfig]:
    """The whole gradient registry as ``{kernel: GradConfig}`` (a copy)."""
    table = {n: p.grad for n, p in _PRIMITIVES.items() if p.grad is not None}
    table.update(OVERRIDES.get() or {})
    return table


# --- backends (core/backend_registry.py) ---------------------------------------------------


def unregister_backend(name: str) -> None:
    """Remove backend ``name`` and every kernel registered for it.

    If it was the active backend, the highest-priority remaining one becomes active.

    Example:
        >>> import tapeviz as tv
        >>> tv.register_backend("scratch", priority=-1)
        >>> _ = tv.register_kernel("Tanh", "scratch", lambda i, a: i["x"])
        >>> tv.unregister_backend("scratch")
        >>> "scratch" in tv.list_backends()
        False
    """
    if name not in _BACKEND_FACTORIES:
        raise ValueError(
            f"unregister_backend: backend {name!r} is not registered "
            f"(registered: {', '.join(list_backends())})"
        )
    del _BACKEND_FACTORIES[name]
    _BACKENDS.pop(name, None)
    for kernel, prim in list(_PRIMITIVES.items()):
        if prim.kernels.pop(name, None) is not None:
            _forget_if_empty(kernel)
    if _GLOBAL_BACKEND[0] == name:
        _GLOBAL_BACKEND[0] = None
