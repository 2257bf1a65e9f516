"""numpy kernels: conv2d and pooling, NHWC inputs and HWIO filters (TensorFlow.js layout).

attrs: strides (sh, sw); pads ((top, bottom), (left, right)); ksize (kh, kw) for pooling.
conv2d: y[n,i,j,o] = sum_{p,q,c} xpad[n, i*sh+p, j*sw+q, c] * w[p,q,c,o]
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _pad(x, pads, value=0.0):
    (t, b), (lft, r) = pads
    if not (t or b or lft or r):
        return x
    return np.pad(x, ((0, 0), (t, b), (lft, r), (0, 0)), constant_values=value)


def _windows(xp, kh, kw, strides):
    """(N, OH, OW, C, KH, KW) view of every window."""
    v = sliding_window_view(xp, (kh, kw), axis=(1, 2))
    return v[:, :: strides[0], :: strides[1]]


def conv2d(i, a):
    x, w = i["x"], i["filter"]
    kh, kw = w.shape[:2]
    cols = _windows(_pad(x, a["pads"]), kh, kw, a["strides"])
    return np.einsum("nijcpq,pqco->nijo", cols, w, optimize=True).astype(x.dtype, copy=False)


def conv2d_backprop_input(i, a):
    dy, w = i["dy"], i["filter"]
    n, h, wd, c = a["input_shape"]
    (t, b), (lft, r) = a["pads"]
    sh, sw = a["strides"]
    kh, kw = w.shape[:2]
    oh, ow = dy.shape[1:3]
    dxp = np.zeros((n, h + t + b, wd + lft + r, c), dy.dtype)
    # dcols[n,i,j,p,q,c] = sum_o dy[n,i,j,o] w[p,q,c,o]
    dcols = np.einsum("nijo,pqco->nijpqc", dy, w, optimize=True)
    for p in range(kh):
        for q in range(kw):
            dxp[:, p : p + sh * oh : sh, q : q + sw * ow : sw, :] += dcols[:, :, :, p, q, :]
    return dxp[:, t : t + h, lft : lft + wd, :]


def conv2d_backprop_filter(i, a):
    x, dy = i["x"], i["dy"]
    kh, kw = a["filter_shape"][:2]
    cols = _windows(_pad(x, a["pads"]), kh, kw, a["strides"])
    return np.einsum("nijcpq,nijo->pqco", cols, dy, optimize=True).astype(x.dtype, copy=False)


def max_pool(i, a):
    x = i["x"]
    kh, kw = a["ksize"]
    cols = _windows(_pad(x, a["pads"], -np.inf), kh, kw, a["strides"])
    return cols.max(axis=(4, 5)).astype(x.dtype, copy=False)


def _window_argmax(x, a):
    """Index arrays (n, row, col, c) into the padded input of each window's first maximum."""
    kh, kw = a["ksize"]
    sh, sw = a["strides"]
    cols = _windows(_pad(x, a["pads"], -np.inf), kh, kw, a["strides"])
    n, oh, ow, c = cols.shape[:4]
    p, q = np.divmod(cols.reshape(n, oh, ow, c, kh * kw).argmax(axis=-1), kw)
    rows = np.arange(oh)[None, :, None, None] * sh + p
    colsi = np.arange(ow)[None, None, :, None] * sw + q
    nn_ = np.broadcast_to(np.arange(n)[:, None, None, None], p.shape)
    cc = np.broadcast_to(np.arange(c)[None, None, None, :], p.shape)
    return nn_, rows, colsi, cc


def max_pool_grad(i, a):
    """Route each dy to the first maximum of its window."""
    x, dy = i["x"], i["dy"]
    (t, b), (lft, r) = a["pads"]
    xp_shape = (x.shape[0], x.shape[1] + t + b, x.shape[2] + lft + r, x.shape[3])
    dxp = np.zeros(xp_shape, dy.dtype)
    np.add.at(dxp, _window_argmax(x, a), dy)
    return dxp[:, t : t + x.shape[1], lft : lft + x.shape[2], :]


def max_pool_gather(i, a):
    """g at the first maximum of each of x's windows (max_pool_grad's transpose in dy)."""
    x, g = i["x"], i["g"]
    return _pad(g, a["pads"])[_window_argmax(x, a)]


def _avg_counts(shape, a, dtype):
    n, h, w, c = shape
    kh, kw = a["ksize"]
    ones = _pad(np.ones((1, h, w, 1), dtype), a["pads"])
    return _windows(ones, kh, kw, a["strides"]).sum(axis=(4, 5))


def avg_pool(i, a):
    """Average over the window's real (unpadded) elements, as TensorFlow does."""
    x = i["x"]
    kh, kw = a["ksize"]
    cols = _windows(_pad(x, a["pads"]), kh, kw, a["strides"])
    return (cols.sum(axis=(4, 5)) / _avg_counts(x.shape, a, x.dtype)).astype(x.dtype, copy=False)


def avg_pool_grad(i, a):
    dy = i["dy"]
    n, h, w, c = a["input_shape"]
    kh, kw = a["ksize"]
    sh, sw = a["strides"]
    (t, b), (lft, r) = a["pads"]
    share = dy / _avg_counts(a["input_shape"], a, dy.dtype)
    oh, ow = dy.shape[1:3]
    dxp = np.zeros((n, h + t + b, w + lft + r, c), dy.dtype)
    for p in range(kh):
        for q in range(kw):
            dxp[:, p : p + sh * oh : sh, q : q + sw * ow : sw, :] += share
    return dxp[:, t : t + h, lft : lft + w, :]


def _rows(x) -> int:
    """How many softmax rows (every axis but the last): the mean's n."""
    return x.size // x.shape[-1] if x.shape[-1] else 0


def softmax_cross_entropy(i, a):
    """mean over rows of -sum(labels * (z - logsumexp(z))), the max subtracted first."""
    z, t = i["logits"], i["labels"]
    z = z - np.max(z, axis=-1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    z -= lse
    z *= t
    return np.asarray(-np.sum(z) / max(_rows(z), 1), z.dtype)


def softmax_cross_entropy_grad(i, a):
    """(softmax(z) * sum(labels, -1) - labels) * dy / n, in one array. The row sum is 1 for
    one-hot or probability labels; other labels (issue 12) need it."""
    dy, z, t = i["dy"], i["logits"], i["labels"]
    p = z - np.max(z, axis=-1, keepdims=True)
    np.exp(p, out=p)
    p *= np.sum(t, axis=-1, keepdims=True) / np.sum(p, axis=-1, keepdims=True)
    p -= t
    p *= (dy / max(_rows(z), 1)).astype(z.dtype)
    return p
