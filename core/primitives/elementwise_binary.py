"""The two-input elementwise primitives (add, sub, mul, div, pow, maximum, minimum, select
and the comparisons): one ``Primitive`` row each in ``ROWS``; the unary ones are in
``elementwise.py``. The VJPs are written with ops (so they differentiate again). ``dy`` flows in; the engine reduces
broadcast gradients back to each input's shape.
"""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..backends.numpy import elementwise as npk
from ..backends.numpy.elementwise import binary
from ..registry import batching as B
from ..registry import kernel_names as K
from ..registry.primitive import Primitive
from ..tensors.tensor import Tensor
from ..tensors.tracing import traced
from .define import family


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
        if not traced(b):
            b_zero = b.numpy() == 0  # a constant exponent without zeros (x ** 2) never
            if not b_zero.any():  # reads a's values
                return dy * b * o.pow(a, exponent)
            if not traced(a):
                both = (a.numpy() == 0) & b_zero
                if not both.any():
                    return dy * b * o.pow(a, exponent)
                return dy * b * o.pow(a, o.where(Tensor(both), o.ones_like(b), exponent))
        # under tv.jit the same choice as kernels: exponent 1 where a = b = 0 (b times it is
        # 0 there: no 0 * inf, and its own gradient is finite)
        both = o.equal(a, 0) * o.equal(b, 0)
        return dy * b * o.pow(a, o.where(both, o.ones_like(b), exponent))

    def db():
        if traced(a) or traced(b):  # as below, with kernels (tv.jit reads no value)
            flat = o.equal(a, 0) * o.greater_equal(b, 0)
        else:
            flat = (a.numpy() == 0) & (b.numpy() >= 0)
            if not flat.any():
                return dy * y * o.log(a)
            flat = Tensor(flat)
        # log(1) = 0 where a = 0 and b >= 0: no -inf, whose gradient would be 0 * inf later
        return dy * y * o.log(o.where(flat, o.ones_like(a), a))

    return {"a": da, "b": db}


# maximum: da = dy where a > b, db = dy where a < b, dy/2 each at a tie (PyTorch, autograd);
# where a or b is NaN neither loses: both get dy (PyTorch), so the NaN stays visible
def _maximum(dy, saved, attrs):
    """maximum: da = dy where a > b, db = dy where b > a, dy/2 each at a tie"""
    a, b = saved
    return {"a": lambda: _share(dy, a, b, o.less(a, b)), "b": lambda: _share(dy, a, b, a > b)}


# minimum: as maximum, with the comparisons reversed
def _minimum(dy, saved, attrs):
    """minimum: da = dy where a < b, db = dy where b < a, dy/2 each at a tie"""
    a, b = saved
    return {"a": lambda: _share(dy, a, b, a > b), "b": lambda: _share(dy, a, b, o.less(a, b))}


def _share(dy, a, b, lost):
    """dy where this input won, dy/2 at a tie, 0 where it ``lost`` (masks are constants)."""
    tie, zero = o.equal(a, b), o.zeros_like(dy)
    return o.where(lost, zero, o.where(tie, dy * 0.5, dy))


# select: da = dy where condition, db = dy elsewhere
def _select(dy, saved, attrs):
    """where: da = dy where the condition holds, db = dy elsewhere"""
    (c,) = saved
    zero = o.zeros_like(dy)
    return {"a": lambda: o.where(c, dy, zero), "b": lambda: o.where(c, zero, dy)}


_CMP = ((K.GREATER, np.greater), (K.GREATER_EQUAL, np.greater_equal), (K.LESS, np.less),
        (K.LESS_EQUAL, np.less_equal), (K.EQUAL, np.equal), (K.NOT_EQUAL, np.not_equal))  # fmt: skip
_MUL_READS = {"a": ("b",), "b": ("a",)}
_DIV_READS = {"a": ("b",), "b": ("a", "b")}
_POW_READS = {"a": ("a", "b"), "b": ("a", "b"), 0: ("b",)}
_POW = {"a": "{b} {a}^{{b} - 1}", "b": r"{y} \ln {a}"}

ROWS = family(
    Primitive(K.ADD, kernel=binary(np.add), vjp=_add, formula={"a": "1", "b": "1"}),
    Primitive(K.SUB, kernel=binary(np.subtract), vjp=_sub, formula={"a": "1", "b": "-1"}),
    Primitive(
        K.MUL,
        kernel=binary(np.multiply),
        vjp=_mul,
        inputs_to_save=("a", "b"),
        needed_by=_MUL_READS,
        formula={"a": "{b}", "b": "{a}"},
    ),
    Primitive(
        K.DIV,
        kernel=binary(np.true_divide),
        vjp=_div,
        inputs_to_save=("a", "b"),
        needed_by=_DIV_READS,
        formula={"a": r"\frac{1}{{b}}", "b": r"-\frac{{a}}{{b}^2}"},
    ),
    Primitive(
        K.POW,
        kernel=binary(np.power),
        vjp=_pow,
        inputs_to_save=("a", "b"),
        outputs_to_save=(0,),
        needed_by=_POW_READS,
        formula=_POW,
    ),
    Primitive(K.MAXIMUM, kernel=binary(np.maximum), vjp=_maximum, inputs_to_save=("a", "b")),
    Primitive(K.MINIMUM, kernel=binary(np.minimum), vjp=_minimum, inputs_to_save=("a", "b")),
    Primitive(K.SELECT, kernel=npk.select, vjp=_select, inputs_to_save=("condition",)),
    *(Primitive(name, kernel=binary(fn)) for name, fn in _CMP),
    batch=B.broadcast,
)
