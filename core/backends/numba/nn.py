"""numba kernels: conv2d (parallel im2col + BLAS matmul) and pooling (direct parallel loops).

conv2d: y = im2col(x) @ w.reshape(KH*KW*C, O); filter gradient: im2col(x).T @ dy;
input gradient: col2im(dy @ w.T). Pooling and its gradients are single parallel loops
(numpy's kernels build windowed copies and scatter with ``np.add.at``).
"""

from __future__ import annotations

import numpy as np

from ...registry import kernel_names as K
from ..numpy import nn as np_nn
from . import compiled_nn as impl
from .runtime import apply_threads, settings

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _eligible(*arrays) -> bool:
    ok = all(a.dtype in _FLOATS for a in arrays)
    ok = ok and max(a.size for a in arrays) >= settings.min_size
    if ok:
        apply_threads()
    return ok


def _geom(in_hw, k_hw, attrs):
    (t, b), (lft, r) = attrs["pads"]
    sh, sw = attrs["strides"]
    kh, kw = k_hw
    oh = (in_hw[0] + t + b - kh) // sh + 1
    ow = (in_hw[1] + lft + r - kw) // sw + 1
    return np.array([kh, kw, sh, sw, t, lft, oh, ow], np.int64)


def _cols(x, geom):
    kh, kw, oh, ow = geom[0], geom[1], geom[6], geom[7]
    cols = np.empty((x.shape[0] * oh * ow, kh * kw * x.shape[3]), x.dtype)
    return impl.im2col(np.ascontiguousarray(x), geom, cols)


def conv2d(inputs, attrs):
    x, w = inputs["x"], inputs["filter"]
    if not _eligible(x, w) or x.dtype != w.dtype:
        return np_nn.conv2d(inputs, attrs)
    geom = _geom(x.shape[1:3], w.shape[:2], attrs)
    y = _cols(x, geom) @ w.reshape(-1, w.shape[3])
    return y.reshape(x.shape[0], geom[6], geom[7], w.shape[3])


def conv2d_backprop_filter(inputs, attrs):
    x, dy = inputs["x"], inputs["dy"]
    if not _eligible(x, dy) or x.dtype != dy.dtype:
        return np_nn.conv2d_backprop_filter(inputs, attrs)
    kh, kw, c, o = attrs["filter_shape"]
    geom = _geom(x.shape[1:3], (kh, kw), attrs)
    dw = _cols(x, geom).T @ dy.reshape(-1, o)
    return dw.reshape(kh, kw, c, o)


def conv2d_backprop_input(inputs, attrs):
    dy, w = inputs["dy"], inputs["filter"]
    if not _eligible(dy, w) or dy.dtype != w.dtype:
        return np_nn.conv2d_backprop_input(inputs, attrs)
    n, h, wd, c = attrs["input_shape"]
    geom = _geom((h, wd), w.shape[:2], attrs)
    dcols = np.ascontiguousarray(dy.reshape(-1, w.shape[3]) @ w.reshape(-1, w.shape[3]).T)
    return impl.col2im(dcols, geom, np.zeros((n, h, wd, c), dy.dtype))


def _pool(kernel, is_max):
    fallback = np_nn.max_pool if is_max else np_nn.avg_pool

    def fn(inputs, attrs):
        x = inputs["x"]
        if not _eligible(x):
            return fallback(inputs, attrs)
        geom = _geom(x.shape[1:3], attrs["ksize"], attrs)
        out = np.empty((x.shape[0], geom[6], geom[7], x.shape[3]), x.dtype)
        return impl.pool(np.ascontiguousarray(x), geom, out, is_max)

    fn.__name__ = "numba_max_pool" if is_max else "numba_avg_pool"
    return fn


def max_pool_grad(inputs, attrs):
    x, dy = inputs["x"], inputs["dy"]
    if not _eligible(x, dy) or x.dtype != dy.dtype:
        return np_nn.max_pool_grad(inputs, attrs)
    geom = _geom(x.shape[1:3], attrs["ksize"], attrs)
    dx = np.zeros(x.shape, dy.dtype)
    return impl.max_pool_grad(np.ascontiguousarray(x), np.ascontiguousarray(dy), geom, dx)


def avg_pool_grad(inputs, attrs):
    dy = inputs["dy"]
    if not _eligible(dy):
        return np_nn.avg_pool_grad(inputs, attrs)
    n, h, w, c = attrs["input_shape"]
    geom = _geom((h, w), attrs["ksize"], attrs)
    return impl.avg_pool_grad(np.ascontiguousarray(dy), geom, np.zeros((n, h, w, c), dy.dtype))


# the compiled kernels, each named by its primitive's row (core/primitives/nn.py: numba=)
max_pool = _pool(K.MAX_POOL, True)
avg_pool = _pool(K.AVG_POOL, False)

DELEGATED: dict[str, str] = {}
