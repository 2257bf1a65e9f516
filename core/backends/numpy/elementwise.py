"""numpy kernels of the elementwise families: the ones that are more than one numpy call, and
the makers of the ones that are (``unary``, ``same``, ``binary``). The tables that name each
kernel with its VJP are ``core/primitives/elementwise*.py`` and ``fused.py``."""

from __future__ import annotations

import math

import numpy as np

_SPECIAL: list = []  # [(erf, expit)] once loaded: scipy.special is imported on first use


def _special():
    """scipy's erf and expit (one vectorised pass each), imported the first time a kernel
    needs them (``import tapeviz`` must not pay scipy's 150 ms); without scipy an exact but
    slower erf and no expit."""
    if not _SPECIAL:
        try:
            from scipy.special import erf, expit
        except ImportError:  # pragma: no cover - depends on the environment
            scalar = np.vectorize(math.erf, otypes=[np.float64])
            erf, expit = (lambda x: scalar(x).astype(x.dtype, copy=False)), None
        _SPECIAL.append((erf, expit))
    return _SPECIAL[0]


def _erf(x):
    return _special()[0](x)


_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x)) in x's dtype: the Sigmoid kernel (also the fused
    dense kernel's activation, backends/numpy/linalg.py)."""
    if x.dtype.kind == "f" and x.size > 4096:
        # 1/(1+exp(-x)) is exact to the last bit; exp overflowing to inf gives the right
        # limit 0. Four in-place SIMD passes (scipy's expit is one scalar pass, 3x slower).
        y = np.negative(x)
        with np.errstate(over="ignore"):
            np.exp(y, out=y)
        y += 1
        return np.reciprocal(y, out=y)
    expit = _special()[1] if x.dtype.kind == "f" else None
    if expit is not None:  # scipy computes float16 in float32
        return expit(x).astype(x.dtype, copy=False)
    # exp of -|x| never overflows
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _softplus_of(x):
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)


def _elu(x, alpha):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)


def _gelu_of(x):
    return (0.5 * x * (1 + _erf(x / math.sqrt(2)))).astype(x.dtype, copy=False)


def unary(fn):
    """The kernel running numpy function ``fn`` on input ``x``."""
    return lambda i, a: fn(i["x"])


def same(fn):
    """A unary kernel keeping the input dtype (numpy promotes float32 scalars otherwise)."""
    return lambda i, a: np.asarray(fn(i["x"])).astype(i["x"].dtype, copy=False)


def binary(fn):
    """The kernel running numpy function ``fn`` on inputs ``a`` and ``b`` (broadcasting)."""
    return lambda i, a: fn(i["a"], i["b"])


def relu(i, a):
    return np.maximum(i["x"], 0).astype(i["x"].dtype, copy=False)


def leaky_relu(i, a):
    return np.where(i["x"] > 0, i["x"], i["x"] * np.asarray(a["alpha"], i["x"].dtype))


def elu(i, a):
    return _elu(i["x"], a.get("alpha", 1.0))


def selu(i, a):
    return (_SELU_SCALE * _elu(i["x"], _SELU_ALPHA)).astype(i["x"].dtype)


def clip(i, a):
    return np.clip(i["x"], a["min"], a["max"]).astype(i["x"].dtype, copy=False)


def cast(i, a):
    return i["x"].astype(a["dtype"])


def select(i, a):
    return np.where(i["condition"], i["a"], i["b"])


# --- fused gradient kernels: one pass of temporaries, in place in the array they allocate.
# Each computes exactly what the unfused ops did, in the same order (same bits).


_SMALL = 4096  # below this many elements out= bookkeeping costs more than allocating
_CONSTS: dict = {}


def _c(value, dtype) -> np.ndarray:
    """A cached 0-d array: numpy runs ``array op 0-d array`` twice as fast as with a Python
    number, with the same result (the number is weakly typed: it takes ``dtype``)."""
    c = _CONSTS.get((value, dtype))
    if c is None:
        c = _CONSTS[(value, dtype)] = np.array(value, dtype)
        c.flags.writeable = False
    return c


def _own(t):
    """A ufunc result as an array we own (0-d inputs give numpy scalars)."""
    return t if type(t) is np.ndarray else np.asarray(t)


def _into(t, dy):
    """``t`` as the out= of the last ``dy`` op when the result has its shape and dtype."""
    return t if t.shape == dy.shape and t.dtype == dy.dtype else None


def tanh_grad(i, a):  # dy (1 - y^2)
    dy, y = i["dy"], i["y"]
    if y.size < _SMALL:
        return dy * (_c(1, y.dtype) - y * y)
    t = _own(np.multiply(y, y))
    np.subtract(_c(1, y.dtype), t, out=t)
    return np.multiply(dy, t, out=_into(t, dy))


def sigmoid_grad(i, a):  # dy (y (1 - y))
    dy, y = i["dy"], i["y"]
    if y.size < _SMALL:
        return dy * (y * (_c(1, y.dtype) - y))
    t = _own(np.subtract(_c(1, y.dtype), y))
    np.multiply(y, t, out=t)
    return np.multiply(dy, t, out=_into(t, dy))


def sqrt_grad(i, a):  # dy / (2 y)
    dy, y = i["dy"], i["y"]
    t = _own(np.multiply(y, _c(2, y.dtype)))
    return np.divide(dy, t, out=_into(t, dy))


def rsqrt_grad(i, a):  # dy (y^3) (-1/2)
    dy, y = i["dy"], i["y"]
    t = _own(np.multiply(y, y))
    np.multiply(t, y, out=t)
    t = _own(np.multiply(dy, t, out=_into(t, dy)))
    return np.multiply(t, _c(-0.5, t.dtype), out=t)


def sin_grad(i, a):  # dy cos x
    dy, c = i["dy"], _own(np.cos(i["x"]))
    return np.multiply(dy, c, out=_into(c, dy))


def cos_grad(i, a):  # -(dy sin x)
    dy, s = i["dy"], _own(np.sin(i["x"]))
    s = _own(np.multiply(dy, s, out=_into(s, dy)))
    return np.negative(s, out=s)


def relu_grad(i, a):
    # not (x <= 0): a NaN x passes dy (PyTorch), so backward shows the NaN's producer
    return np.multiply(i["dy"], np.logical_not(np.less_equal(i["x"], 0)))


def softplus(i, a):
    return _softplus_of(i["x"])


def gelu(i, a):
    return _gelu_of(i["x"])


def erf(i, a):
    return np.asarray(_erf(i["x"])).astype(i["x"].dtype, copy=False)


def sigmoid_kernel(i, a):
    return sigmoid(i["x"])
