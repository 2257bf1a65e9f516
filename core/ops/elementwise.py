"""Elementwise ops: unary math, activations, binary arithmetic and comparisons."""

from __future__ import annotations

import contextvars

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors import recording
from ..tensors.kinds import Constant, Variable
from ..tensors.tensor import Tensor
from .arguments import (
    as_tensor,
    binary_args,
    broadcast_shape,
    cast,
    constant_array,
    require_float,
)


def unary(kernel: str, op: str, float_only: bool = True):
    def fn(x) -> Tensor:
        if type(x) is not Tensor:
            x = as_tensor(x, op)
        if float_only:
            d = x._data
            if d is None or d.dtype.kind != "f":
                require_float(x, op)
        return run_kernel(kernel, {"x": x})

    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"Elementwise ``{op}`` (kernel ``{kernel}``)."
    return fn


exp = unary(K.EXP, "exp")
log = unary(K.LOG, "log")
expm1 = unary(K.EXPM1, "expm1")  # (with numpy's other exp/log forms in elementwise_math)
log1p = unary(K.LOG1P, "log1p")
sqrt = unary(K.SQRT, "sqrt")
rsqrt = unary(K.RSQRT, "rsqrt")
square = unary(K.SQUARE, "square")
reciprocal = unary(K.RECIPROCAL, "reciprocal")
sin = unary(K.SIN, "sin")
cos = unary(K.COS, "cos")
tan = unary(K.TAN, "tan")
tanh = unary(K.TANH, "tanh")
sigmoid = unary(K.SIGMOID, "sigmoid")
relu = unary(K.RELU, "relu")
relu.__doc__ += (
    "\n\nConvention (PyTorch): the gradient is 0 where ``x <= 0`` (0 at 0) and ``dy`` elsewhere, "
    "NaN included: ``relu(nan)`` is NaN and its gradient reaches the NaN's producer, as "
    "``maximum(nan, 0)``'s does (autograd's ``x > 0`` mask sends it 0)."
)
selu = unary(K.SELU, "selu")
softplus = unary(K.SOFTPLUS, "softplus")
gelu = unary(K.GELU, "gelu")
erf = unary(K.ERF, "erf")
neg = unary(K.NEG, "neg", float_only=False)
abs = unary(K.ABS, "abs", float_only=False)  # noqa: A001 - numpy's name
sign = unary(K.SIGN, "sign", float_only=False)


def _slope(alpha, x: Tensor, op: str):
    """``alpha`` as a float attr (a number: the op's one kernel), or as a tensor of ``x``'s
    dtype when it is a tensor or an array (a learnable or per-channel slope, PyTorch's
    PReLU): then the op is composed of ops, so its gradient reaches ``alpha`` too."""
    if isinstance(alpha, Tensor) or np.ndim(alpha) > 0:
        a = as_tensor(alpha, op)
        if a.dtype.kind not in "fiub":
            raise TypeError(f"{op}: alpha must be a number or a numeric tensor, got {a.dtype}")
        return a if a.dtype == x.dtype else cast(a, x.dtype)
    return float(alpha)


def leaky_relu(x, alpha: float = 0.2) -> Tensor:
    """``x if x > 0 else alpha * x`` (TensorFlow.js default alpha 0.2). ``alpha`` may be a
    tensor (a learnable slope, broadcast against ``x``): it then gets its gradient."""
    x = as_tensor(x, "leaky_relu")
    require_float(x, "leaky_relu")
    alpha = _slope(alpha, x, "leaky_relu")
    if isinstance(alpha, Tensor):
        return where(x > 0, x, alpha * x)
    return run_kernel(K.LEAKY_RELU, {"x": x}, {"alpha": alpha})


def elu(x, alpha: float = 1.0) -> Tensor:
    """``x if x > 0 else alpha * (exp(x) - 1)``. ``alpha`` may be a tensor (learnable,
    broadcast against ``x``): it then gets its gradient."""
    x = as_tensor(x, "elu")
    require_float(x, "elu")
    alpha = _slope(alpha, x, "elu")
    if isinstance(alpha, Tensor):
        inside = x > 0
        return where(inside, x, alpha * expm1(where(inside, _zero(x), x)))
    return run_kernel(K.ELU, {"x": x}, {"alpha": alpha})


def _zero(x: Tensor) -> Tensor:
    return Tensor(np.zeros((), x.dtype))


def clip(x, min_value=None, max_value=None) -> Tensor:
    """Clip to ``[min_value, max_value]``, as ``numpy.clip``: ``minimum(maximum(x, lo), hi)``
    (so ``hi`` wherever ``lo > hi``), in numpy's result dtype (an int tensor with float
    bounds gives floats). The bounds may be numbers, arrays or tensors (broadcast), or None
    (no bound).

    Gradients, PyTorch's ``clamp``: ``x`` gets it where ``lo <= x <= hi`` (bounds included;
    autograd gives 0 at the bounds) and not for NaN; ``lo`` where ``x < lo <= hi``; ``hi``
    where ``x > hi`` or ``lo > hi``.
    """
    x = as_tensor(x, "clip")
    bounds = [_bound(b, x, name) for b, name in ((min_value, "min"), (max_value, "max"))]
    dtype = np.result_type(x._array, *[b for b in bounds if b is not None])
    if dtype.kind not in "fiub":
        raise TypeError(f"clip: bounds must be numbers, got result dtype {dtype}")
    if dtype != x.dtype:
        x = cast(x, dtype)
    lo, hi = bounds
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor):
        lo = -np.inf if lo is None else lo
        hi = np.inf if hi is None else hi
        if lo > hi:  # numpy: every element is hi
            return where(Tensor(np.ones(x.shape, bool)), _full(hi, x), x)
        return run_kernel(K.CLIP, {"x": x}, {"min": lo, "max": hi})
    lo, hi = (b if isinstance(b, Tensor) else _full(b, x) for b in (lo, hi))
    lo, hi = (b if b is None or b.dtype == dtype else cast(b, dtype) for b in (lo, hi))
    nan = Tensor(np.full((), np.nan if dtype.kind == "f" else 0, dtype))
    out = where(not_equal(x, x), nan, x)  # a NaN stays NaN, with no gradient (PyTorch)
    if hi is not None:
        out = where(greater(x, hi), hi, out)
    if lo is not None:
        out = where(less(x, lo), lo, out)
    return out if lo is None or hi is None else where(greater(lo, hi), hi, out)


def _bound(b, x: Tensor, name: str):
    """A clip bound: a Python/numpy number (weakly typed, as numpy's NEP 50), or a tensor
    for arrays and tensors."""
    if b is None or isinstance(b, Tensor):
        return b
    if isinstance(b, (list, tuple, np.ndarray)) and np.ndim(b) > 0:
        return as_tensor(b, f"clip: {name}")
    if not isinstance(b, (int, float, np.number, np.bool_, np.ndarray)):
        raise TypeError(f"clip: {name} must be a number, an array or a tensor, got {b!r}")
    return b.item() if isinstance(b, np.ndarray) else b


def _full(value, like: Tensor) -> Tensor | None:
    """A bound as a 0-d tensor of ``like``'s dtype (None stays None: no bound)."""
    return None if value is None else Tensor(np.asarray(value).astype(like.dtype))


def stop_gradient(x) -> Tensor:
    """The same value, with no gradient flowing back through it."""
    frozen = FROZEN_STOPS.get()
    if frozen is not None and not _in_backward():
        return frozen(as_tensor(x, "stop_gradient"))
    return run_kernel(K.STOP_GRADIENT, {"x": as_tensor(x, "stop_gradient")})


def _in_backward() -> bool:
    rec = recording.current()
    return rec is not None and bool(rec.backward)


# while check_grads records f and re-runs it at perturbed points: a function given each
# stop_gradient call of f's forward (not of a gradient being computed). It records the values
# at the point, then hands them back in call order: stop_gradient means "a constant here", so
# finite differences must hold it constant too, or they measure a derivative the gradient
# deliberately is not (core/check/function_problem.py, FunctionProblem)
FROZEN_STOPS: contextvars.ContextVar = contextvars.ContextVar("frozen_stops", default=None)


_TENSORS = frozenset((Tensor, Constant, Variable))  # exact types the fast paths take


def _binary(kernel: str, op: str):
    def fn(a, b) -> Tensor:
        # fast paths (what binary_args would return): same-dtype tensors of one shape, and a
        # float tensor with a Python float or int (weakly typed: it takes the tensor's dtype)
        ta, tb = type(a), type(b)
        if ta in _TENSORS:
            d = a._data
            if tb in _TENSORS:
                e = b._data
                if (
                    d is not None
                    and e is not None
                    and d.dtype is e.dtype
                    and (d.shape == e.shape or not e.shape or not d.shape)  # 0-d broadcasts
                ):
                    return run_kernel(kernel, {"a": a, "b": b})
            elif (tb is float or tb is int) and d is not None and d.dtype.kind == "f":
                return run_kernel(kernel, {"a": a, "b": Constant(constant_array(b, d.dtype))})
        elif tb in _TENSORS and (ta is float or ta is int):
            d = b._data
            if d is not None and d.dtype.kind == "f":
                return run_kernel(kernel, {"a": Constant(constant_array(a, d.dtype)), "b": b})
        a, b = binary_args(a, b, op)
        return run_kernel(kernel, {"a": a, "b": b})

    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"Elementwise ``{op}`` with numpy broadcasting (kernel ``{kernel}``)."
    return fn


add = _binary(K.ADD, "add")
sub = _binary(K.SUB, "sub")
mul = _binary(K.MUL, "mul")
maximum = _binary(K.MAXIMUM, "maximum")
minimum = _binary(K.MINIMUM, "minimum")
_TIES = (
    "\n\nConvention (PyTorch): at a tie each input gets half the gradient; where an input is "
    "NaN neither loses the comparison, so both get the whole gradient (a NaN stays visible)."
)
maximum.__doc__ += _TIES
minimum.__doc__ += _TIES
greater = _binary(K.GREATER, "greater")
greater_equal = _binary(K.GREATER_EQUAL, "greater_equal")
less = _binary(K.LESS, "less")
less_equal = _binary(K.LESS_EQUAL, "less_equal")
equal = _binary(K.EQUAL, "equal")
not_equal = _binary(K.NOT_EQUAL, "not_equal")


def div(a, b) -> Tensor:
    """``a / b``; integer inputs divide as floats (float32)."""
    a, b = binary_args(a, b, "div")
    if a.dtype.kind != "f":
        a, b = cast(a, np.float32), cast(b, np.float32)
    return run_kernel(K.DIV, {"a": a, "b": b})


def pow(a, b) -> Tensor:  # noqa: A001 - numpy's name
    """``a ** b``.

    Convention (PyTorch): ``d/da`` is 0 where ``a = b = 0`` (``d/dx x**0 = 0`` at 0);
    ``d/db = y log(a)`` is 0 where ``a = 0`` and ``b >= 0``, NaN where ``a < 0`` (no real log).
    """
    a, b = binary_args(a, b, "pow")
    return run_kernel(K.POW, {"a": a, "b": b})


def where(condition, a, b) -> Tensor:
    """``a`` where ``condition`` is true, else ``b`` (all three broadcast)."""
    a, b = binary_args(a, b, "where")
    condition = as_tensor(condition, "where")
    if condition.dtype != np.bool_:
        raise TypeError(f"where: condition must be bool, got {condition.dtype}")
    broadcast_shape(condition.shape, broadcast_shape(a.shape, b.shape, "where"), "where")
    return run_kernel(K.SELECT, {"condition": condition, "a": a, "b": b})


def _fused(kernel: str, op: str, second: str):
    """A fused gradient op ``op(dy, second)``: one kernel for one backward step."""

    def fn(dy, v) -> Tensor:
        if type(dy) is not Tensor or type(v) is not Tensor:
            dy, v = binary_args(dy, v, op)
        else:  # the backward pass: dy and the saved value agree (binary_args checks the rest)
            d, e = dy._data, v._data
            if d is None or e is None or d.dtype is not e.dtype or d.shape != e.shape:
                dy, v = binary_args(dy, v, op)
        return run_kernel(kernel, {"dy": dy, second: v})

    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"Fused gradient ``{op}(dy, {second})`` (kernel ``{kernel}``)."
    return fn


# fused gradient ops (not exported by core.ops: gradients call them); math in gradients/
tanh_grad = _fused(K.TANH_GRAD, "tanh_grad", "y")
sigmoid_grad = _fused(K.SIGMOID_GRAD, "sigmoid_grad", "y")
relu_grad = _fused(K.RELU_GRAD, "relu_grad", "x")
sqrt_grad = _fused(K.SQRT_GRAD, "sqrt_grad", "y")
rsqrt_grad = _fused(K.RSQRT_GRAD, "rsqrt_grad", "y")
sin_grad = _fused(K.SIN_GRAD, "sin_grad", "x")
cos_grad = _fused(K.COS_GRAD, "cos_grad", "x")

true_divide = div
subtract = sub
multiply = mul
negative = neg
power = pow
