"""More elementwise math with numpy's names: hyperbolic and inverse trig functions, exp/log
variants, rounding, ``mod``, ``fmax``/``fmin``, ``nan_to_num``, angle conversions.

Primitives (one kernel each) where a composite would lose precision (``expm1``, ``log2``,
``sinh`` for large x, ...); composites where it would not (``exp2 = pow(2, x)``, ``fabs``,
``deg2rad``, ``fmax``, ``nan_to_num``).
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.tensor import Tensor
from .arguments import as_tensor, binary_args, require_float, unchanged
from .elementwise import (  # noqa: F401 - expm1 is one of this module's functions
    abs,
    cast,
    expm1,
    greater_equal,
    less_equal,
    not_equal,
    pow,
    unary,
    where,
)

sinh = unary(K.SINH, "sinh")
cosh = unary(K.COSH, "cosh")
arcsin = unary(K.ASIN, "arcsin")
arccos = unary(K.ACOS, "arccos")
arctan = unary(K.ATAN, "arctan")
arcsinh = unary(K.ASINH, "arcsinh")
arccosh = unary(K.ACOSH, "arccosh")
arctanh = unary(K.ATANH, "arctanh")
log2 = unary(K.LOG2, "log2")
log10 = unary(K.LOG10, "log10")
sinc = unary(K.SINC, "sinc")
sinc.__doc__ = "``sin(pi x) / (pi x)``, 1 at 0 (kernel ``Sinc``); its gradient at 0 is 0."
floor = unary(K.FLOOR, "floor")
ceil = unary(K.CEIL, "ceil")
floor.__doc__ = "Elementwise floor (kernel ``Floor``); gradient 0 everywhere (as autograd)."
ceil.__doc__ = "Elementwise ceil (kernel ``Ceil``); gradient 0 everywhere (as autograd)."


def round(x, decimals: int = 0) -> Tensor:  # noqa: A001 - numpy's name
    """Round half to even to ``decimals`` places, as ``numpy.round``; gradient 0."""
    x = as_tensor(x, "round")
    if x.dtype.kind in "iub" and decimals >= 0:
        return unchanged(x)  # integers are already round (numpy returns them unchanged)
    require_float(x, "round")
    return run_kernel(K.ROUND, {"x": x}, {"decimals": int(decimals)})


def _float_binary(kernel: str, op: str, doc: str):
    def fn(a, b) -> Tensor:
        a, b = binary_args(a, b, op)
        if a.dtype.kind != "f":
            a, b = cast(a, np.float32), cast(b, np.float32)
        return run_kernel(kernel, {"a": a, "b": b})

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = doc
    return fn


arctan2 = _float_binary(
    K.ATAN2, "arctan2", "Angle of the point ``(x2, x1)`` as ``numpy.arctan2(x1, x2)``."
)
logaddexp = _float_binary(K.LOG_ADD_EXP, "logaddexp", "``log(exp(a) + exp(b))``, stable.")
logaddexp2 = _float_binary(K.LOG_ADD_EXP2, "logaddexp2", "``log2(2**a + 2**b)``, stable.")
hypot = _float_binary(
    K.HYPOT, "hypot", "``sqrt(a**2 + b**2)`` without overflow; gradient nan at (0, 0)."
)


def mod(a, b) -> Tensor:
    """Remainder with the sign of ``b``, as ``numpy.mod`` (Python's ``%``).

    Gradients: ``da = dy``, ``db = -dy * floor(a / b)``; the jumps get the one-sided value.
    """
    a, b = binary_args(a, b, "mod")
    return run_kernel(K.MOD, {"a": a, "b": b})


remainder = mod


def floor_divide(a, b) -> Tensor:
    """``a // b``, as ``numpy.floor_divide`` (exact on integers; on floats numpy's
    ``(a - a % b) / b`` rounding, so ``1.0 // 0.1`` is 9.0 as in numpy and Python).

    Gradient 0 in both arguments: the result is piecewise constant (as autograd; PyTorch's
    ``floor_divide`` has no derivative and raises).
    """
    a, b = binary_args(a, b, "floor_divide")
    if a.dtype.kind == "b":
        raise TypeError("floor_divide: bool tensors have no //; cast them to int or float first")
    return run_kernel(K.FLOOR_DIV, {"a": a, "b": b})


def divmod(a, b) -> tuple[Tensor, Tensor]:  # noqa: A001 - Python's and numpy's name
    """``(a // b, a % b)``, as ``numpy.divmod``; gradients as ``floor_divide`` and ``mod``."""
    return floor_divide(a, b), mod(a, b)


def _bitwise(kernel: str, op: str, symbol: str):
    def fn(a, b) -> Tensor:
        a, b = binary_args(a, b, op)
        if a.dtype.kind not in "biu":
            raise TypeError(
                f"{op} ({symbol}): expected bool or integer tensors, got {a.dtype}; on floats "
                "it has no meaning (compare first, e.g. (x > 0) & (y < 1))"
            )
        return run_kernel(kernel, {"a": a, "b": b})

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (
        f"``a {symbol} b`` as ``numpy.{op}``: logical on bool tensors, bitwise on integers; "
        "no gradient (the result is bool or integer)."
    )
    return fn


bitwise_and = _bitwise(K.BITWISE_AND, "bitwise_and", "&")
bitwise_or = _bitwise(K.BITWISE_OR, "bitwise_or", "|")
bitwise_xor = _bitwise(K.BITWISE_XOR, "bitwise_xor", "^")


def invert(x) -> Tensor:
    """``~x`` as ``numpy.invert``: logical not on bool tensors, bitwise not on integers; no
    gradient. On a float tensor a TypeError (numpy's too)."""
    x = as_tensor(x, "invert")
    if x.dtype.kind not in "biu":
        raise TypeError(
            f"invert (~): expected a bool or integer tensor, got {x.dtype}; for a float "
            "tensor's sign use -x, for a mask's complement ~(x > 0)"
        )
    return run_kernel(K.INVERT, {"x": x})


bitwise_not = invert


def _shift(kernel: str, op: str, symbol: str):
    def fn(a, b) -> Tensor:
        a, b = binary_args(a, b, op)
        if a.dtype.kind not in "iu":
            raise TypeError(f"{op} ({symbol}): expected integer tensors, got {a.dtype}")
        return run_kernel(kernel, {"a": a, "b": b})

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``a {symbol} b`` on integer tensors, as ``numpy.{op}``; no gradient."
    return fn


left_shift = _shift(K.LEFT_SHIFT, "left_shift", "<<")
right_shift = _shift(K.RIGHT_SHIFT, "right_shift", ">>")


def exp2(x) -> Tensor:
    """``2 ** x`` (a composite: ``pow(2, x)``, exact at integers as numpy)."""
    x = as_tensor(x, "exp2")
    require_float(x, "exp2")
    return pow(Tensor(np.asarray(2.0, x.dtype)), x)


def fabs(x) -> Tensor:
    """Absolute value of a float tensor; gradient ``sign(x)``, 0 at 0."""
    x = as_tensor(x, "fabs")
    return abs(x if x.dtype.kind == "f" else cast(x, np.float64))


def fmax(a, b) -> Tensor:
    """Elementwise maximum ignoring NaN (``numpy.fmax``). At ties ``a`` gets the gradient."""
    a, b = binary_args(a, b, "fmax")  # a select (not maximum, which halves at a tie)
    return where(not_equal(b, b), a, where(not_equal(a, a), b, where(greater_equal(a, b), a, b)))


def fmin(a, b) -> Tensor:
    """Elementwise minimum ignoring NaN (``numpy.fmin``). At ties ``a`` gets the gradient."""
    a, b = binary_args(a, b, "fmin")  # a select (not minimum, which halves at a tie)
    return where(not_equal(b, b), a, where(not_equal(a, a), b, where(less_equal(a, b), a, b)))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """NaN -> ``nan``, +inf -> ``posinf`` (largest finite), -inf -> ``neginf``, as numpy.

    The gradient passes where ``x`` is finite and is 0 at the replaced elements.
    """
    x = as_tensor(x, "nan_to_num")
    if x.dtype.kind != "f":
        return unchanged(x)
    big = np.finfo(x.dtype).max
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    const = lambda v: Tensor(np.full(x.shape, v, x.dtype))  # noqa: E731
    out = where(not_equal(x, x), const(nan), x)
    out = where(x == math.inf, const(posinf), out)
    return where(x == -math.inf, const(neginf), out)


def deg2rad(x) -> Tensor:
    """Degrees to radians: ``x * pi / 180``."""
    x = as_tensor(x, "deg2rad")
    return (x if x.dtype.kind == "f" else cast(x, np.float64)) * (math.pi / 180.0)


def rad2deg(x) -> Tensor:
    """Radians to degrees: ``x * 180 / pi``."""
    x = as_tensor(x, "rad2deg")
    return (x if x.dtype.kind == "f" else cast(x, np.float64)) * (180.0 / math.pi)


radians, degrees = deg2rad, rad2deg
