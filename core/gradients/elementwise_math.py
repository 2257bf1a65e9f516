"""The extra elementwise math primitives, one ``Definition`` row each in ``DEFINITIONS``;
their VJPs are written with ops (second order works).

Conventions at non-differentiable points: floor, ceil, round and mod's jumps have gradient 0
(as autograd); hypot at (0, 0) and arcsin/arccos at +-1 give nan or inf (as autograd);
sinc near 0 uses its Taylor series (autograd's formula gives nan at 0, and the quotient
cancels near it), so its derivatives of every order are right there.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel_names as K
from .. import ops as o
from ..backends.numpy.elementwise import same
from ..backends.numpy.elementwise_math import binary, round_
from ..define import Definition as D

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _u(formula):
    """A unary gradient ``dx = formula(dy, x)``."""
    return lambda dy, saved, attrs: {"x": lambda: formula(dy, saved[0])}


def _zero(dy, saved, attrs):  # floor, ceil, round: piecewise constant
    return {"x": lambda: o.zeros_like(dy)}


# floor_divide: y = floor(a / b), piecewise constant in both (as autograd; PyTorch has none)
def _floor_div(dy, saved, attrs):
    return {"a": lambda: o.zeros_like(dy), "b": lambda: o.zeros_like(dy)}


# sinc: y = sin(pi x)/(pi x); dx = dy (cos(pi x) - y) / x, and near 0 (|pi x| < 1/2, where
# that difference cancels) its Taylor series, pi z sum_k (-1)^k 2k z^(2k-2) / (2k+1)!, z = pi x:
# a polynomial in x, so sinc'' (0) = -pi^2/3 and every higher derivative at 0 is right too
_SINC_SERIES = [(-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(1, 9)]


def _sinc(dy, saved, attrs):
    """sinc: dx = dy (cos(pi x) - y) / x (its Taylor series near 0)"""
    x, y = saved

    def dx():
        near = o.less(o.abs(x), 0.5 / math.pi)
        safe = o.where(near, o.ones_like(x), x)
        z = x * math.pi
        u = z * z
        series = o.zeros_like(x) + _SINC_SERIES[-1]
        for c in reversed(_SINC_SERIES[:-1]):
            series = series * u + c
        return dy * o.where(near, z * series * math.pi, (o.cos(safe * math.pi) - y) / safe)

    return {"x": dx}


# atan2(a, b): da = dy b / (a^2 + b^2), db = -dy a / (a^2 + b^2)
def _atan2(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: dy * b / (a * a + b * b), "b": lambda: o.neg(dy * a) / (a * a + b * b)}


# logaddexp: y = log(e^a + e^b); da = dy e^a / (e^a + e^b) = dy sigmoid(a - b), db likewise.
# Not e^(a - y): y is rounded (in float32 -2e7 + log 2 is -2e7), and e^(a - y) would give 1
def _logaddexp(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: dy * o.sigmoid(a - b), "b": lambda: dy * o.sigmoid(b - a)}


# logaddexp2: y = log2(2^a + 2^b); da = dy sigmoid((a - b) ln 2), db likewise
def _logaddexp2(dy, saved, attrs):
    a, b = saved
    return {
        "a": lambda: dy * o.sigmoid((a - b) * _LN2),
        "b": lambda: dy * o.sigmoid((b - a) * _LN2),
    }


# hypot: y = sqrt(a^2 + b^2); da = dy a / y, db = dy b / y
def _hypot(dy, saved, attrs):
    a, b, y = saved
    return {"a": lambda: dy * a / y, "b": lambda: dy * b / y}


# mod: y = a - q b with q = floor(a / b), locally constant: da = dy, db = -dy q. q is read
# back from y itself (NaN where y is: a = +-inf or b = 0, where mod has no value and so no
# derivative) and held constant, so second derivatives are 0, not 0 * inf from floor's chain
def _mod(dy, saved, attrs):
    a, b = saved

    def db():
        q = o.stop_gradient(o.round((a - o.mod(a, b)) / b))
        return o.neg(dy * q)

    return {"a": lambda: dy, "b": db}


_RW = ("a", "b")  # the binary ones' VJPs read both inputs
_ZERO = {"x": "0"}  # piecewise constant

# one row per primitive: kernel name, numpy kernel, VJP, saved inputs, saved outputs, formula
# (no batching rule: the batched replay runs these once per row)
DEFINITIONS = (
    D(K.SINH, same(np.sinh), _u(lambda dy, x: dy * o.cosh(x)), ("x",), formula={"x": r"\cosh {x}"}),
    D(K.COSH, same(np.cosh), _u(lambda dy, x: dy * o.sinh(x)), ("x",), formula={"x": r"\sinh {x}"}),
    D(K.ASIN, same(np.arcsin), _u(lambda dy, x: dy / o.sqrt(1 - x * x)), ("x",),
      formula={"x": r"\frac{1}{\sqrt{1 - {x}^2}}"}),
    D(K.ACOS, same(np.arccos), _u(lambda dy, x: o.neg(dy) / o.sqrt(1 - x * x)), ("x",),
      formula={"x": r"-\frac{1}{\sqrt{1 - {x}^2}}"}),
    D(K.ATAN, same(np.arctan), _u(lambda dy, x: dy / (x * x + 1)), ("x",),
      formula={"x": r"\frac{1}{1 + {x}^2}"}),
    D(K.ASINH, same(np.arcsinh), _u(lambda dy, x: dy / o.sqrt(x * x + 1)), ("x",),
      formula={"x": r"\frac{1}{\sqrt{{x}^2 + 1}}"}),
    D(K.ACOSH, same(np.arccosh), _u(lambda dy, x: dy / o.sqrt(x * x - 1)), ("x",),
      formula={"x": r"\frac{1}{\sqrt{{x}^2 - 1}}"}),
    D(K.ATANH, same(np.arctanh), _u(lambda dy, x: dy / (1 - x * x)), ("x",),
      formula={"x": r"\frac{1}{1 - {x}^2}"}),
    D(K.EXPM1, same(np.expm1), _u(lambda dy, y: dy * (y + 1)), (), (0,), formula={"x": "{y} + 1"}),
    D(K.LOG2, same(np.log2), _u(lambda dy, x: dy / (x * _LN2)), ("x",),
      formula={"x": r"\frac{1}{{x} \ln 2}"}),
    D(K.LOG10, same(np.log10), _u(lambda dy, x: dy / (x * _LN10)), ("x",),
      formula={"x": r"\frac{1}{{x} \ln 10}"}),
    D(K.SINC, same(np.sinc), _sinc, ("x",), (0,)),
    D(K.FLOOR, same(np.floor), _zero, formula=_ZERO),
    D(K.CEIL, same(np.ceil), _zero, formula=_ZERO),
    D(K.ROUND, round_, _zero, formula=_ZERO),
    D(K.ATAN2, binary(np.arctan2), _atan2, _RW,
      formula={"a": r"\frac{{b}}{{a}^2 + {b}^2}", "b": r"-\frac{{a}}{{a}^2 + {b}^2}"}),
    D(K.LOG_ADD_EXP, binary(np.logaddexp), _logaddexp, _RW,
      formula={"a": r"\sigma({a} - {b})", "b": r"\sigma({b} - {a})"}),
    D(K.LOG_ADD_EXP2, binary(np.logaddexp2), _logaddexp2, _RW,
      formula={"a": r"\sigma(({a} - {b}) \ln 2)", "b": r"\sigma(({b} - {a}) \ln 2)"}),
    D(K.HYPOT, binary(np.hypot), _hypot, _RW, (0,),
      formula={"a": r"\frac{{a}}{{y}}", "b": r"\frac{{b}}{{y}}"}),
    D(K.MOD, binary(np.mod), _mod, _RW, formula={"a": "1", "b": r"-\operatorname{floor}({a} / {b})"}),
    D(K.FLOOR_DIV, binary(np.floor_divide), _floor_div, formula={"a": "0", "b": "0"}),
    # bitwise (logical on bool): integer or bool results, no gradient
    D(K.BITWISE_AND, binary(np.bitwise_and), None),
    D(K.BITWISE_OR, binary(np.bitwise_or), None),
    D(K.BITWISE_XOR, binary(np.bitwise_xor), None),
    D(K.INVERT, lambda i, a: np.asarray(np.invert(i["x"])), None),
    D(K.LEFT_SHIFT, binary(np.left_shift), None),
    D(K.RIGHT_SHIFT, binary(np.right_shift), None),
)  # fmt: skip
