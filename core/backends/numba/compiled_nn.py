"""Pure numba implementations for conv2d and pooling, NHWC layout, padding as bounds checks.

``geom`` is (kh, kw, sh, sw, pad_top, pad_left, out_h, out_w). Windows never read padding:
positions outside the input are skipped (zeros for conv, ignored for max, uncounted for avg).

im2col: cols[(n, i, j), (p, q, c)] = x[n, i*sh + p - pt, j*sw + q - pl, c] (0 outside)
col2im: the adjoint of im2col, dx[n, h, w, c] += cols[(n, i, j), (p, q, c)]
max_pool: y = max over the window; grad: dy goes to the first maximum of the window
avg_pool: y = mean over the window's real elements; grad: dy / count to each of them
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def im2col(x, geom, cols):
    """Fill ``cols`` (N*OH*OW, KH*KW*C) with every window of ``x`` (N, H, W, C)."""
    n_, h, w, c = x.shape
    kh, kw, sh, sw, pt, pl, oh, ow = geom
    for ni in prange(n_ * oh):
        n = ni // oh
        i = ni - n * oh
        for j in range(ow):
            row = (ni * ow) + j
            for p in range(kh):
                hi = i * sh + p - pt
                for q in range(kw):
                    wj = j * sw + q - pl
                    base = (p * kw + q) * c
                    if 0 <= hi < h and 0 <= wj < w:
                        for k in range(c):
                            cols[row, base + k] = x[n, hi, wj, k]
                    else:
                        for k in range(c):
                            cols[row, base + k] = 0
    return cols


@njit(parallel=True, cache=True)
def col2im(cols, geom, dx):
    """Add every window row of ``cols`` back into ``dx`` (N, H, W, C), which starts at 0."""
    n_, h, w, c = dx.shape
    kh, kw, sh, sw, pt, pl, oh, ow = geom
    for n in prange(n_):  # one image per thread: no two threads add into the same element
        for i in range(oh):
            for j in range(ow):
                row = (n * oh + i) * ow + j
                for p in range(kh):
                    hi = i * sh + p - pt
                    for q in range(kw):
                        wj = j * sw + q - pl
                        if 0 <= hi < h and 0 <= wj < w:
                            base = (p * kw + q) * c
                            for k in range(c):
                                dx[n, hi, wj, k] += cols[row, base + k]
    return dx


@njit(parallel=True, cache=True)
def pool(x, geom, out, is_max):
    """Max (``is_max``) or average pooling of ``x`` into ``out`` (N, OH, OW, C)."""
    n_, h, w, c = x.shape
    kh, kw, sh, sw, pt, pl, oh, ow = geom
    for ni in prange(n_ * oh):
        n = ni // oh
        i = ni - n * oh
        for j in range(ow):
            init = -np.inf if is_max else 0.0
            for k in range(c):
                out[n, i, j, k] = init
            count = 0
            for p in range(kh):
                hi = i * sh + p - pt
                for q in range(kw):
                    wj = j * sw + q - pl
                    if 0 <= hi < h and 0 <= wj < w:
                        count += 1
                        for k in range(c):
                            v = x[n, hi, wj, k]
                            o = out[n, i, j, k]
                            if is_max:
                                out[n, i, j, k] = v if (v > o or v != v) else o
                            else:
                                out[n, i, j, k] = o + v
            if not is_max:
                for k in range(c):
                    out[n, i, j, k] = out[n, i, j, k] / count
    return out


@njit(parallel=True, cache=True)
def max_pool_grad(x, dy, geom, dx):
    """Route each ``dy`` element to the first maximum of its window, or to its first NaN
    (``dx`` starts at 0)."""
    n_, h, w, c = x.shape
    kh, kw, sh, sw, pt, pl, oh, ow = geom
    for n in prange(n_):
        for i in range(oh):
            for j in range(ow):
                for k in range(c):
                    best = -np.inf
                    bh, bw = -1, -1
                    for p in range(kh):
                        hi = i * sh + p - pt
                        for q in range(kw):
                            wj = j * sw + q - pl
                            if 0 <= hi < h and 0 <= wj < w:
                                v = x[n, hi, wj, k]
                                # the first maximum; a NaN is the maximum (numpy's argmax)
                                if bh < 0 or v > best or (v != v and best == best):
                                    best, bh, bw = v, hi, wj
                    dx[n, bh, bw, k] += dy[n, i, j, k]
    return dx


@njit(parallel=True, cache=True)
def avg_pool_grad(dy, geom, dx):
    """Share each ``dy`` element evenly among its window's real elements (``dx`` starts at 0)."""
    n_, h, w, c = dx.shape
    kh, kw, sh, sw, pt, pl, oh, ow = geom
    for n in prange(n_):
        for i in range(oh):
            h0, h1 = max(i * sh - pt, 0), min(i * sh - pt + kh, h)
            for j in range(ow):
                w0, w1 = max(j * sw - pl, 0), min(j * sw - pl + kw, w)
                inv = 1.0 / ((h1 - h0) * (w1 - w0))
                for hi in range(h0, h1):
                    for wj in range(w0, w1):
                        for k in range(c):
                            dx[n, hi, wj, k] += dy[n, i, j, k] * inv
    return dx
