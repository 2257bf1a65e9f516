"""The three registries of the TensorFlow.js design: backends, kernels and gradients.

* kernel registry: ``(kernel name, backend name) -> KernelConfig``; a kernel works on raw
  arrays: ``fn(inputs: dict[str, array], attrs: dict) -> array | tuple[array, ...]``.
* gradient registry (``core/registry/gradients.py``): ``kernel name -> GradConfig``;
  ``grad_fn(dy, saved, attrs)`` returns ``{input name: () -> Tensor}``, written with ops.
* backend registry: ``name -> Backend`` made by a factory, the highest priority one active.

Kernels and gradients are two faces of one table: ``kernel name -> Primitive``
(``core/registry/primitive.py``), which also holds the batching rule (``register_batching``). The
registries know nothing about particular kernels: the built-in primitives' definition
tables fill them (``core/primitives``: one row per primitive, its numpy kernel and VJP), and
the numba backend adds its compiled kernels (``core/backends/numba``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .backends import (
    BACKEND_FACTORIES,
    BACKENDS,
    GLOBAL_BACKEND,
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
    "Primitive",
    "Backend",
    "primitive",
    "register_batching",
    "register_decomposition",
    "remove_primitive",
    "forget_if_empty",
    "edited",
    "EDITS",
    "BUILTIN_GRADIENTS",
    "PRIMITIVES",
    "register_kernel",
    "unregister_kernel",
    "get_kernel",
    "kernels_for_backend",
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


# the kernels whose gradient ships with tapeviz: a gradient registered for one of them is an
# override (drawn dashed); one registered for a kernel of the user's is simply its gradient
BUILTIN_GRADIENTS: set[str] = set()


# kernel name -> Primitive: the one table behind the kernel and gradient registries
PRIMITIVES: dict[str, Primitive] = {}
# how many times a kernel or gradient was registered or removed: a compiled program traced
# at the same count runs the kernels it was traced with (tv.jit's guard; ``edited``)
EDITS = [0]


def edited() -> None:
    """Note that a kernel, gradient or primitive was added, replaced or removed."""
    EDITS[0] += 1


def primitive(name: str) -> Primitive:
    """The registry's ``Primitive`` for kernel ``name`` (made empty on first use)."""
    prim = PRIMITIVES.get(name)
    if prim is None:
        prim = PRIMITIVES[name] = Primitive(name)
        edited()
    return prim


def forget_if_empty(name: str) -> None:
    prim = PRIMITIVES.get(name)
    if (
        prim is not None
        and not prim.kernels
        and prim.grad is None
        and prim.batch is None
        and prim.decomposition is None
    ):
        del PRIMITIVES[name]
        edited()


def remove_primitive(name: str) -> None:
    """Forget kernel ``name`` entirely: its kernels on every backend, gradient and rules."""
    PRIMITIVES.pop(name, None)
    BUILTIN_GRADIENTS.discard(name)
    edited()


def register_decomposition(name: str, fn) -> None:
    """The ops kernel ``name`` stands for: ``fn(inputs: {name: Tensor}, attrs) -> Tensor``;
    the lesson graph draws them in its nodes' place (a fused kernel, step by step)."""
    if not callable(fn):
        raise TypeError(f"register_decomposition({name!r}): fn must be callable, got {fn!r}")
    primitive(name).decomposition = fn


def register_batching(name: str, rule) -> None:
    """How the batched replay runs kernel ``name`` on inputs with a leading batch axis:
    ``rule(fn, ins, attrs, size) -> tuple of arrays`` (``core/registry/batching.py`` has the
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
        name: kernel name, e.g. ``"Add"`` (see ``core.registry.kernels.kernel_names``) or a new one.
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
    edited()
    return config


def unregister_kernel(name: str, backend: str) -> None:
    """Remove kernel ``name`` from ``backend``; a clear ``KeyError`` if it is not there."""
    prim = PRIMITIVES.get(name)
    if prim is None or backend not in prim.kernels:
        raise KeyError(_missing_kernel_message(name, backend))
    del prim.kernels[backend]
    edited()
    forget_if_empty(name)


def get_kernel(name: str, backend: str | None = None) -> KernelConfig:
    """The ``KernelConfig`` for ``name`` on ``backend`` (the active backend by default)."""
    backend = backend or get_backend()
    prim = PRIMITIVES.get(name)
    config = prim.kernels.get(backend) if prim is not None else None
    if config is None:
        if backend not in BACKENDS and ensure_loaded(backend):  # loads its kernels (numba)
            return get_kernel(name, backend)
        raise KeyError(_missing_kernel_message(name, backend))
    return config


def kernels_for_backend(backend: str) -> list[KernelConfig]:
    """Every kernel registered for ``backend``, sorted by name."""
    ensure_loaded(backend)
    return sorted(
        (p.kernels[backend] for p in PRIMITIVES.values() if backend in p.kernels),
        key=lambda c: c.kernel_name,
    )


def _missing_kernel_message(name: str, backend: str) -> str:
    prim = PRIMITIVES.get(name)
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
    return {(n, b): c for n, p in PRIMITIVES.items() for b, c in p.kernels.items()}


# --- backends (core/registry/backends.py) ---------------------------------------------------


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
    if name not in BACKEND_FACTORIES:
        raise ValueError(
            f"unregister_backend: backend {name!r} is not registered "
            f"(registered: {', '.join(list_backends())})"
        )
    del BACKEND_FACTORIES[name]
    BACKENDS.pop(name, None)
    for kernel, prim in list(PRIMITIVES.items()):
        if prim.kernels.pop(name, None) is not None:
            edited()
            forget_if_empty(kernel)
    if GLOBAL_BACKEND[0] == name:
        GLOBAL_BACKEND[0] = None
