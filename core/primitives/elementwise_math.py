"""The extra elementwise math primitives, one ``Primitive`` row each in ``ROWS``;
their VJPs are written with ops (second order works).

Conventions at non-differentiable points: floor, ceil, round and mod's jumps have gradient 0
(as autograd); hypot at (0, 0) and arcsin/arccos at +-1 give nan or inf (as autograd);
sinc near 0 uses its Taylor series (autograd's formula gives nan at 0, and the quotient
cancels near it), so its derivatives of every order are right there.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops as o
from ..backends.numpy.elementwise import same
from ..backends.numpy.elementwise_math import binary, round_
from ..registry import kernel_names as K
from ..registry.primitive import Primitive

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

ROWS = (
    Primitive(
        K.SINH,
        kernel=same(np.sinh),
        vjp=_u(lambda dy, x: dy * o.cosh(x)),
        inputs_to_save=("x",),
        formula={"x": r"\cosh {x}"},
    ),
    Primitive(
        K.COSH,
        kernel=same(np.cosh),
        vjp=_u(lambda dy, x: dy * o.sinh(x)),
        inputs_to_save=("x",),
        formula={"x": r"\sinh {x}"},
    ),
    Primitive(
        K.ASIN,
        kernel=same(np.arcsin),
        vjp=_u(lambda dy, x: dy / o.sqrt(1 - x * x)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{\sqrt{1 - {x}^2}}"},
    ),
    Primitive(
        K.ACOS,
        kernel=same(np.arccos),
        vjp=_u(lambda dy, x: o.neg(dy) / o.sqrt(1 - x * x)),
        inputs_to_save=("x",),
        formula={"x": r"-\frac{1}{\sqrt{1 - {x}^2}}"},
    ),
    Primitive(
        K.ATAN,
        kernel=same(np.arctan),
        vjp=_u(lambda dy, x: dy / (x * x + 1)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{1 + {x}^2}"},
    ),
    Primitive(
        K.ASINH,
        kernel=same(np.arcsinh),
        vjp=_u(lambda dy, x: dy / o.sqrt(x * x + 1)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{\sqrt{{x}^2 + 1}}"},
    ),
    Primitive(
        K.ACOSH,
        kernel=same(np.arccosh),
        vjp=_u(lambda dy, x: dy / o.sqrt(x * x - 1)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{\sqrt{{x}^2 - 1}}"},
    ),
    Primitive(
        K.ATANH,
        kernel=same(np.arctanh),
        vjp=_u(lambda dy, x: dy / (1 - x * x)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{1 - {x}^2}"},
    ),
    Primitive(
        K.EXPM1,
        kernel=same(np.expm1),
        vjp=_u(lambda dy, y: dy * (y + 1)),
        outputs_to_save=(0,),
        formula={"x": "{y} + 1"},
    ),
    Primitive(
        K.LOG2,
        kernel=same(np.log2),
        vjp=_u(lambda dy, x: dy / (x * _LN2)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{{x} \ln 2}"},
    ),
    Primitive(
        K.LOG10,
        kernel=same(np.log10),
        vjp=_u(lambda dy, x: dy / (x * _LN10)),
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{{x} \ln 10}"},
    ),
    Primitive(K.SINC, kernel=same(np.sinc), vjp=_sinc, inputs_to_save=("x",), outputs_to_save=(0,)),
    Primitive(K.FLOOR, kernel=same(np.floor), vjp=_zero, formula=_ZERO),
    Primitive(K.CEIL, kernel=same(np.ceil), vjp=_zero, formula=_ZERO),
    Primitive(K.ROUND, kernel=round_, vjp=_zero, formula=_ZERO),
    Primitive(
        K.ATAN2,
        kernel=binary(np.arctan2),
        vjp=_atan2,
        inputs_to_save=_RW,
        formula={"a": r"\frac{{b}}{{a}^2 + {b}^2}", "b": r"-\frac{{a}}{{a}^2 + {b}^2}"},
    ),
    Primitive(
        K.LOG_ADD_EXP,
        kernel=binary(np.logaddexp),
        vjp=_logaddexp,
        inputs_to_save=_RW,
        formula={"a": r"\sigma({a} - {b})", "b": r"\sigma({b} - {a})"},
    ),
    Primitive(
        K.LOG_ADD_EXP2,
        kernel=binary(np.logaddexp2),
        vjp=_logaddexp2,
        inputs_to_save=_RW,
        formula={"a": r"\sigma(({a} - {b}) \ln 2)", "b": r"\sigma(({b} - {a}) \ln 2)"},
    ),
    Primitive(
        K.HYPOT,
        kernel=binary(np.hypot),
        vjp=_hypot,
        inputs_to_save=_RW,
        outputs_to_save=(0,),
        formula={"a": r"\frac{{a}}{{y}}", "b": r"\frac{{b}}{{y}}"},
    ),
    Primitive(
        K.MOD,
        kernel=binary(np.mod),
        vjp=_mod,
        inputs_to_save=_RW,
        formula={"a": "1", "b": r"-\operatorname{floor}({a} / {b})"},
    ),
    Primitive(
        K.FLOOR_DIV, kernel=binary(np.floor_divide), vjp=_floor_div, formula={"a": "0", "b": "0"}
    ),
    # bitwise (logical on bool): integer or bool results, no gradient
    Primitive(K.BITWISE_AND, kernel=binary(np.bitwise_and), vjp=None),
    Primitive(K.BITWISE_OR, kernel=binary(np.bitwise_or), vjp=None),
    Primitive(K.BITWISE_XOR, kernel=binary(np.bitwise_xor), vjp=None),
    Primitive(K.INVERT, kernel=lambda i, a: np.asarray(np.invert(i["x"])), vjp=None),
    Primitive(K.LEFT_SHIFT, kernel=binary(np.left_shift), vjp=None),
    Primitive(K.RIGHT_SHIFT, kernel=binary(np.right_shift), vjp=None),
)
