"""numba kernels of the elementwise families: the one that beats numpy, LeakyRelu.

Measured on one thread (``bench/numba_elementwise.md``: 16, 1e4 and 1e6 elements, float32 and
float64), a compiled loop beats numpy only where numpy's kernel is several passes:
``LeakyRelu`` (``np.where(x > 0, x, alpha * x)``: a comparison, a product and a select, with
their temporaries) runs 1.4-2.4x faster as one loop from 1e4 elements on. Every other
elementwise op delegates to numpy, visibly (``DELEGATED`` says why): numpy's single SIMD pass
is at memory bandwidth already (a compiled loop measured 0.1-0.9x), and numba calls scalar
libm per element for the transcendental ops. The compiled kernel runs numpy's for arrays
smaller than ``settings.min_size``, for non-float dtypes and for non-contiguous inputs.
"""

from __future__ import annotations

import numpy as np

from ...registry import kernel_names as K
from ...registry.kernels import get_kernel
from . import compiled_elementwise as impl
from .runtime import apply_threads, settings

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _leaky_relu_kernel():
    fallback = get_kernel(K.LEAKY_RELU, "numpy").fn  # numpy's, where numba does not pay

    def numba_leaky_relu(inputs, attrs):
        x = inputs["x"]
        if x.size < settings.min_size or x.dtype not in _FLOATS or not x.flags.c_contiguous:
            return fallback(inputs, attrs)
        apply_threads()
        out = np.empty(x.shape, x.dtype)
        impl.leaky_relu(x.reshape(-1), out.reshape(-1), float(attrs["alpha"]))
        return out

    return numba_leaky_relu


# the compiled kernel, named by its row (core/primitives/elementwise.py: numba=)
leaky_relu = _leaky_relu_kernel()

_ONE_PASS = (
    "numpy's one SIMD pass is at memory bandwidth: a compiled loop measured 0.1-0.9x numpy "
    "(bench/numba_elementwise.md)"
)
_TRANSCENDENTAL = "numba calls scalar libm per element; numpy's SIMD loop is faster"
DELEGATED = {
    **{
        k: _ONE_PASS
        for k in (K.NEG, K.ABS, K.SIGN, K.SQUARE, K.SQRT, K.RSQRT, K.RECIPROCAL, K.RELU, K.CLIP)
    },
    **{k: _ONE_PASS for k in (K.ADD, K.SUB, K.MUL, K.DIV, K.MAXIMUM, K.MINIMUM)},
    **{
        k: _ONE_PASS
        for k in (K.GREATER, K.GREATER_EQUAL, K.LESS, K.LESS_EQUAL, K.EQUAL, K.NOT_EQUAL)
    },
    **{
        k: _TRANSCENDENTAL
        for k in (K.EXP, K.LOG, K.LOG1P, K.SIN, K.COS, K.TAN, K.TANH, K.SIGMOID, K.ELU)
    },
    **{k: _TRANSCENDENTAL for k in (K.SELU, K.SOFTPLUS, K.GELU, K.ERF, K.POW)},
    K.CAST: "a dtype conversion: numpy's astype is a single memory pass already",
    K.IDENTITY: "returns its input: nothing to compile",
    K.STOP_GRADIENT: "returns its input: nothing to compile",
    K.SELECT: "np.where is a single vectorised pass already",
}
