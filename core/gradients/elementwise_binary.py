"""Gradients of the two-input elementwise kernels (add, sub, mul, div, pow, maximum,
minimum, select), written with ops (so they differentiate again); the unary ones are in
``elementwise.py``.

Each entry: (kernel, grad_fn, inputs_to_save, outputs_to_save[, needed_by]); ``needed_by``
says which saved values each input's gradient reads. ``dy`` flows in; the engine reduces
broadcast gradients back to each input's shape.
"""

from __future__ import annotations

from .. import batching as B
from .. import kernel_names as K
from .. import ops as o
from ..tensor import Tensor


# add: da = dy, db = dy (reduced to each input's shape by the engine)
def _add(dy, saved, attrs):
    return {"a": lambda: dy, "b": lambda: dy}


# sub: da = dy, db = -dy
def _sub(dy, saved, attrs):
    return {"a": lambda: dy, "b": lambda: o.neg(dy)}


# mul: da = dy b, db = dy a
def _mul(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: dy * b, "b": lambda: dy * a}


# div: da = dy / b, db = -dy a / b^2
def _div(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: dy / b, "b": lambda: o.neg(dy * a) / (b * b)}


# pow: y = a^b; da = dy b a^(b-1) (0 where a = b = 0, as PyTorch and autograd: d/dx x^0 = 0);
# db = dy y log(a) (0 where a = 0 and b >= 0, as PyTorch; NaN for a < 0: no real log)
def _pow(dy, saved, attrs):
    a, b, y = saved

    def da():
        exponent = b - 1
        b_zero = b.numpy() == 0  # first: a constant exponent without zeros (x ** 2) never
        if not b_zero.any():  # reads a's values, so tv.jit can compile it
            return dy * b * o.pow(a, exponent)
        both_zero = (a.numpy() == 0) & b_zero
        if both_zero.any():  # exponent 1 there (b times it is 0): no 0 * inf, and its own
            exponent = o.where(Tensor(both_zero), o.ones_like(b), exponent)  # gradient is finite
        return dy * b * o.pow(a, exponent)

    def db():
        flat = (a.numpy() == 0) & (b.numpy() >= 0)
        if flat.any():  # log(1) = 0 there: no -inf, whose gradient would be 0 * inf later
            a_ = o.where(Tensor(flat), o.ones_like(a), a)
            return dy * y * o.log(a_)
        return dy * y * o.log(a)

    return {"a": da, "b": db}


# maximum: da = dy where a > b, db = dy where a < b, dy/2 each at a tie (PyTorch, autograd);
# where a or b is NaN neither loses: both get dy (PyTorch), so the NaN stays visible
def _maximum(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: _share(dy, a, b, o.less(a, b)), "b": lambda: _share(dy, a, b, a > b)}


# minimum: as maximum, with the comparisons reversed
def _minimum(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: _share(dy, a, b, a > b), "b": lambda: _share(dy, a, b, o.less(a, b))}


def _share(dy, a, b, lost):
    """dy where this input won, dy/2 at a tie, 0 where it ``lost`` (masks are constants)."""
    tie, zero = o.equal(a, b), o.zeros_like(dy)
    return o.where(lost, zero, o.where(tie, dy * 0.5, dy))


# select: da = dy where condition, db = dy elsewhere
def _select(dy, saved, attrs):
    (c,) = saved
    zero = o.zeros_like(dy)
    return {"a": lambda: o.where(c, dy, zero), "b": lambda: o.where(c, zero, dy)}


GRADIENTS = [
    (K.ADD, _add, (), ()),
    (K.SUB, _sub, (), ()),
    (K.MUL, _mul, ("a", "b"), (), {"a": ("b",), "b": ("a",)}),
    (K.DIV, _div, ("a", "b"), (), {"a": ("b",), "b": ("a", "b")}),
    (K.POW, _pow, ("a", "b"), (0,), {"a": ("a", "b"), "b": ("a", "b"), 0: ("b",)}),
    (K.MAXIMUM, _maximum, ("a", "b"), ()),
    (K.MINIMUM, _minimum, ("a", "b"), ()),
    (K.SELECT, _select, ("condition",), ()),
]

# how the batched replay runs each (core/batching.py); the comparisons have no gradient but
# replay like the arithmetic they sit beside
BATCHING = dict.fromkeys(
    [K.ADD, K.SUB, K.MUL, K.DIV, K.POW, K.MAXIMUM, K.MINIMUM, K.GREATER, K.GREATER_EQUAL,
     K.LESS, K.LESS_EQUAL, K.EQUAL, K.NOT_EQUAL, K.SELECT],
    B.broadcast,
)  # fmt: skip
