"""Tensors and variables: immutable values over numpy arrays, with numpy-named methods.

A ``Tensor`` knows nothing about the tape: tapes hold references forward to tensors, never
the other way round, so the hot path makes no reference cycles and CPython frees a graph by
reference counting alone, without waiting for the cycle collector.

Leaving the tape, one rule: asking for the value explicitly (``x.numpy()``, ``x.item()``,
``float(x)``, ``int(x)``, ``x.tolist()``) gives it as a constant, also inside a tape: no
gradient flows through what is computed from it (as PyTorch's ``.item()`` and
``.detach().numpy()``). A conversion to integers or bools (``np.int64(x)``,
``np.asarray(x, dtype=int)``, ``x.astype(int)``) gives numpy's value in a tape too: an
integer result of a float is piecewise constant, so its gradient is 0 and nothing is cut
(``x.astype(int)`` is a recorded ``Cast`` whose gradient is 0). An implicit conversion (``np.asarray(x)``, ``np.array(x)``, a numpy
function without a tapeviz op) of a tensor a gradient could flow through raises inside a
tape, because it would cut the gradient without being asked to.
"""

from __future__ import annotations

import contextvars
import itertools
import sys
import threading

import numpy as np

from .operators import TensorOperators
from .tracing import TRACER, guard

__all__ = ["Tensor", "Variable", "tensor", "variable", "DisposedError"]

_ids = itertools.count(1)
_lock = threading.Lock()

_SUPPORTED_KINDS = "fiub"  # float, signed int, unsigned int, bool

# live tensors: id -> nbytes (memory() reads it); tidy scopes: stack of lists
_LIVE: dict[int, int] = {}
_SCOPES = threading.local()


class DisposedError(RuntimeError):
    """A disposed tensor was used."""


# core.numpy_dispatch, bound when it is imported (this module imports no ops)
_dispatch: list = [None]

_OPEN_SCOPES = [0]  # tidy scopes open in any thread: Tensor() skips the lookup when 0

# while a custom-gradient forward runs: a function told of every tensor whose value is read
# as numpy (numpy(), __array__, item()), so one used without being an input is named
# (core/custom/builder.py, ForwardUses); None otherwise
READS: contextvars.ContextVar = contextvars.ContextVar("reads", default=None)


def _scope_stack() -> list:
    stack = getattr(_SCOPES, "stack", None)
    if stack is None:
        stack = _SCOPES.stack = []
    return stack


def _push_scope() -> None:
    with _lock:
        _OPEN_SCOPES[0] += 1
    _scope_stack().append([])


def _pop_scope() -> list:
    with _lock:
        _OPEN_SCOPES[0] -= 1
    return _scope_stack().pop()


def _check_dtype(arr: np.ndarray, where: str) -> np.ndarray:
    if arr.dtype.kind not in _SUPPORTED_KINDS:
        raise TypeError(
            f"{where}: unsupported dtype {arr.dtype} (expected a float, int or bool array)"
        )
    return arr


def _to_array(data, dtype=None, where="tensor") -> np.ndarray:
    """Convert user data: Python floats -> float32, ints -> int32, numpy keeps its dtype."""
    if isinstance(data, Tensor):
        arr = data.numpy()
    elif isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    else:
        try:
            arr = np.asarray(data)
        except (ValueError, TypeError) as e:
            raise TypeError(
                f"{where}: cannot make a tensor from {type(data).__name__}: {e}"
            ) from None
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            arr = arr.astype(np.int32)
        elif arr.dtype.kind == "O" or arr.dtype.kind in "USV":
            raise TypeError(
                f"{where}: expected numbers (nested lists of float/int/bool or an array), "
                f"got {type(data).__name__} of {arr.dtype}"
            )
    if dtype is not None:
        arr = arr.astype(np.dtype(dtype), copy=False)
    return _check_dtype(arr, where)


class _HoldsTensor(Exception):
    """``__array__`` ran while ``tensor_data.from_data`` converted a list of tensors."""


_CONVERTING = threading.local()  # on while from_data converts a list (tensor_data.py)


class Tensor(TensorOperators):
    """An immutable n-dimensional value recorded by tapes.

    Build one with ``core.tensor(data)``; ops take and return tensors.
    """

    __slots__ = ("_data", "id", "name", "_meta", "__weakref__")
    __array_priority__ = 100  # numpy defers `ndarray op Tensor` to us
    _version = 0  # a Tensor's value never changes; Variable.assign counts its changes

    def __init__(self, data, name: str | None = None):
        if type(data) is not np.ndarray:  # numpy scalars, subclasses: a plain array
            data = _check_dtype(np.asarray(data), "Tensor")
        self._data = data
        self.id = i = next(_ids)
        self.name = name
        _LIVE[i] = data.nbytes
        if _OPEN_SCOPES[0]:
            stack = getattr(_SCOPES, "stack", None)
            if stack:
                stack[-1].append(self)

    def __del__(self, _live=_LIVE):
        # bound as a default: at interpreter exit module globals may already be None
        _live.pop(getattr(self, "id", None), None)

    # --- value access ---------------------------------------------------------------------
    @property
    def _array(self) -> np.ndarray:
        """The engine's own array (writable: only the engine touches it)."""
        d = self._data
        if d is None:
            raise DisposedError(f"tensor {self._label()} was disposed and cannot be used")
        return d

    def numpy(self) -> np.ndarray:
        """The value as a numpy array (a read-only view; copy it to modify). A constant: no
        gradient flows through it, inside a tape too (the module docstring's rule)."""
        if TRACER.get() is not None:
            guard(self, "numpy()")
        hook = READS.get()
        if hook is not None:
            hook(self)
        view = self._array.view()
        view.flags.writeable = False
        return view

    @property
    def data(self) -> np.ndarray:
        """The value, as ``numpy()``: a read-only view. A tape may have saved this value for
        a later ``gradient()``, so writing into it would silently change that gradient; to
        change a ``Variable`` use ``assign`` (the tape then sees the new version)."""
        return self.numpy()

    def peek(self) -> np.ndarray | None:
        """The engine's own array, for display (tapeviz's graph, stepper, memory view):
        not a read (no tracer guard, no ``READS`` hook), so showing a value changes nothing.
        ``None`` when the tensor was disposed or is a stand-in recorded by shape only. Do not
        write into it."""
        return self._data

    def item(self):
        """The value of a one-element tensor as a Python number: a constant, inside a tape too
        (``float(x)`` and ``int(x)`` are the same; see the module docstring's rule)."""
        if self.size != 1:
            raise ValueError(f"item(): tensor {self._label()} has {self.size} elements, not 1")
        if TRACER.get() is not None:
            guard(self, "item()")
        hook = READS.get()
        if hook is not None:
            hook(self)
        return self._array.item()

    def tolist(self):
        if TRACER.get() is not None:
            guard(self, "tolist()")
        return self._array.tolist()

    def __array__(self, dtype=None, copy=None):
        if getattr(_CONVERTING, "on", False):  # a list being made a tensor: stack it (ops)
            raise _HoldsTensor
        if TRACER.get() is not None:
            guard(self, "np.asarray()")
        hook = READS.get()
        if hook is not None:
            hook(self)
        # a recorded float tensor must not silently detach; asked for integers or bools
        # (``np.int64(x)``, ``np.asarray(x, int)``) it may: their gradient is 0 anyway, as
        # ``x.astype(int)``'s (a piecewise-constant function of x), so nothing is cut
        if self.dtype.kind == "f" and (dtype is None or np.dtype(dtype).kind not in "iub"):
            from .tensor_data import check_not_recorded

            check_not_recorded(self)
        arr = self._array
        return arr.astype(dtype) if dtype is not None else arr.copy()

    # NEP 13 / NEP 18: numpy's functions on tensors run tapeviz ops (core/numpy_dispatch.py)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _dispatch[0].array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _dispatch[0].array_function(func, types, args, kwargs)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return self._array.size

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    @property
    def is_disposed(self) -> bool:
        return self._data is None

    def dispose(self) -> None:
        """Free the value now; later use raises ``DisposedError``.

        The shape and dtype are remembered (``_meta``), so a tape that recorded the tensor
        can still differentiate through it.
        """
        d = self._data
        if d is not None:
            self._meta = (d.shape, d.dtype)
        self._data = None
        _LIVE.pop(self.id, None)

    def _shape_dtype(self) -> tuple:
        """(shape, dtype), also after ``dispose`` (engine use)."""
        d = self._data
        return (d.shape, d.dtype) if d is not None else self._meta

    def _label(self) -> str:
        return f"{self.name!r} (id {self.id})" if self.name else f"id {self.id}"

    def __repr__(self) -> str:
        if self._data is None:
            return f"Tensor(<disposed>, id={self.id})"
        if TRACER.get() is not None and type(self._data) is not np.ndarray:  # tv.jit tracing
            return f"traced({self._label()}, shape={self.shape}, dtype={self.dtype})"
        body = np.array2string(self._data, separator=", ", threshold=20, edgeitems=3)
        extra = f", name={self.name!r}" if self.name else ""
        kind = "variable" if isinstance(self, Variable) else "tensor"
        return f"{kind}({body}, dtype={self._data.dtype}{extra})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of tensor {self._label()} with {self.size} elements is "
                "ambiguous; use .any() or .all() on .numpy()"
            )
        if TRACER.get() is not None:
            guard(self, "bool()")
        return bool(self._array)

    def __float__(self) -> float:
        if TRACER.get() is not None:
            guard(self, "float()")
        return float(self.item())

    def __int__(self) -> int:
        if TRACER.get() is not None:
            guard(self, "int()")
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        if TRACER.get() is not None:
            guard(self, "an index")
        return int(self.item())

    __hash__ = object.__hash__

    # --- copies and pickles: a new tensor gets a new id ----------------------------------
    # Tapes, gradients and optimizers key tensors by ``id``; a copy that kept it would take
    # the original's gradient (a deep-copied teacher model), and an unpickled one would
    # collide with the tensors of the process that loads it. So every copy is a new tensor.
    def __reduce_ex__(self, protocol):
        return (_rebuild, (_public_class(self), self.numpy(), self.name, _extra(self)))

    def __copy__(self):
        return _rebuild(_public_class(self), self._array, self.name, _extra(self))

    def __deepcopy__(self, memo):
        out = _rebuild(_public_class(self), self._array.copy(), self.name, _extra(self))
        memo[id(self)] = out
        return out


def _public_class(t: Tensor) -> type:
    """The class a copy of ``t`` gets: ``Variable`` or ``Tensor`` (internal subclasses such
    as a wrapped user array or a constant are plain tensors once copied)."""
    return Variable if isinstance(t, Variable) else Tensor


def _extra(t: Tensor) -> tuple:
    return (t.trainable,) if isinstance(t, Variable) else ()


def _rebuild(cls, data, name, extra=()):
    """A copy or an unpickled tensor: the value, name (and a variable's ``trainable``), with
    a fresh id (``Tensor.__reduce_ex__``)."""
    arr = np.array(data, copy=True)  # its own writable array (a pickle's may be read-only)
    if cls is Variable:
        return Variable(arr, name, *extra)
    return Tensor(arr, name)


class Variable(Tensor):
    """A mutable tensor: ``assign`` replaces its value. Trainable ones are watched by tapes.

    Example:
        >>> import tapeviz as tv
        >>> w = tv.variable([1.0, 2.0], name="w")
        >>> w.assign(w * 2).numpy()
        array([2., 4.], dtype=float32)
    """

    __slots__ = ("trainable", "_version")

    def __init__(self, data, name=None, trainable=True):
        super().__init__(data, name)
        self.trainable = trainable
        self._version = 0  # +1 per assign: a tape's saved value of an older one is stale

    def assign(self, value) -> Variable:
        """Replace the value with ``value`` of the same shape and dtype; returns self."""
        tracer = TRACER.get()
        if tracer is not None:  # tv.jit tracing: the compiled program assigns too
            return tracer.assign(self, value)
        d = self._data
        if (
            type(value) is np.ndarray
            and sys.getrefcount(value) <= _TEMPORARY_REFS  # no one else can reach it
            and d is not None
            and value.base is None
            and value.flags.owndata
            and value.dtype == d.dtype
            and value.shape == d.shape
            and value.flags.writeable
        ):  # a temporary (``v.assign(w - lr * g)``): the copy below would be wasted
            self._version += 1
            self._data = value
            _LIVE[self.id] = value.nbytes
            return self
        new = _to_array(value, where=f"Variable {self._label()}.assign")
        if new.shape != self.shape:
            raise ValueError(
                f"Variable {self._label()}.assign: expected shape {self.shape}, got {new.shape}"
            )
        self._data = new.astype(self.dtype, copy=True)
        self._version += 1
        _LIVE[self.id] = self._data.nbytes
        return self

    def assign_sub(self, delta) -> Variable:
        if TRACER.get() is not None:
            guard(self, "assign_sub()")
        return self.assign(self._array - _to_array(delta))

    def dispose(self) -> None:
        super().dispose()


def _refs(value) -> int:
    return sys.getrefcount(value)


def _temporary_refs() -> int:
    """The reference count ``assign`` sees for an array only the call holds (numpy's own
    temporary elision uses the same fact); 0 (never skip the copy) where a named array
    would look the same (interpreters that borrow references on the stack)."""
    named = np.empty(1)
    temporary, held = _refs(np.empty(1)), _refs(named)
    return temporary if temporary < held else 0


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


class _Constant(Tensor):
    """A Python number an op turned into a tensor (``x * 0.5``). The user never holds it, so
    it is never a source: values saved only for its gradient are not kept (tape.py)."""

    __slots__ = ()


def tensor(data, dtype=None, name: str | None = None) -> Tensor:
    """Make a tensor. Lists of Python floats become float32; numpy arrays keep their dtype.

    Args:
        data: nested lists, a number, a numpy array or a Tensor (copied). A list or tuple
            holding tensors is stacked with ops, so a tape records it and gradients flow;
            so is a float Tensor an active tape records (an ``Identity`` or ``Cast`` op, as
            ``jnp.array``; PyTorch's ``torch.tensor`` would detach it silently but for a
            warning). A constant on purpose: ``x.numpy()`` or ``tv.stop_gradient(x)``.
        dtype: optional dtype to convert to.
        name: optional name shown by tapeviz.

    Returns:
        A new ``Tensor``.

    Example:
        >>> import tapeviz as tv
        >>> tv.tensor([[1.0, 2.0]]).shape
        (1, 2)
    """
    if type(data) is list or type(data) is tuple:  # tensors inside are stacked with ops
        from .tensor_data import from_data

        out = from_data(data, dtype, "tensor")
        out.name = name
        return out
    if isinstance(data, Tensor) and data.dtype.kind == "f":
        from .engine import tracks

        if tracks(data):  # a copy would silently cut the gradient: copy with an op
            from .ops import cast, identity

            same = dtype is None or np.dtype(dtype) == data.dtype
            out = identity(data) if same else cast(data, dtype)
            out.name = name
            return out
    arr = _to_array(data, dtype, "tensor")
    if arr is data or isinstance(data, Tensor):
        arr = arr.copy()
    return Tensor(arr, name)


def variable(data, name: str | None = None, trainable: bool = True, dtype=None) -> Variable:
    """Make a ``Variable`` (its own copy of ``data``); trainable ones are watched by tapes."""
    arr = np.array(_to_array(data, dtype, "variable"), copy=True)
    return Variable(arr, name, trainable)


def _wrap(arr) -> Tensor:
    """Wrap a kernel's raw output (engine use)."""
    if type(arr) is not np.ndarray:
        arr = np.asarray(arr)
    return Tensor(arr)
