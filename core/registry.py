"""The three registries of the TensorFlow.js design: backends, kernels and gradients.

* kernel registry: ``(kernel name, backend name) -> KernelConfig``; a kernel works on raw
  arrays: ``fn(inputs: dict[str, array], attrs: dict) -> array | tuple[array, ...]``.
* gradient registry: ``kernel name -> GradConfig``; ``grad_fn(dy, saved, attrs)`` returns
  ``{input name: () -> Tensor}`` and is written with ops, so it can be differentiated again.
* backend registry: ``name -> Backend`` made by a factory, the highest priority one active.

The registries know nothing about particular kernels; backends fill them from one explicit
list each (``core/backends/<name>/__init__.py``).
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KernelConfig",
    "GradConfig",
    "Backend",
    "register_kernel",
    "unregister_kernel",
    "get_kernel",
    "kernels_for_backend",
    "register_gradient",
    "unregister_gradient",
    "get_gradient",
    "gradient_override",
    "register_backend",
    "set_backend",
    "get_backend",
    "list_backends",
    "backend",
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


@dataclass
class Backend:
    """A backend: a name, a priority and whatever state its kernels need."""

    name: str
    priority: int = 0
    info: dict = field(default_factory=dict)


_KERNELS: dict[tuple[str, str], KernelConfig] = {}
_GRADIENTS: dict[str, GradConfig] = {}
_BACKEND_FACTORIES: dict[str, tuple[Callable[[], Backend], int]] = {}
_BACKENDS: dict[str, Backend] = {}
_GLOBAL_BACKEND: list[str | None] = [None]
_SCOPED_BACKEND: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "tapeviz_backend", default=None
)


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
        >>> import numpy as np, core
        >>> _ = core.register_kernel("Cube", "numpy", lambda i, a: i["x"] ** 3)
        >>> core.run_kernel("Cube", {"x": core.tensor([2.0])}).numpy()
        array([8.], dtype=float32)
        >>> core.unregister_kernel("Cube", "numpy")
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_kernel: name must be a non-empty str, got {name!r}")
    if not isinstance(backend, str) or not backend:
        raise TypeError(f"register_kernel: backend must be a non-empty str, got {backend!r}")
    if not callable(fn):
        raise TypeError(f"register_kernel({name!r}, {backend!r}): fn must be callable, got {fn!r}")
    config = KernelConfig(name, backend, fn, delegates_to)
    _KERNELS[(name, backend)] = config
    return config


def unregister_kernel(name: str, backend: str) -> None:
    """Remove kernel ``name`` from ``backend``; a clear ``KeyError`` if it is not there."""
    if (name, backend) not in _KERNELS:
        raise KeyError(_missing_kernel_message(name, backend))
    del _KERNELS[(name, backend)]


def get_kernel(name: str, backend: str | None = None) -> KernelConfig:
    """The ``KernelConfig`` for ``name`` on ``backend`` (the active backend by default)."""
    backend = backend or get_backend()
    try:
        return _KERNELS[(name, backend)]
    except KeyError:
        raise KeyError(_missing_kernel_message(name, backend)) from None


def kernels_for_backend(backend: str) -> list[KernelConfig]:
    """Every kernel registered for ``backend``, sorted by name."""
    return sorted(
        (c for (n, b), c in _KERNELS.items() if b == backend), key=lambda c: c.kernel_name
    )


def _missing_kernel_message(name: str, backend: str) -> str:
    where = sorted(b for (n, b) in _KERNELS if n == name)
    if where:
        return (
            f"kernel {name!r} is not registered for backend {backend!r} "
            f"(registered for: {', '.join(where)})"
        )
    return f"kernel {name!r} is not registered for any backend (backend {backend!r} asked)"


def kernel_table() -> dict[tuple[str, str], KernelConfig]:
    """A copy of the whole kernel registry (for listings and tests)."""
    return dict(_KERNELS)


# --- gradients -----------------------------------------------------------------------------


def register_gradient(
    name: str,
    grad_fn: Callable,
    inputs_to_save: Sequence[str] = (),
    outputs_to_save: Sequence[int] = (),
    *,
    save_all_inputs: bool = False,
    _builtin: bool = False,
) -> GradConfig:
    """Register the gradient of kernel ``name``; replaces (and warns about) an existing one.

    Args:
        name: the kernel name.
        grad_fn: ``grad_fn(dy, saved, attrs) -> {input name: () -> Tensor}``; ``dy`` is a
            Tensor (a tuple of Tensors for multi-output kernels), ``saved`` a tuple of the
            saved inputs then the saved outputs. Only the thunks that are needed are called.
        inputs_to_save: names of the inputs the gradient needs.
        outputs_to_save: indices of the outputs the gradient needs.

    Returns:
        The registered ``GradConfig``.

    Example:
        >>> import core
        >>> g = core.get_gradient("Relu")
        >>> cfg = core.register_gradient("Relu", lambda dy, saved, attrs: {"x": lambda: dy})
        ... # doctest: +SKIP
    """
    if not callable(grad_fn):
        raise TypeError(f"register_gradient({name!r}): grad_fn must be callable, got {grad_fn!r}")
    if isinstance(inputs_to_save, str):
        raise TypeError(
            f"register_gradient({name!r}): inputs_to_save must be a sequence of input names, "
            f"got the string {inputs_to_save!r}"
        )
    config = GradConfig(
        name,
        grad_fn,
        tuple(inputs_to_save),
        tuple(int(i) for i in outputs_to_save),
        save_all_inputs,
        _builtin,
    )
    if name in _GRADIENTS and not _builtin:
        warnings.warn(
            f"register_gradient: overriding the gradient of kernel {name!r}", stacklevel=2
        )
    _GRADIENTS[name] = config
    return config


def unregister_gradient(name: str) -> None:
    """Remove the gradient of kernel ``name``; a ``KeyError`` if it has none."""
    if name not in _GRADIENTS:
        raise KeyError(f"no gradient is registered for kernel {name!r}")
    del _GRADIENTS[name]


def get_gradient(name: str) -> GradConfig | None:
    """The ``GradConfig`` of kernel ``name``, or ``None`` when it is not differentiable."""
    return _GRADIENTS.get(name)


@contextlib.contextmanager
def gradient_override(
    name: str,
    grad_fn: Callable,
    inputs_to_save: Sequence[str] | None = None,
    outputs_to_save: Sequence[int] | None = None,
):
    """Within the block, kernel ``name`` uses ``grad_fn``; the previous gradient comes back
    on exit, also when the block raises.

    Without ``inputs_to_save``/``outputs_to_save`` the previous config's choices are kept.
    Nodes recorded inside the block keep the override until their gradient is computed.
    """
    previous = _GRADIENTS.get(name)
    if inputs_to_save is None:
        inputs_to_save = previous.inputs_to_save if previous else ()
    if outputs_to_save is None:
        outputs_to_save = previous.outputs_to_save if previous else ()
    _GRADIENTS[name] = GradConfig(
        name,
        grad_fn,
        tuple(inputs_to_save),
        tuple(outputs_to_save),
        previous.save_all_inputs if previous else False,
    )
    try:
        yield _GRADIENTS[name]
    finally:
        if previous is None:
            _GRADIENTS.pop(name, None)
        else:
            _GRADIENTS[name] = previous


def gradient_table() -> dict[str, GradConfig]:
    """A copy of the whole gradient registry."""
    return dict(_GRADIENTS)


# --- backends ------------------------------------------------------------------------------


def register_backend(name: str, factory: Callable[[], Backend] | None = None, priority: int = 0):
    """Register a backend. ``factory()`` makes its ``Backend`` lazily, on first use.

    The registered backend with the highest priority is active until ``set_backend``.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_backend: name must be a non-empty str, got {name!r}")
    factory = factory or (lambda: Backend(name, priority))
    _BACKEND_FACTORIES[name] = (factory, int(priority))
    _BACKENDS.pop(name, None)


def _instance(name: str) -> Backend:
    if name not in _BACKENDS:
        if name not in _BACKEND_FACTORIES:
            raise ValueError(
                f"backend {name!r} is not registered (registered: {', '.join(list_backends())})"
            )
        backend_obj = _BACKEND_FACTORIES[name][0]()
        if not isinstance(backend_obj, Backend):
            backend_obj = Backend(name, _BACKEND_FACTORIES[name][1], {"object": backend_obj})
        _BACKENDS[name] = backend_obj
    return _BACKENDS[name]


def set_backend(name: str) -> None:
    """Make ``name`` the active backend for every thread (a ``ValueError`` if unknown)."""
    _instance(name)
    _GLOBAL_BACKEND[0] = name


def get_backend() -> str:
    """The name of the active backend."""
    scoped = _SCOPED_BACKEND.get()
    if scoped is not None:
        return scoped
    if _GLOBAL_BACKEND[0] is None:
        if not _BACKEND_FACTORIES:
            raise RuntimeError("no backend is registered")
        _GLOBAL_BACKEND[0] = max(_BACKEND_FACTORIES, key=lambda n: _BACKEND_FACTORIES[n][1])
    return _GLOBAL_BACKEND[0]


def backend_info(name: str | None = None) -> Backend:
    """The ``Backend`` object of ``name`` (the active one by default)."""
    return _instance(name or get_backend())


def list_backends() -> list[str]:
    """Registered backend names, highest priority first."""
    return sorted(_BACKEND_FACTORIES, key=lambda n: -_BACKEND_FACTORIES[n][1])


@contextlib.contextmanager
def backend(name: str):
    """Run the block on backend ``name`` (this thread/context only)."""
    _instance(name)
    token = _SCOPED_BACKEND.set(name)
    try:
        yield name
    finally:
        _SCOPED_BACKEND.reset(token)
