"""The backend registry: ``name -> Backend`` made lazily by a factory; the highest-priority
backend is active until ``set_backend``; ``with backend(name):`` scopes one to a context.

Kernels per backend live in core/registry/kernels.py (``unregister_backend`` removes both).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "Backend",
    "register_backend",
    "set_backend",
    "get_backend",
    "list_backends",
    "backend",
    "backend_info",
]


@dataclass
class Backend:
    """A backend: a name, a priority and whatever state its kernels need."""

    name: str
    priority: int = 0
    info: dict = field(default_factory=dict)


BACKEND_FACTORIES: dict[str, tuple[Callable[[], Backend], int]] = {}
BACKENDS: dict[str, Backend] = {}
GLOBAL_BACKEND: list[str | None] = [None]
SCOPED_BACKEND: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "tapeviz_backend", default=None
)


def register_backend(name: str, factory: Callable[[], Backend] | None = None, priority: int = 0):
    """Register a backend. ``factory()`` makes its ``Backend`` lazily, on first use.

    The registered backend with the highest priority is active until ``set_backend``.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_backend: name must be a non-empty str, got {name!r}")
    factory = factory or (lambda: Backend(name, priority))
    BACKEND_FACTORIES[name] = (factory, int(priority))
    BACKENDS.pop(name, None)


def _instance(name: str) -> Backend:
    if name not in BACKENDS:
        if name not in BACKEND_FACTORIES:
            # the built-in numba backend registers only where numba imports
            hint = '; it needs numba: pip install "tapeviz[numba]"' if name == "numba" else ""
            raise ValueError(
                f"backend {name!r} is not registered (registered: {', '.join(list_backends())})"
                + hint
            )
        backend_obj = BACKEND_FACTORIES[name][0]()
        if not isinstance(backend_obj, Backend):
            backend_obj = Backend(name, BACKEND_FACTORIES[name][1], {"object": backend_obj})
        BACKENDS[name] = backend_obj
    return BACKENDS[name]


def ensure_loaded(name: str) -> bool:
    """Make backend ``name``'s ``Backend`` if it is registered and not made yet (a backend
    whose factory imports it on first use, as the built-in numba one, registers its kernels
    then); True when ``name`` is registered."""
    if name in BACKENDS:
        return True
    if name not in BACKEND_FACTORIES:
        return False
    _instance(name)
    return True


def set_backend(name: str) -> None:
    """Make ``name`` the active backend for every thread (a ``ValueError`` if unknown).

    Example:
        >>> import tapeviz as tv
        >>> tv.set_backend("numpy")
        >>> tv.get_backend()
        'numpy'
    """
    _instance(name)
    GLOBAL_BACKEND[0] = name


def get_backend() -> str:
    """The name of the active backend."""
    scoped = SCOPED_BACKEND.get()
    if scoped is not None:
        return scoped
    if GLOBAL_BACKEND[0] is None:
        if not BACKEND_FACTORIES:
            raise RuntimeError("no backend is registered")
        GLOBAL_BACKEND[0] = max(BACKEND_FACTORIES, key=lambda n: BACKEND_FACTORIES[n][1])
    return GLOBAL_BACKEND[0]


def backend_info(name: str | None = None) -> Backend:
    """The ``Backend`` object of ``name`` (the active one by default)."""
    return _instance(name or get_backend())


def list_backends() -> list[str]:
    """Registered backend names, highest priority first.

    Example:
        >>> import tapeviz as tv
        >>> "numpy" in tv.list_backends()
        True
    """
    return sorted(BACKEND_FACTORIES, key=lambda n: -BACKEND_FACTORIES[n][1])


@contextlib.contextmanager
def backend(name: str):
    """Run the block on backend ``name`` (this thread/context only).

    Example:
        >>> import tapeviz as tv
        >>> with tv.backend("numpy"):
        ...     tv.tanh(tv.tensor([0.0])).numpy()
        array([0.], dtype=float32)
    """
    _instance(name)
    token = SCOPED_BACKEND.set(name)
    try:
        yield name
    finally:
        SCOPED_BACKEND.reset(token)
