"""Pure numba implementations of sum/prod and the softmax steps on contiguous float arrays.

The wrapper puts every reduction in one of two forms: ``rows`` (pre, n) reducing the last
axis, or ``mid`` (pre, n, post) reducing the middle one. Rows accumulate in float64 with
reassociation allowed (so the loop vectorises); ``mid`` adds whole rows into a block of
``post`` accumulators, as numpy does.

sum: y = sum(x); prod: y = prod(x)   (op 0 sum, op 1 prod)
softmax: y = e / sum(e) with e = exp(x - max); log_softmax: y = z - log(sum(exp(z))), z = x - max
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

OPS = ("sum", "prod")
_CHUNKS = 16  # a long row is split into this many parallel pieces
_BLOCK = 4096  # columns per block in ``mid`` (the accumulators stay in L1)


@njit(inline="always")
def _row(x, p, start, stop, op):
    row = x[p, start:stop]  # a slice: indices provably >= 0, so the loop vectorises
    if op == 0:
        acc = 0.0
        for r in range(row.size):
            acc += row[r]
        return acc
    acc = 1.0
    for r in range(row.size):
        acc *= row[r]
    return acc


@njit(parallel=True, cache=True, fastmath={"reassoc"})
def reduce_rows(x, out, op):
    """out[p] = sum or prod of x[p, :]; ``x`` is (pre, n), ``out`` is (pre,)."""
    pre, n = x.shape
    if pre >= _CHUNKS or n < 65536:
        for p in prange(pre):
            out[p] = _row(x, p, 0, n, op)
        return out
    step = (n + _CHUNKS - 1) // _CHUNKS
    parts = np.empty((pre, _CHUNKS))
    for c in prange(pre * _CHUNKS):
        p = c // _CHUNKS
        k = c - p * _CHUNKS
        parts[p, k] = _row(x, p, min(k * step, n), min(k * step + step, n), op)
    for p in range(pre):
        out[p] = parts[p].sum() if op == 0 else parts[p].prod()
    return out


@njit(parallel=True, cache=True)
def reduce_mid(x, out, op):
    """out[p, q] = sum or prod of x[p, :, q]; ``x`` is (pre, n, post), ``out`` (pre, post)."""
    pre, n, post = x.shape
    nb = (post + _BLOCK - 1) // _BLOCK
    for pb in prange(pre * nb):
        p = pb // nb
        q0 = (pb - p * nb) * _BLOCK
        acc = out[p, q0 : min(q0 + _BLOCK, post)]  # accumulate in place, as numpy does
        acc[:] = 0 if op == 0 else 1
        for r in range(n):
            row = x[p, r, q0 : q0 + acc.size]
            if op == 0:
                for q in range(acc.size):
                    acc[q] += row[q]
            else:
                for q in range(acc.size):
                    acc[q] *= row[q]
    return out


@njit(parallel=True, cache=True)
def shift_rows(x, m, out):
    """out[p, :] = x[p, :] - m[p] (``m`` the row maxima: the first step of a stable softmax)."""
    pre, n = x.shape
    for p in prange(pre):
        mp = m[p]
        for r in range(n):
            out[p, r] = x[p, r] - mp
    return out


@njit(parallel=True, cache=True, fastmath={"reassoc"})
def normalize_rows(e, out):
    """out[p, :] = e[p, :] / sum(e[p, :]) (``out`` may be ``e``)."""
    pre, n = e.shape
    for p in prange(pre):
        s = 0.0
        for r in range(n):
            s += e[p, r]
        inv = e.dtype.type(1.0 / s)
        for r in range(n):
            out[p, r] = e[p, r] * inv
    return out


@njit(parallel=True, cache=True, fastmath={"reassoc"})
def log_normalize_rows(z, e, out):
    """out[p, :] = z[p, :] - log(sum(e[p, :])) where e = exp(z) (``out`` may be ``z``)."""
    pre, n = z.shape
    for p in prange(pre):
        s = 0.0
        for r in range(n):
            s += e[p, r]
        lse = z.dtype.type(np.log(s))
        for r in range(n):
            out[p, r] = z[p, r] - lse
    return out
