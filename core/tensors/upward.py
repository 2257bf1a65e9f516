"""The value layer's two calls upward, and the one place they are plugged in.

A tensor's operators run ops (``x + y`` is ``tv.add``) and numpy's protocols on a tensor run
numpy dispatch (``np.exp(x)`` is ``tv.exp``); both live in ``core/ops``, above this layer,
which imports neither. ``core/__init__.py`` calls ``plug`` once, right after importing them:
the whole wiring of the engine's layers is that call, in that file.

Before it (a module of core's using an operator while core is still being imported) a call
raises ``RuntimeError`` naming what is missing, never a silent None.
"""

from __future__ import annotations

__all__ = ["UP", "plug"]


class _Unplugged:
    def __init__(self, what: str):
        self._what = what

    def __getattr__(self, name):
        raise RuntimeError(
            f"tensor {self._what} used before tapeviz.core finished importing: "
            "core/__init__.py plugs them in (core.tensors.upward.plug)"
        )


class _Upward:
    """``ops``: the op namespace (``core.ops``) operators call; ``unchanged``: what
    ``+x``, ``x.real`` and ``x.conj()`` return; ``numpy``: the module whose
    ``array_ufunc``/``array_function`` answer numpy's protocols (``core.ops.numpy_dispatch``)."""

    __slots__ = ("ops", "unchanged", "numpy")

    def __init__(self):
        self.ops = _Unplugged("operators (x + y, x.sum(), ...)")
        self.unchanged = self.ops.__getattr__
        self.numpy = _Unplugged("numpy protocols (np.exp(x), ...)")


UP = _Upward()


def plug(*, ops, unchanged, numpy) -> None:
    """Connect the value layer to the layers above it (``core/__init__.py`` does, once)."""
    UP.ops, UP.unchanged, UP.numpy = ops, unchanged, numpy
