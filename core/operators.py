"""Tensor operators and method forms (``x + y``, ``x.exp()``, ``x.T``): all dispatch to
core.ops, bound here by core.ops at import (tensor.py itself never imports the ops)."""

from __future__ import annotations

_ops = None  # the core.ops module


class TensorOperators:
    """Mixin of ``Tensor``: Python operators and numpy-named methods as ops."""

    __slots__ = ()

    # --- operators (dispatch to core.ops) -----------------------------------------------
    def __add__(self, o):
        return _ops.add(self, o)

    def __radd__(self, o):
        return _ops.add(o, self)

    def __sub__(self, o):
        return _ops.sub(self, o)

    def __rsub__(self, o):
        return _ops.sub(o, self)

    def __mul__(self, o):
        return _ops.mul(self, o)

    def __rmul__(self, o):
        return _ops.mul(o, self)

    def __truediv__(self, o):
        return _ops.div(self, o)

    def __rtruediv__(self, o):
        return _ops.div(o, self)

    def __pow__(self, o):
        return _ops.pow(self, o)

    def __rpow__(self, o):
        return _ops.pow(o, self)

    def __matmul__(self, o):
        return _ops.matmul(self, o)

    def __rmatmul__(self, o):
        return _ops.matmul(o, self)

    def __neg__(self):
        return _ops.neg(self)

    def __pos__(self):
        return _ops._util.unchanged(self)  # +v of a Variable is a new tensor, as numpy's +a

    def __abs__(self):
        return _ops.abs(self)

    def __gt__(self, o):
        return _ops.greater(self, o)

    def __ge__(self, o):
        return _ops.greater_equal(self, o)

    def __lt__(self, o):
        return _ops.less(self, o)

    def __le__(self, o):
        return _ops.less_equal(self, o)

    def __eq__(self, o):  # elementwise, as numpy
        return _ops.equal(self, o)

    def __ne__(self, o):
        return _ops.not_equal(self, o)

    def __getitem__(self, key):
        return _ops.getitem(self, key)

    def __setitem__(self, key, value):
        raise TypeError(
            "tensors are immutable: use tv.where, tv.pad or a Variable's assign instead of "
            "item assignment"
        )

    def __mod__(self, o):
        return _ops.mod(self, o)

    def __rmod__(self, o):
        return _ops.mod(o, self)

    # --- method forms of ops -------------------------------------------------------------
    @property
    def T(self):
        return _ops.transpose(self)

    @property
    def mT(self):  # noqa: N802 - numpy's name: the last two axes swapped
        return _ops.swapaxes(self, -1, -2)

    def reshape(self, *shape):
        """``x.reshape(3, 2)`` or ``x.reshape((3, 2))``, as numpy."""
        return _ops.reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes):
        """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``, as numpy."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _ops.transpose(self, axes or None)

    def flatten(self):
        """A 1-D copy of the values, as ``ndarray.flatten`` (``tv.flatten`` keeps axis 0)."""
        return _ops.ravel(self)

    def clip(self, min=None, max=None):  # noqa: A002 - numpy's names
        """``x.clip(min, max)``; a missing bound is unbounded."""
        return _ops.clip(self, min, max)


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
        return getattr(_ops, op_name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = attr
    method.__doc__ = f"``x.{attr}(...)`` is ``tv.{op_name}(x, ...)``."
    return method


# real methods (not __getattr__): they tab-complete, have help() and cost no lookup
for _attr, _op_name in _METHODS.items():
    setattr(TensorOperators, _attr, _method(_attr, _op_name))
