"""numba kernels: reductions and softmax, thin wrappers over ``compiled_reduce``.

Sum and prod are compiled; max and min are delegated to numpy (its SIMD loop is 5x faster
than numba's, which does not vectorise a NaN-propagating compare). A reduction over a
contiguous block of axes becomes ``rows`` (pre, n) or ``mid``
(pre, n, post); other axis sets are made contiguous with one transposed copy. Softmax along
the last axis is a hybrid: numba shifts each row by its max, numpy's SIMD ``exp`` runs in
place, numba normalises each row while it is still in cache (three passes over memory where
numpy's kernel makes five and allocates four temporaries).
"""

from __future__ import annotations

import math

import numpy as np

from ...registry import kernel_names as K
from ...registry.kernels import get_kernel
from . import compiled_reduce as impl
from .runtime import apply_threads, settings

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _eligible(x) -> bool:
    ok = x.dtype in _FLOATS and x.flags.c_contiguous
    if ok:
        apply_threads()
    return ok


def _three(x, axes):
    """(pre, n, post) view of ``x`` with ``axes`` (a contiguous run) in the middle."""
    lo, hi = axes[0], axes[-1] + 1
    pre = math.prod(x.shape[:lo])
    n = math.prod(x.shape[lo:hi])
    return x.reshape(pre, n, math.prod(x.shape[hi:]))


def _reduce(kernel: str, op: str):
    code = impl.OPS.index(op)
    fallback = get_kernel(kernel, "numpy").fn  # numpy's, where numba does not pay

    def fn(inputs, attrs):
        x = inputs["x"]
        if x.size < settings.min_size or not _eligible(x):
            return fallback(inputs, attrs)
        axes = attrs.get("axis")
        axes = tuple(range(x.ndim)) if axes is None else tuple(sorted(axes))
        if not axes:
            return x.copy()
        if axes != tuple(range(axes[0], axes[-1] + 1)):  # make the reduced axes contiguous
            keep = tuple(i for i in range(x.ndim) if i not in axes)
            x = np.ascontiguousarray(np.transpose(x, keep[:1] + axes + keep[1:]))
            axes = tuple(range(1, 1 + len(axes))) if keep else axes
        x3 = _three(x, axes)
        if x3.shape[2] == 1:
            out = impl.reduce_rows(x3[:, :, 0], np.empty(x3.shape[0], x.dtype), code)
        else:
            out = impl.reduce_mid(x3, np.empty((x3.shape[0], x3.shape[2]), x.dtype), code)
        return out.reshape(_out_shape(inputs["x"].shape, attrs))

    fn.__name__ = f"numba_{op}"
    return fn


def _out_shape(shape, attrs):
    axes = attrs.get("axis")
    gone = set(range(len(shape))) if axes is None else set(axes)
    if attrs.get("keepdims", False):
        return tuple(1 if i in gone else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in gone)


def _softmax_like(kernel: str, log: bool):
    fallback = get_kernel(kernel, "numpy").fn  # numpy's, where numba does not pay

    def fn(inputs, attrs):
        x = inputs["x"]
        if x.size < settings.min_size or attrs["axis"] != x.ndim - 1 or not _eligible(x):
            return fallback(inputs, attrs)  # a non-last axis: numpy's kernel
        x2 = x.reshape(-1, x.shape[-1])
        out = np.empty(x2.shape, x.dtype)
        impl.shift_rows(x2, np.max(x2, axis=1), out)  # numpy's max is SIMD; numba's is not
        if log:
            impl.log_normalize_rows(out, np.exp(out), out)
        else:
            np.exp(out, out=out)
            impl.normalize_rows(out, out)
        return out.reshape(x.shape)

    fn.__name__ = "numba_log_softmax" if log else "numba_softmax"
    return fn


# the compiled kernels, each named by its primitive's row (core/primitives/reduce.py: numba=)
sum_kernel = _reduce(K.SUM, "sum")
prod_kernel = _reduce(K.PROD, "prod")
softmax_kernel = _softmax_like(K.SOFTMAX, log=False)
log_softmax_kernel = _softmax_like(K.LOG_SOFTMAX, log=True)

_MINMAX = "numpy's max/min reductions are SIMD; numba's compare-select loop does not vectorise"
DELEGATED = {K.MAX: _MINMAX, K.MIN: _MINMAX}
