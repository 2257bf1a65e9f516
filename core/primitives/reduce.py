"""The reductions and softmax: one ``Primitive`` row each; VJPs written with ops."""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..backends.numpy import reduce as npk
from ..backends.numpy.reduce import reduce_
from ..registry import batching as B
from ..registry import kernel_names as K
from ..registry.primitive import Primitive
from ..tensors.tensor import Tensor
from .define import family


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
    """max/min: dx = dy shared evenly among the elements equal to the result"""
    x, y = saved

    def dx():
        yk = _expand(y, attrs)
        hit = o.cast(o.equal(x, yk), x.dtype)
        count = o.sum(hit, attrs["axis"], keepdims=True)
        return hit * (_expand(dy, attrs) / count)

    return {"x": dx}


# prod: dx_i = dy prod_{j != i} x_j. Without zeros that is prod(x) / x_i. With zeros it is
# built so that its own derivative is right too (the Hessian, issue 12): along a reduction
# with c zeros, s = sum of x over the zeros (0, but x's derivative flows through it) and
# r = product of the non-zeros: c = 1: dx = r at the zero, s r / x_i elsewhere;
# c = 2: dx = (s - x_i) r at a zero (the other zero's x), 0 elsewhere; c > 2: 0.
def _prod(dy, saved, attrs):
    """prod: dx_i = dy times the product of the other elements"""
    (x,) = saved

    def dx():
        axis, values = attrs["axis"], x.numpy()
        if not np.isfinite(values).all():  # prod / x would be inf / inf: no division
            return _expand(dy, attrs) * _product_of_others(x, axis)
        if not (values == 0).any():
            return _expand(dy, attrs) * (o.prod(x, axis, keepdims=True) / x)
        return _expand(dy, attrs) * _prod_with_zeros(x, values == 0, axis)

    return {"x": dx}


def _product_of_others(x, axis):
    """prod_{j != i} x_j along ``axis`` (a tuple of axes) with no division: the product of
    the elements before i times the product of those after, over the flattened axes."""
    axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in axis)
    keep = [a for a in range(x.ndim) if a not in axes]
    t = o.transpose(x, keep + list(axes))
    flat = o.reshape(t, t.shape[: len(keep)] + (-1,))
    n = flat.shape[-1]
    ones = o.ones_like(o.getitem(flat, (Ellipsis, slice(0, 1))))
    before = o.cumprod(o.concat([ones, o.getitem(flat, (Ellipsis, slice(0, n - 1)))], -1), -1)
    rev = (Ellipsis, slice(None, None, -1))
    tail = o.concat([o.getitem(flat, (Ellipsis, slice(1, n))), ones], -1)
    after = o.getitem(o.cumprod(o.getitem(tail, rev), -1), rev)
    others = o.reshape(before * after, t.shape)
    return o.transpose(others, list(np.argsort(keep + list(axes))))


def _prod_with_zeros(x, zero, axis):
    """prod_{j != i} x_j along ``axis`` where ``x`` has zeros (``zero``: a bool array)."""
    count = zero.sum(axis=axis, keepdims=True)  # zeros per reduction: constant masks
    none, one, two = (Tensor(count == c) for c in (0, 1, 2))
    at_zero, zeros = Tensor(zero), o.zeros_like(x)
    safe_x = o.where(at_zero, o.ones_like(x), x)
    rest = o.prod(safe_x, axis, keepdims=True)
    s = o.sum(o.where(at_zero, x, zeros), axis, keepdims=True)
    nonzero_grad = o.where(none, rest / safe_x, o.where(one, s * rest / safe_x, zeros))
    zero_grad = o.where(one, rest, o.where(two, (s - x) * rest, zeros))
    return o.where(at_zero, zero_grad, nonzero_grad)


# softmax: y = softmax(x); dx = y (dy - sum(dy y))
def _softmax(dy, saved, attrs):
    """softmax: dx = y (dy - sum(dy y))"""
    (y,) = saved
    return {"x": lambda: y * (dy - o.sum(dy * y, attrs["axis"], keepdims=True))}


# log_softmax: y = x - logsumexp(x); dx = dy - exp(y) sum(dy)
def _log_softmax(dy, saved, attrs):
    """log_softmax: dx = dy - exp(y) sum(dy)"""
    (y,) = saved
    return {"x": lambda: dy - o.exp(y) * o.sum(dy, attrs["axis"], keepdims=True)}


_SUM = {"x": r"{dy} \text{ copied to every summed entry}"}

ROWS = family(
    Primitive(
        K.SUM, kernel=reduce_(np.add.reduce), numba="reduce.sum_kernel", vjp=_sum, formula=_SUM
    ),
    Primitive(
        K.MAX,
        kernel=reduce_(np.maximum.reduce),
        vjp=_extreme,
        inputs_to_save=("x",),
        outputs_to_save=(0,),
    ),
    Primitive(
        K.MIN,
        kernel=reduce_(np.minimum.reduce),
        vjp=_extreme,
        inputs_to_save=("x",),
        outputs_to_save=(0,),
    ),
    Primitive(
        K.PROD,
        kernel=reduce_(np.multiply.reduce),
        numba="reduce.prod_kernel",
        vjp=_prod,
        inputs_to_save=("x",),
    ),
    Primitive(
        K.SOFTMAX,
        kernel=npk.softmax,
        numba="reduce.softmax_kernel",
        vjp=_softmax,
        outputs_to_save=(0,),
        batch=B.shift_axis,
    ),
    Primitive(
        K.LOG_SOFTMAX,
        kernel=npk.log_softmax,
        numba="reduce.log_softmax_kernel",
        vjp=_log_softmax,
        outputs_to_save=(0,),
        batch=B.shift_axis,
    ),
    batch=B.reduce_axes,
)
