"""numba kernels: elementwise unary and binary ops, thin wrappers over ``_impl_elementwise``.

``COMPILED`` holds compiled kernels for the memory-bound ops (arithmetic with numpy
broadcasting, comparisons, relu/clip/...). Measured on one thread they run at 0.5-1.0x numpy
(numpy's SIMD loop is already at memory bandwidth, and a numba call costs microseconds), so
by default they are NOT registered: every elementwise kernel delegates to numpy, visibly
(``DELEGATED`` says why). ``core.backends.numba.use_compiled_elementwise()`` registers them,
for machines where several threads pay. The transcendental ops (exp, tanh, ...) have no
compiled kernel at all: numba calls scalar libm per element, up to 40x slower than numpy.
A compiled kernel runs numpy's kernel for arrays smaller than ``settings.min_size``, for
non-float dtypes and for non-contiguous inputs.
"""

from __future__ import annotations

import numpy as np

from ...registry import kernel_names as K
from ...registry.kernels import get_kernel
from . import _impl_elementwise as impl
from ._runtime import apply_threads, settings

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _eligible(*arrays) -> bool:
    ok = all(a.dtype in _FLOATS and a.flags.c_contiguous for a in arrays)
    if ok:
        apply_threads()
    return ok


def _unary(kernel: str, op: str, params=lambda a: (0.0, 0.0)):
    code = impl.UNARY_OPS.index(op)
    fallback = get_kernel(kernel, "numpy").fn  # numpy's, where numba does not pay

    def fn(inputs, attrs):
        x = inputs["x"]
        if x.size < settings.min_size or not _eligible(x):
            return fallback(inputs, attrs)
        out = np.empty(x.shape, x.dtype)
        p0, p1 = params(attrs)
        impl.unary(x.reshape(-1), out.reshape(-1), code, p0, p1)
        return out

    fn.__name__ = f"numba_{op}"
    return fn


def _strides(shape, full):
    """Element strides of a C-contiguous array of ``shape`` broadcast to ``full``."""
    shape = (1,) * (len(full) - len(shape)) + tuple(shape)
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step if s != 1 else 0)
        step *= s
    return strides[::-1]


def collapse(full, *shapes):
    """Merge adjacent dimensions that every operand walks contiguously.

    Returns ``(dims, [strides per operand])`` with at most as many dims as ``full``, or
    ``None`` when more than three remain (the caller then uses numpy).
    """
    all_strides = [_strides(s, full) for s in (full, *shapes)]  # the output walks too
    dims, per = [], [[] for _ in all_strides]
    for axis, n in enumerate(full):
        if n == 1:
            continue
        if dims and all(
            p[-1] == st[axis] * n for p, st in zip(per, all_strides)
        ):  # mergeable with the previous kept axis
            dims[-1] *= n
            for p, st in zip(per, all_strides):
                p[-1] = st[axis]
            continue
        dims.append(n)
        for p, st in zip(per, all_strides):
            p.append(st[axis])
    if len(dims) > 3:
        return None
    pad = 3 - len(dims)
    return (
        np.array([1] * pad + dims, np.int64),
        [np.array([0] * pad + p, np.int64) for p in per[1:]],
    )


def _binary(kernel: str, op: str, compare: bool = False):
    table = impl.COMPARE_OPS if compare else impl.BINARY_OPS
    code = table.index(op)
    fallback = get_kernel(kernel, "numpy").fn  # numpy's, where numba does not pay
    flat = impl.compare_flat if compare else impl.binary_flat
    strided = impl.compare_strided if compare else impl.binary_strided

    def fn(inputs, attrs):
        a, b = inputs["a"], inputs["b"]
        if max(a.size, b.size) < settings.min_size or a.dtype != b.dtype or not _eligible(a, b):
            return fallback(inputs, attrs)
        shape = np.broadcast_shapes(a.shape, b.shape)
        out = np.empty(shape, np.bool_ if compare else a.dtype)
        if (a.shape == b.shape or a.size == 1 or b.size == 1) and out.size:
            flat(a.reshape(-1), b.reshape(-1), out.reshape(-1), code)
            return out
        plan = collapse(shape, a.shape, b.shape)
        if plan is None:
            return fallback(inputs, attrs)
        dims, (sa, sb) = plan
        strided(a.reshape(-1), b.reshape(-1), out.reshape(-1), dims, sa, sb, code)
        return out

    fn.__name__ = f"numba_{op}"
    return fn


def _clip_params(attrs):
    return float(attrs["min"]), float(attrs["max"])


COMPILED = {
    K.NEG: _unary(K.NEG, "neg"),
    K.ABS: _unary(K.ABS, "abs"),
    K.SIGN: _unary(K.SIGN, "sign"),
    K.SQUARE: _unary(K.SQUARE, "square"),
    K.SQRT: _unary(K.SQRT, "sqrt"),
    K.RSQRT: _unary(K.RSQRT, "rsqrt"),
    K.RECIPROCAL: _unary(K.RECIPROCAL, "reciprocal"),
    K.RELU: _unary(K.RELU, "relu"),
    K.LEAKY_RELU: _unary(K.LEAKY_RELU, "leaky_relu", lambda a: (float(a["alpha"]), 0.0)),
    K.CLIP: _unary(K.CLIP, "clip", _clip_params),
    K.ADD: _binary(K.ADD, "add"),
    K.SUB: _binary(K.SUB, "sub"),
    K.MUL: _binary(K.MUL, "mul"),
    K.DIV: _binary(K.DIV, "div"),
    K.MAXIMUM: _binary(K.MAXIMUM, "maximum"),
    K.MINIMUM: _binary(K.MINIMUM, "minimum"),
    K.GREATER: _binary(K.GREATER, "greater", compare=True),
    K.GREATER_EQUAL: _binary(K.GREATER_EQUAL, "greater_equal", compare=True),
    K.LESS: _binary(K.LESS, "less", compare=True),
    K.LESS_EQUAL: _binary(K.LESS_EQUAL, "less_equal", compare=True),
    K.EQUAL: _binary(K.EQUAL, "equal", compare=True),
    K.NOT_EQUAL: _binary(K.NOT_EQUAL, "not_equal", compare=True),
}

KERNELS: dict = {}  # registered by default: none (see the module docstring)

_MEMORY_BOUND = (
    "memory-bound: numpy's SIMD loop runs at memory bandwidth (the compiled kernel measured "
    "0.5-1.0x; use_compiled_elementwise() registers it)"
)
_TRANSCENDENTAL = "numba calls scalar libm per element; numpy's SIMD loop is faster"
DELEGATED = {
    **{k: _MEMORY_BOUND for k in COMPILED},
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
