"""Gradients of reductions and softmax, written with ops."""

from __future__ import annotations

from .. import kernel_names as K
from .. import ops as o


def _expand(dy, attrs):
    """dy reshaped with the reduced axes kept (size 1), ready to broadcast."""
    shape, axes = attrs["input_shape"], attrs["axis"]
    if attrs["keepdims"] or (axes is None and not dy.shape):
        return dy  # kept axes, or a 0-d total: broadcasts as it is
    axes = range(len(shape)) if axes is None else axes
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return o.reshape(dy, kept)


# sum: dx = broadcast(dy)
def _sum(dy, saved, attrs):
    return {"x": lambda: o.broadcast_to(_expand(dy, attrs), attrs["input_shape"])}


# max/min: dx = dy shared evenly among the elements equal to the result
def _extreme(dy, saved, attrs):
    x, y = saved

    def dx():
        yk = _expand(y, attrs)
        hit = o.cast(o.equal(x, yk), x.dtype)
        count = o.sum(hit, attrs["axis"], keepdims=True)
        return hit * (_expand(dy, attrs) / count)

    return {"x": dx}


# prod: dx_i = dy * prod_{j != i} x_j (safe where x has zeros)
def _prod(dy, saved, attrs):
    (x,) = saved

    def dx():
        axis = attrs["axis"]
        zero = o.equal(x, 0)
        zeros = o.sum(o.cast(zero, x.dtype), axis, keepdims=True)
        rest = o.prod(o.where(zero, o.ones_like(x), x), axis, keepdims=True)
        safe_x = o.where(zero, o.ones_like(x), x)
        at_zero = rest * o.cast(o.equal(zeros, 1), x.dtype)
        elsewhere = rest / safe_x * o.cast(o.equal(zeros, 0), x.dtype)
        return _expand(dy, attrs) * o.where(zero, at_zero, elsewhere)

    return {"x": dx}


# softmax: y = softmax(x); dx = y (dy - sum(dy y))
def _softmax(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: y * (dy - o.sum(dy * y, attrs["axis"], keepdims=True))}


# log_softmax: y = x - logsumexp(x); dx = dy - exp(y) sum(dy)
def _log_softmax(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: dy - o.exp(y) * o.sum(dy, attrs["axis"], keepdims=True)}


GRADIENTS = [
    (K.SUM, _sum, (), ()),
    (K.MAX, _extreme, ("x",), (0,)),
    (K.MIN, _extreme, ("x",), (0,)),
    (K.PROD, _prod, ("x",), ()),
    (K.SOFTMAX, _softmax, (), (0,)),
    (K.LOG_SOFTMAX, _log_softmax, (), (0,)),
]
