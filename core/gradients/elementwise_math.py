"""Gradients of the extra elementwise math kernels, written with ops (second order works).

Conventions at non-differentiable points: floor, ceil, round and mod's jumps have gradient 0
(as autograd); hypot at (0, 0) and arcsin/arccos at +-1 give nan or inf (as autograd);
sinc at 0 has its true derivative 0 (autograd's formula gives nan there).
"""

from __future__ import annotations

import math

from .. import kernel_names as K
from .. import ops as o

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _u(formula):
    """A unary gradient ``dx = formula(dy, x)``."""
    return lambda dy, saved, attrs: {"x": lambda: formula(dy, saved[0])}


def _zero(dy, saved, attrs):  # floor, ceil, round: piecewise constant
    return {"x": lambda: o.zeros_like(dy)}


# sinc: y = sin(pi x)/(pi x); dx = dy (cos(pi x) - y) / x, and 0 at x = 0
def _sinc(dy, saved, attrs):
    x, y = saved

    def dx():
        at0 = o.equal(x, 0)
        safe = o.where(at0, o.ones_like(x), x)
        return dy * o.where(at0, o.zeros_like(x), (o.cos(safe * math.pi) - y) / safe)

    return {"x": dx}


# atan2(a, b): da = dy b / (a^2 + b^2), db = -dy a / (a^2 + b^2)
def _atan2(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: dy * b / (a * a + b * b), "b": lambda: o.neg(dy * a) / (a * a + b * b)}


# logaddexp: y = log(e^a + e^b); da = dy e^(a - y), db = dy e^(b - y)
def _logaddexp(dy, saved, attrs):
    a, b, y = saved
    return {"a": lambda: dy * o.exp(a - y), "b": lambda: dy * o.exp(b - y)}


# logaddexp2: y = log2(2^a + 2^b); da = dy 2^(a - y), db = dy 2^(b - y)
def _logaddexp2(dy, saved, attrs):
    a, b, y = saved
    return {"a": lambda: dy * o.exp((a - y) * _LN2), "b": lambda: dy * o.exp((b - y) * _LN2)}


# hypot: y = sqrt(a^2 + b^2); da = dy a / y, db = dy b / y
def _hypot(dy, saved, attrs):
    a, b, y = saved
    return {"a": lambda: dy * a / y, "b": lambda: dy * b / y}


# mod: y = a - floor(a / b) b; da = dy, db = -dy floor(a / b)
def _mod(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: dy, "b": lambda: o.neg(dy * o.floor(a / b))}


GRADIENTS = [
    (K.SINH, _u(lambda dy, x: dy * o.cosh(x)), ("x",), ()),
    (K.COSH, _u(lambda dy, x: dy * o.sinh(x)), ("x",), ()),
    (K.ASIN, _u(lambda dy, x: dy / o.sqrt(1 - x * x)), ("x",), ()),
    (K.ACOS, _u(lambda dy, x: o.neg(dy) / o.sqrt(1 - x * x)), ("x",), ()),
    (K.ATAN, _u(lambda dy, x: dy / (x * x + 1)), ("x",), ()),
    (K.ASINH, _u(lambda dy, x: dy / o.sqrt(x * x + 1)), ("x",), ()),
    (K.ACOSH, _u(lambda dy, x: dy / o.sqrt(x * x - 1)), ("x",), ()),
    (K.ATANH, _u(lambda dy, x: dy / (1 - x * x)), ("x",), ()),
    (K.EXPM1, _u(lambda dy, y: dy * (y + 1)), (), (0,)),
    (K.LOG2, _u(lambda dy, x: dy / (x * _LN2)), ("x",), ()),
    (K.LOG10, _u(lambda dy, x: dy / (x * _LN10)), ("x",), ()),
    (K.SINC, _sinc, ("x",), (0,)),
    (K.FLOOR, _zero, (), ()),
    (K.CEIL, _zero, (), ()),
    (K.ROUND, _zero, (), ()),
    (K.ATAN2, _atan2, ("a", "b"), ()),
    (K.LOG_ADD_EXP, _logaddexp, ("a", "b"), (0,)),
    (K.LOG_ADD_EXP2, _logaddexp2, ("a", "b"), (0,)),
    (K.HYPOT, _hypot, ("a", "b"), (0,)),
    (K.MOD, _mod, ("a", "b"), ()),
]
