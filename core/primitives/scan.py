"""The scans (cumsum, cumprod): one ``Primitive`` row each; VJPs written with ops.

cumsum: dx = reversed cumsum of dy along the axis.
cumprod: dx_i = sum_{j >= i} dy_j prod_{k <= j, k != i} x_k. Without zeros on the axis that is
the reversed cumsum of dy * y divided by x; with a zero or an infinity, an exact O(n^2) form
(no division).
"""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..registry import kernel_names as K
from ..registry.primitive import Primitive
from ..tensors.tensor import Tensor
from ..tensors.tracing import traced


def _flip(t, axis):
    return o.getitem(t, (slice(None),) * axis + (slice(None, None, -1),))


def _rcumsum(t, axis):
    return _flip(o.cumsum(_flip(t, axis), axis), axis)


def _cumsum(dy, saved, attrs):
    """cumsum: dx = the reversed cumsum of dy"""
    return {"x": lambda: _rcumsum(dy, attrs["axis"])}


def _cumprod(dy, saved, attrs):
    """cumprod: dx_i = sum over j >= i of dy_j times the product of x_k, k <= j, k != i"""
    x, y = saved
    axis = attrs["axis"]

    def dx():
        if not traced(x) and np.all(np.isfinite(x._array) & (x._array != 0)):
            return _rcumsum(dy * y, axis) / x
        # a zero or an infinity (inf / inf would be NaN where the product of the others is
        # not: cumprod along a size-1 axis of inf is x itself, dx = dy); under tv.jit always
        # (the program cannot know the next call's values)
        return o.moveaxis(_cumprod_exact(o.moveaxis(x, axis, -1), o.moveaxis(dy, axis, -1)),
                          -1, axis)  # fmt: skip

    return {"x": dx}


def _cumprod_exact(x, dy):
    """Last axis: dx_i = (prod_{k<i} x_k) * sum_{j>=i} dy_j prod_{i<k<=j} x_k."""
    n = x.shape[-1]
    after = np.arange(n)[None, :] > np.arange(n)[:, None]  # [i, j]: j > i
    rows = o.where(after, o.expand_dims(x, -2), o.ones_like(o.expand_dims(x, -2)))
    tail = o.cumprod(rows, -1) * Tensor(np.triu(np.ones((n, n), x.dtype)))
    r = o.sum(tail * o.expand_dims(dy, -2), -1)
    ones = o.ones_like(o.getitem(x, (Ellipsis, slice(0, 1))))
    before = o.cumprod(o.concat([ones, o.getitem(x, (Ellipsis, slice(0, n - 1)))], -1), -1)
    return before * r


ROWS = (
    Primitive(K.CUMSUM, kernel=lambda i, a: np.cumsum(i["x"], axis=a["axis"]), vjp=_cumsum),
    Primitive(
        K.CUMPROD,
        kernel=lambda i, a: np.cumprod(i["x"], axis=a["axis"]),
        vjp=_cumprod,
        inputs_to_save=("x",),
        outputs_to_save=(0,),
    ),
)
