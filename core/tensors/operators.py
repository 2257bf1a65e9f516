"""Tensor operators and method forms (``x + y``, ``x.exp()``, ``x.T``): all dispatch to
core.ops, reached through ``upward.UP`` (the value layer imports no ops; core/__init__.py
plugs them in)."""

from __future__ import annotations

from .upward import UP


class TensorOperators:
    """Mixin of ``Tensor``: Python operators and numpy-named methods as ops."""

    __slots__ = ()

    # --- operators (dispatch to core.ops) -----------------------------------------------
    def __add__(self, o):
        return UP.ops.add(self, o)

    def __radd__(self, o):
        return UP.ops.add(o, self)

    def __sub__(self, o):
        return UP.ops.sub(self, o)

    def __rsub__(self, o):
        return UP.ops.sub(o, self)

    def __mul__(self, o):
        return UP.ops.mul(self, o)

    def __rmul__(self, o):
        return UP.ops.mul(o, self)

    def __truediv__(self, o):
        return UP.ops.div(self, o)

    def __rtruediv__(self, o):
        return UP.ops.div(o, self)

    def __pow__(self, o):
        return UP.ops.pow(self, o)

    def __rpow__(self, o):
        return UP.ops.pow(o, self)

    def __matmul__(self, o):
        return UP.ops.matmul(self, o)

    def __rmatmul__(self, o):
        return UP.ops.matmul(o, self)

    def __neg__(self):
        return UP.ops.neg(self)

    def __pos__(self):
        return UP.unchanged(self)  # +v of a Variable is a new tensor, as numpy's +a

    def __abs__(self):
        return UP.ops.abs(self)

    def __gt__(self, o):
        return UP.ops.greater(self, o)

    def __ge__(self, o):
        return UP.ops.greater_equal(self, o)

    def __lt__(self, o):
        return UP.ops.less(self, o)

    def __le__(self, o):
        return UP.ops.less_equal(self, o)

    def __eq__(self, o):  # elementwise, as numpy
        return UP.ops.equal(self, o)

    def __ne__(self, o):
        return UP.ops.not_equal(self, o)

    def __getitem__(self, key):
        return UP.ops.getitem(self, key)

    def __setitem__(self, key, value):
        raise TypeError(
            "tensors are immutable: use tv.where, tv.pad or a Variable's assign instead of "
            "item assignment"
        )

    def __mod__(self, o):
        return UP.ops.mod(self, o)

    def __rmod__(self, o):
        return UP.ops.mod(o, self)

    def __floordiv__(self, o):
        return UP.ops.floor_divide(self, o)

    def __rfloordiv__(self, o):
        return UP.ops.floor_divide(o, self)

    def __divmod__(self, o):
        return UP.ops.divmod(self, o)

    def __rdivmod__(self, o):
        return UP.ops.divmod(o, self)

    def __and__(self, o):
        return UP.ops.bitwise_and(self, o)

    def __rand__(self, o):
        return UP.ops.bitwise_and(o, self)

    def __or__(self, o):
        return UP.ops.bitwise_or(self, o)

    def __ror__(self, o):
        return UP.ops.bitwise_or(o, self)

    def __xor__(self, o):
        return UP.ops.bitwise_xor(self, o)

    def __rxor__(self, o):
        return UP.ops.bitwise_xor(o, self)

    def __invert__(self):
        return UP.ops.invert(self)

    def __lshift__(self, o):
        return UP.ops.left_shift(self, o)

    def __rlshift__(self, o):
        return UP.ops.left_shift(o, self)

    def __rshift__(self, o):
        return UP.ops.right_shift(self, o)

    def __rrshift__(self, o):
        return UP.ops.right_shift(o, self)

    def __round__(self, ndigits=None):
        """``round(x)`` and ``round(x, 2)``: a tensor, as numpy's ``round(array)``."""
        return UP.ops.round(self, 0 if ndigits is None else ndigits)

    # --- method forms of ops -------------------------------------------------------------
    @property
    def T(self):
        return UP.ops.transpose(self)

    @property
    def mT(self):  # noqa: N802 - numpy's name: the last two axes swapped
        return UP.ops.swapaxes(self, -1, -2)

    def reshape(self, *shape):
        """``x.reshape(3, 2)`` or ``x.reshape((3, 2))``, as numpy."""
        return UP.ops.reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes):
        """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``, as numpy."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return UP.ops.transpose(self, axes or None)

    def flatten(self):
        """A 1-D copy of the values, as ``ndarray.flatten`` (``tv.flatten`` keeps axis 0)."""
        return UP.ops.ravel(self)

    def clip(self, min=None, max=None):  # noqa: A002 - numpy's names
        """``x.clip(min, max)``; a missing bound is unbounded."""
        return UP.ops.clip(self, min, max)

    def copy(self, order="C"):
        """A new tensor of the same value (an ``Identity`` op: gradients flow through it)."""
        return UP.ops.identity(self)

    def any(self, axis=None, keepdims=False):
        """Whether any element is nonzero (NaN counts), as ``ndarray.any``; a bool tensor."""
        return UP.ops.any(self, axis, keepdims)

    def all(self, axis=None, keepdims=False):
        """Whether every element is nonzero (NaN counts), as ``ndarray.all``; a bool tensor."""
        return UP.ops.all(self, axis, keepdims)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Indices that sort the values along ``axis`` (int64; no gradient), as numpy."""
        return UP.ops.argsort(self, axis, kind, order, stable=stable)

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        """Indices that partition the values around ``kth`` (int64; no gradient)."""
        return UP.ops.argpartition(self, kth, axis, kind, order)

    def take(self, indices, axis=None, mode="raise"):
        """``numpy.take``: elements at ``indices`` (flattened when ``axis`` is None)."""
        return UP.ops.take(self, indices, axis, mode=mode)

    def compress(self, condition, axis=None):
        """The slices along ``axis`` where ``condition`` is true, as ``numpy.compress``."""
        return UP.ops.compress(condition, self, axis)

    def nonzero(self):
        """A tuple of int64 tensors, one per axis: the indices of nonzero elements."""
        return UP.ops.nonzero(self)

    def searchsorted(self, v, side="left", sorter=None):
        """Where ``v`` would go in this sorted 1-D tensor (int64; no gradient)."""
        return UP.ops.searchsorted(self, v, side, sorter)

    def conj(self):
        """The complex conjugate: tensors are real, so the same value."""
        return UP.unchanged(self)

    conjugate = conj

    @property
    def real(self):
        """The real part: tensors are real, so the same value."""
        return UP.unchanged(self)

    @property
    def imag(self):
        """The imaginary part of a real tensor: zeros (a constant: no gradient reaches x)."""
        return UP.ops.zeros_like(self)

    @property
    def itemsize(self) -> int:
        """Bytes per element, as ``ndarray.itemsize``."""
        return self.dtype.itemsize

    @property
    def device(self) -> str:
        """Where the values live (array API): always ``"cpu"``."""
        return "cpu"

    def to_device(self, device, /, *, stream=None):
        """The array API's move: tensors live on the CPU only, so ``"cpu"`` gives ``self``."""
        if device != "cpu":
            raise ValueError(f"to_device: tapeviz tensors live on 'cpu' only, got {device!r}")
        return self

    def tobytes(self, order="C") -> bytes:
        """The raw bytes of the value: a constant, as ``tolist()``."""
        return self.numpy().tobytes(order)

    # numpy's in-place methods: tensors are immutable, so each says what to use instead
    def sort(self, axis=-1, kind=None, order=None):
        raise TypeError(_IMMUTABLE.format("sort", "x = tv.sort(x) (or np.sort(x))"))

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        raise TypeError(_IMMUTABLE.format("partition", "x = tv.partition(x, kth)"))

    def fill(self, value):
        raise TypeError(_IMMUTABLE.format("fill", "tv.fill(x.shape, value)"))

    def put(self, indices, values, mode="raise"):
        raise TypeError(_IMMUTABLE.format("put", "tv.where(mask, values, x)"))

    def resize(self, *new_shape, refcheck=True):
        raise TypeError(_IMMUTABLE.format("resize", "x.reshape(...) or tv.pad(...)"))


_IMMUTABLE = (
    "Tensor.{0}() changes an array in place in numpy, and tensors are immutable; use {1} "
    "for a new tensor (a Variable changes by assign)"
)


# Tensor methods that are ops with the tensor first: x.exp(), x.sum(axis=0), …
_METHODS = {
    name: name
    for name in (
        "exp log log1p sqrt rsqrt square reciprocal sin cos tan tanh sigmoid relu abs sign "
        "neg sum mean max min prod logsumexp softmax log_softmax "
        "expand_dims squeeze broadcast_to tile pad cast matmul var std "
        "argmax argmin gather ravel dot cumsum cumprod round repeat swapaxes diagonal trace "
        "floor ceil"
    ).split()
}
_METHODS["astype"] = "cast"


def _method(attr: str, op_name: str):
    def method(self, *args, **kwargs):
        return getattr(UP.ops, op_name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = attr
    method.__doc__ = f"``x.{attr}(...)`` is ``tv.{op_name}(x, ...)``."
    return method


# real methods (not __getattr__): they tab-complete, have help() and cost no lookup
for _attr, _op_name in _METHODS.items():
    setattr(TensorOperators, _attr, _method(_attr, _op_name))
