"""Pure numba implementations of elementwise kernels on flat (1-D) float arrays.

No tapeviz imports: each function takes plain arrays and writes ``out``, so it can be tested
against numpy alone. Unary and binary families are one loop each with an op code; the code is
loop-invariant, so LLVM unswitches the loop and vectorises each branch.

unary ops:   neg abs sign square sqrt rsqrt reciprocal relu leaky_relu(p0) clip(p0, p1)
binary ops:  add sub mul div maximum minimum (NaN propagates as in numpy)
compare ops: greater greater_equal less less_equal equal not_equal
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

UNARY_OPS = (
    "neg abs sign square sqrt rsqrt reciprocal relu leaky_relu clip".split()
)  # index = op code
BINARY_OPS = "add sub mul div maximum minimum".split()
COMPARE_OPS = "greater greater_equal less less_equal equal not_equal".split()


@njit(inline="always")
def _unary(v, op, p0, p1, zero, one):
    # NOTE: every branch must return v's type: a float64 constant in one branch makes numba
    # widen all of them and the loop stops vectorising (20x slower)
    if op == 0:
        return -v
    if op == 1:
        return abs(v)
    if op == 2:
        return one if v > zero else (-one if v < zero else v * zero)
    if op == 3:
        return v * v
    if op == 4:
        return np.sqrt(v)
    if op == 5:
        return one / np.sqrt(v)
    if op == 6:
        return one / v
    if op == 7:
        return v if (v > zero or v != v) else zero
    if op == 8:
        return v if v > zero else v * p0
    return v if v != v else (p0 if v < p0 else (p1 if v > p1 else v))


@njit(parallel=True, cache=True)
def unary(x, out, op, p0, p1):
    """out[i] = op(x[i]); ``p0``/``p1`` are the op's scalar attrs (alpha, min, max)."""
    a = x.dtype.type(p0)
    b = x.dtype.type(p1)
    zero = x.dtype.type(0)
    one = x.dtype.type(1)
    for i in prange(x.size):
        out[i] = _unary(x[i], op, a, b, zero, one)
    return out


@njit(inline="always")
def _binary(x, y, op):
    if op == 0:
        return x + y
    if op == 1:
        return x - y
    if op == 2:
        return x * y
    if op == 3:
        return x / y
    if op == 4:
        return x if (x > y or x != x) else y
    return x if (x < y or x != x) else y


@njit(inline="always")
def _compare(x, y, op):
    if op == 0:
        return x > y
    if op == 1:
        return x >= y
    if op == 2:
        return x < y
    if op == 3:
        return x <= y
    if op == 4:
        return x == y
    return x != y


@njit(parallel=True, cache=True)
def binary_flat(a, b, out, op):
    """out[i] = op(a[i], b[i]); ``a`` or ``b`` may have one element (a scalar operand)."""
    n = out.size
    if a.size == n and b.size == n:
        for i in prange(n):
            out[i] = _binary(a[i], b[i], op)
    elif b.size == 1:
        s = b[0]
        for i in prange(n):
            out[i] = _binary(a[i], s, op)
    else:
        s = a[0]
        for i in prange(n):
            out[i] = _binary(s, b[i], op)
    return out


@njit(parallel=True, cache=True)
def compare_flat(a, b, out, op):
    """out[i] = a[i] <op> b[i] (bool ``out``); ``a`` or ``b`` may have one element."""
    n = out.size
    if a.size == n and b.size == n:
        for i in prange(n):
            out[i] = _compare(a[i], b[i], op)
    elif b.size == 1:
        s = b[0]
        for i in prange(n):
            out[i] = _compare(a[i], s, op)
    else:
        s = a[0]
        for i in prange(n):
            out[i] = _compare(s, b[i], op)
    return out


@njit(inline="always")
def _inner_binary(a, b, out, oa, ob, oo, n2, ta, tb, op):
    o = out[oo : oo + n2]  # slices: indices provably >= 0, so the loops vectorise
    if ta == 1 and tb == 1:
        x = a[oa : oa + n2]
        y = b[ob : ob + n2]
        for k in range(n2):
            o[k] = _binary(x[k], y[k], op)
    elif ta == 1:
        x = a[oa : oa + n2]
        s = b[ob]
        for k in range(n2):
            o[k] = _binary(x[k], s, op)
    elif tb == 1:
        s = a[oa]
        y = b[ob : ob + n2]
        for k in range(n2):
            o[k] = _binary(s, y[k], op)
    else:
        v = _binary(a[oa], b[ob], op)
        for k in range(n2):
            o[k] = v


@njit(inline="always")
def _inner_compare(a, b, out, oa, ob, oo, n2, ta, tb, op):
    o = out[oo : oo + n2]  # slices: indices provably >= 0, so the loops vectorise
    if ta == 1 and tb == 1:
        x = a[oa : oa + n2]
        y = b[ob : ob + n2]
        for k in range(n2):
            o[k] = _compare(x[k], y[k], op)
    elif ta == 1:
        x = a[oa : oa + n2]
        s = b[ob]
        for k in range(n2):
            o[k] = _compare(x[k], s, op)
    elif tb == 1:
        s = a[oa]
        y = b[ob : ob + n2]
        for k in range(n2):
            o[k] = _compare(s, y[k], op)
    else:
        v = _compare(a[oa], b[ob], op)
        for k in range(n2):
            o[k] = v


@njit(parallel=True, cache=True)
def binary_strided(a, b, out, dims, sa, sb, op):
    """Broadcasting over three collapsed dimensions ``dims = (n0, n1, n2)``: ``sa``/``sb``
    are element strides (0 where the operand is broadcast); ``out`` is contiguous."""
    n1, n2 = dims[1], dims[2]
    for ij in prange(dims[0] * n1):
        i = ij // n1
        j = ij - i * n1
        oa = i * sa[0] + j * sa[1]
        ob = i * sb[0] + j * sb[1]
        _inner_binary(a, b, out, oa, ob, ij * n2, n2, sa[2], sb[2], op)
    return out


@njit(parallel=True, cache=True)
def compare_strided(a, b, out, dims, sa, sb, op):
    """As ``binary_strided`` for comparisons (bool ``out``)."""
    n1, n2 = dims[1], dims[2]
    for ij in prange(dims[0] * n1):
        i = ij // n1
        j = ij - i * n1
        oa = i * sa[0] + j * sa[1]
        ob = i * sb[0] + j * sb[1]
        _inner_compare(a, b, out, oa, ob, ij * n2, n2, sa[2], sb[2], op)
    return out
