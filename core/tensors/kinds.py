"""The kinds of tensor besides the plain one: ``Variable`` (mutable: ``assign``; trainable
ones are watched by tapes), ``Constant`` (a Python number an op wrapped) and the shape-only
stand-in a tape keeps instead of a large value."""

from __future__ import annotations

import sys

import numpy as np

from .arrays import to_array
from .live import LIVE
from .tensor import Tensor
from .tracing import TRACER, guard

__all__ = ["Variable", "variable", "Constant", "stand_in"]


class Variable(Tensor):
    """A mutable tensor: ``assign`` replaces its value. Trainable ones are watched by tapes.

    Example:
        >>> import tapeviz as tv
        >>> w = tv.variable([1.0, 2.0], name="w")
        >>> w.assign(w * 2).numpy()
        array([2., 4.], dtype=float32)
    """

    __slots__ = ("trainable", "_version")
    _kind = "variable"

    def __init__(self, data, name=None, trainable=True):
        super().__init__(data, name)
        self.trainable = trainable
        self._version = 0  # +1 per assign: a tape's saved value of an older one is stale

    def assign(self, value) -> Variable:
        """Replace the value with ``value`` of the same shape and dtype; returns self."""
        tracer = TRACER.get()
        if tracer is not None:  # tv.jit tracing: the compiled program assigns too
            return tracer.assign(self, value)
        if _unshared_temporary(value, self._data):  # ``v.assign(w - lr * g)``: no copy
            new = value
        else:
            new = to_array(value, where=f"Variable {self._label()}.assign")
            if new.shape != self.shape:
                raise ValueError(
                    f"Variable {self._label()}.assign: expected shape {self.shape}, got {new.shape}"
                )
            new = new.astype(self.dtype, copy=True)
        self._data = new
        self._version += 1
        LIVE[self.id] = new.nbytes
        return self

    def assign_sub(self, delta) -> Variable:
        if TRACER.get() is not None:
            guard(self, "assign_sub()")
        return self.assign(self._array - to_array(delta))

    def dispose(self) -> None:
        super().dispose()

    def _copy_as(self) -> tuple:
        return Variable, (self.trainable,)


def _unshared_temporary(value, now) -> bool:
    """Whether ``assign`` may keep ``value`` itself: a fresh, writeable numpy array of the
    current value ``now``'s shape and dtype that nothing but the call can reach (its
    reference count says so), so copying it would be wasted.

    What it buys (``bench/house_measurements.md``): one copy of the parameters per
    optimizer step, about 0.2 ms for a 932k-parameter MLP, 7-10% of a batch-16 training
    step (eager and ``jit=True``)."""
    return (
        type(value) is np.ndarray
        and sys.getrefcount(value) <= _TEMPORARY_REFS  # no one else can reach it
        and now is not None
        and value.base is None
        and value.flags.owndata
        and value.dtype == now.dtype
        and value.shape == now.shape
        and value.flags.writeable
    )


def _temporary_refs() -> int:
    """The reference count ``_unshared_temporary`` sees for an array only the call holds
    (numpy's own temporary elision uses the same fact), measured through the same two frames
    (``assign``, then the check); 0 (never skip the copy) where a named array would look the
    same (interpreters that borrow references on the stack)."""

    def assign(value):  # stands for Variable.assign calling the check
        return _count(value)

    named = np.empty(1)
    temporary, held = assign(np.empty(1)), assign(named)
    return temporary if temporary < held else 0


def _count(value) -> int:  # stands for _unshared_temporary
    return sys.getrefcount(value)


_TEMPORARY_REFS = _temporary_refs()


class _StandIn(Tensor):
    """A shape-only record of a tensor (same id, no value) for tapes that must not keep a
    large value alive; disposing or dropping it leaves the real tensor alone."""

    __slots__ = ()

    def __del__(self):
        pass

    def dispose(self) -> None:
        pass


def stand_in(t: Tensor, limit: int) -> Tensor:
    """``t`` itself when its value has at most ``limit`` bytes, else a ``_StandIn`` of it."""
    d = t._data
    if d is None or d.nbytes <= limit:
        return t
    s = object.__new__(_StandIn)
    s._data, s.id, s.name, s._meta = None, t.id, t.name, (d.shape, d.dtype)
    return s


class Constant(Tensor):
    """A Python number an op turned into a tensor (``x * 0.5``). The user never holds it, so
    it is never a source: values saved only for its gradient are not kept (tape.py)."""

    __slots__ = ()


def variable(data, name: str | None = None, trainable: bool = True, dtype=None) -> Variable:
    """Make a ``Variable`` (its own copy of ``data``); trainable ones are watched by tapes."""
    arr = np.array(to_array(data, dtype, "variable"), copy=True)
    return Variable(arr, name, trainable)
