"""numpy kernels: hyperbolic and inverse trig functions, exp/log variants, rounding, and the
binary ``arctan2``, ``logaddexp``, ``logaddexp2``, ``hypot``, ``mod``, ``floor_divide`` and the
bitwise ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` (numpy broadcasting)."""

from __future__ import annotations

import numpy as np

from ... import kernel_names as K


def _unary(fn):
    # asarray: a 0-d input gives a numpy scalar; the kernel returns arrays of the input dtype
    return lambda i, a: np.asarray(fn(i["x"])).astype(i["x"].dtype, copy=False)


def _binary(fn):
    return lambda i, a: np.asarray(fn(i["a"], i["b"]))


def _round(i, a):
    return np.asarray(np.round(i["x"], a.get("decimals", 0)))


KERNELS = {
    K.SINH: _unary(np.sinh),
    K.COSH: _unary(np.cosh),
    K.ASIN: _unary(np.arcsin),
    K.ACOS: _unary(np.arccos),
    K.ATAN: _unary(np.arctan),
    K.ASINH: _unary(np.arcsinh),
    K.ACOSH: _unary(np.arccosh),
    K.ATANH: _unary(np.arctanh),
    K.EXPM1: _unary(np.expm1),
    K.LOG2: _unary(np.log2),
    K.LOG10: _unary(np.log10),
    K.SINC: _unary(np.sinc),
    K.FLOOR: _unary(np.floor),
    K.CEIL: _unary(np.ceil),
    K.ROUND: _round,
    K.ATAN2: _binary(np.arctan2),
    K.LOG_ADD_EXP: _binary(np.logaddexp),
    K.LOG_ADD_EXP2: _binary(np.logaddexp2),
    K.HYPOT: _binary(np.hypot),
    K.MOD: _binary(np.mod),
    K.FLOOR_DIV: _binary(np.floor_divide),
    K.BITWISE_AND: _binary(np.bitwise_and),
    K.BITWISE_OR: _binary(np.bitwise_or),
    K.BITWISE_XOR: _binary(np.bitwise_xor),
    K.INVERT: lambda i, a: np.asarray(np.invert(i["x"])),
    K.LEFT_SHIFT: _binary(np.left_shift),
    K.RIGHT_SHIFT: _binary(np.right_shift),
}
