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

import numpy as np

from .arrays import CONVERTING, HoldsTensor, check_dtype
from .live import LIVE, OPEN_SCOPES, SCOPES
from .operators import TensorOperators
from .recording import tracks
from .tracing import TRACER, copied, guard
from .upward import UP

__all__ = ["Tensor", "DisposedError", "new_id"]

_ids = itertools.count(1)


def new_id() -> int:
    """A fresh tensor id: larger than every tensor's made so far (those made later get
    larger ones still), so a caller can tell which tensors a block of code made."""
    return next(_ids)


class DisposedError(RuntimeError):
    """A disposed tensor was used."""


# while a custom-gradient forward runs: a function told of every tensor whose value is read
# as numpy (numpy(), __array__, item()), so one used without being an input is named
# (core/custom/builder.py, ForwardUses); None otherwise
READS: contextvars.ContextVar = contextvars.ContextVar("reads", default=None)


_DETACH_MESSAGE = (
    "tensor {label} is recorded by an active tape: turning it into a numpy array "
    "(np.asarray, np.array, a numpy function without a tapeviz dispatch) would silently cut "
    "its gradient. Use tapeviz ops instead: tv.stack([...]) or tv.tensor([...]) for a list "
    "of tensors, tv.exp/tv.sum/... for np.exp/np.sum/...; or take a constant on purpose with "
    "x.numpy(), x.item() or float(x) (explicit requests for the value are constants, inside a "
    "tape too) or tv.stop_gradient(x)"
)


class Tensor(TensorOperators):
    """An immutable n-dimensional value recorded by tapes.

    Build one with ``core.tensor(data)``; ops take and return tensors.
    """

    __slots__ = ("_data", "id", "name", "_meta", "__weakref__")
    __array_priority__ = 100  # numpy defers `ndarray op Tensor` to us
    _kind = "tensor"  # its repr's name
    _version = 0  # a Tensor's value never changes; Variable.assign counts its changes

    def __init__(self, data, name: str | None = None):
        if type(data) is not np.ndarray:  # numpy scalars, subclasses: a plain array
            data = check_dtype(np.asarray(data), "Tensor")
        self._data = data
        self.id = i = next(_ids)
        self.name = name
        LIVE[i] = data.nbytes
        if OPEN_SCOPES[0]:
            stack = getattr(SCOPES, "stack", None)
            if stack:
                stack[-1].append(self)

    def __del__(self, _live=LIVE):
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
        if getattr(CONVERTING, "on", False):  # a list being made a tensor: stack it (ops)
            raise HoldsTensor
        if TRACER.get() is not None:
            guard(self, "np.asarray()")
        hook = READS.get()
        if hook is not None:
            hook(self)
        # a recorded float tensor must not silently detach; asked for integers or bools
        # (``np.int64(x)``, ``np.asarray(x, int)``) it may: their gradient is 0 anyway, as
        # ``x.astype(int)``'s (a piecewise-constant function of x), so nothing is cut
        if self.dtype.kind == "f" and (dtype is None or np.dtype(dtype).kind not in "iub"):
            if tracks(self):
                raise TypeError(_DETACH_MESSAGE.format(label=self._label()))
        arr = self._array
        return arr.astype(dtype) if dtype is not None else arr.copy()

    # NEP 13 / NEP 18: numpy's functions on tensors run tapeviz ops (core/ops/numpy_dispatch.py)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return UP.numpy.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return UP.numpy.array_function(func, types, args, kwargs)

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
        LIVE.pop(self.id, None)

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
        kind = self._kind
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
    def _copy_as(self) -> tuple:
        """(class, extra constructor arguments) of a copy: ``Tensor`` for internal kinds
        (a wrapped user array, a constant); a ``Variable`` stays one."""
        return Tensor, ()

    def __reduce_ex__(self, protocol):
        cls, extra = self._copy_as()
        return (_rebuild, (cls, self.numpy(), self.name, extra))

    def __copy__(self):
        cls, extra = self._copy_as()
        return copied(self, _rebuild(cls, self._array, self.name, extra))

    def __deepcopy__(self, memo):
        cls, extra = self._copy_as()
        out = copied(self, _rebuild(cls, self._array, self.name, extra))  # a copy of its own
        memo[id(self)] = out
        return out


def _rebuild(cls, data, name, extra=()):
    """A copy or an unpickled tensor: the value, name (and what else its class keeps, as a
    variable's ``trainable``), with a fresh id (``Tensor.__reduce_ex__``)."""
    return cls(np.array(data, copy=True), name, *extra)  # its own writable array


def _wrap(arr) -> Tensor:
    """Wrap a kernel's raw output (engine use)."""
    if type(arr) is not np.ndarray:
        arr = np.asarray(arr)
    return Tensor(arr)
