"""Source text every rendered program starts with: tapeviz's, numpy's and PyTorch's preludes.

These strings are pasted verbatim into a failure's standalone script, so they import only
numpy, scipy, tapeviz and torch, and define every helper the templates of ``fuzz_ops*.py``
name. The layers' weights are fixed numbers here, so the three mirrors compute the same net.
"""

from __future__ import annotations

COMMON = """\
import numpy as np
import scipy.special as sp

SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
DENSE_W = np.array([[0.5, -0.3, 0.1], [0.2, 0.8, -0.6], [-0.4, 0.1, 0.3], [0.7, -0.2, -0.5]])
DENSE_B = np.array([0.1, -0.2, 0.05])
SEQ_W2 = np.array([[0.3, -0.7], [0.5, 0.2], [-0.1, 0.4]])
"""

TAPEVIZ = """\
import tapeviz as tv

DENSE = tv.nn.Dense(3, activation="tanh")
DENSE(tv.zeros((1, 4), "float64"))
DENSE.kernel.assign(DENSE_W)
DENSE.bias.assign(DENSE_B)
SEQ = tv.nn.Sequential([tv.nn.Dense(3), tv.nn.ReLU(), tv.nn.Dense(2, use_bias=False)])
SEQ(tv.zeros((1, 4), "float64"))
SEQ[0].kernel.assign(DENSE_W)
SEQ[0].bias.assign(DENSE_B)
SEQ[2].kernel.assign(SEQ_W2)
"""

NUMPY = '''\
def _as(v, dtype):
    """numpy's result, cast to the dtype tapeviz documents for the statement (fuzz_dtypes)."""
    v = np.asarray(v)
    return v if v.dtype == dtype else v.astype(dtype)


def np_logsumexp(x, axis, keepdims):
    shape = np.sum(x, axis=axis, keepdims=keepdims).shape
    return np.reshape(sp.logsumexp(x, axis=axis, keepdims=keepdims), shape)


def np_bce(y, p):
    q = np.clip(p, 1e-7, 1 - 1e-7)
    return -np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))


def _windows(x, k, s):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    return np.stack([x[:, i * s:i * s + k, j * s:j * s + k, :] for i in range(oh)
                     for j in range(ow)], 1).reshape(n, oh, ow, k, k, c)


def np_conv2d(x, w, s, pad):
    kh, kw = w.shape[:2]
    if pad == "same":
        pads = []
        for size, k in zip(x.shape[1:3], (kh, kw)):
            total = max((-(-size // s) - 1) * s + k - size, 0)
            pads.append((total // 2, total - total // 2))
        x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    n, h, wd, c = x.shape
    oh, ow = (h - kh) // s + 1, (wd - kw) // s + 1
    out = np.zeros((n, oh, ow, w.shape[3]), np.result_type(x, w))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * s:i * s + kh, j * s:j * s + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def np_max_pool2d(x):
    return _windows(x, 2, 2).max(axis=(3, 4))


def np_avg_pool2d(x):
    return _windows(x, 2, 2).mean(axis=(3, 4))
'''

TORCH = '''\
import torch
import torch.nn.functional as F

TORCH_DTYPES = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
                "int32": torch.int32, "int64": torch.int64, "bool": torch.bool,
                "int8": torch.int8, "int16": torch.int16, "uint8": torch.uint8}


def _t(v):
    return v if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v))


def _as(v, dtype):
    v = _t(v)
    want = TORCH_DTYPES[str(dtype)]
    return v if v.dtype == want else v.to(want)


def _dims(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % x.ndim for a in axes)


def _reduce(fn, x, axis, keepdims):
    if x.ndim == 0:
        return fn(x.reshape(1), (0,), False).reshape(())
    return fn(x, _dims(x, axis), keepdims)


def t_sum(x, axis=None, keepdims=False):
    return _reduce(lambda x, d, k: torch.sum(x, d, keepdim=k), x, axis, keepdims)


def t_mean(x, axis=None, keepdims=False):
    return _reduce(lambda x, d, k: torch.mean(x, d, keepdim=k), x, axis, keepdims)


def t_max(x, axis=None, keepdims=False):
    return _reduce(lambda x, d, k: torch.amax(x, d, keepdim=k), x, axis, keepdims)


def t_min(x, axis=None, keepdims=False):
    return _reduce(lambda x, d, k: torch.amin(x, d, keepdim=k), x, axis, keepdims)


def t_logsumexp(x, axis=None, keepdims=False):
    return _reduce(lambda x, d, k: torch.logsumexp(x, d, keepdim=k), x, axis, keepdims)


def _prod(x, dims, keepdims):
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=keepdims)
    return x


def t_prod(x, axis=None, keepdims=False):
    return _reduce(_prod, x, axis, keepdims)


def t_var(x, axis=None, keepdims=False, ddof=0):
    return _reduce(lambda x, d, k: torch.var(x, d, correction=ddof, keepdim=k), x, axis, keepdims)


def t_std(x, axis=None, keepdims=False, ddof=0):
    return _reduce(lambda x, d, k: torch.std(x, d, correction=ddof, keepdim=k), x, axis, keepdims)


def t_argmax(x, axis=None):
    x = x.to(torch.uint8) if x.dtype == torch.bool else x
    return torch.argmax(x.reshape(-1), 0) if axis is None else torch.argmax(x, axis)


def t_argmin(x, axis=None):
    x = x.to(torch.uint8) if x.dtype == torch.bool else x
    return torch.argmin(x.reshape(-1), 0) if axis is None else torch.argmin(x, axis)


def t_cumsum(x, axis=None):
    return torch.cumsum(x.reshape(-1), 0) if axis is None else torch.cumsum(x, axis)


def t_cumprod(x, axis=None):
    return torch.cumprod(x.reshape(-1), 0) if axis is None else torch.cumprod(x, axis)


def t_norm(x, ord=None, axis=None):
    if isinstance(axis, tuple) and len(axis) == 2:
        return torch.linalg.matrix_norm(x, "fro" if ord is None else ord, axis)
    return torch.linalg.vector_norm(x, 2 if ord is None else ord, axis)


def t_transpose(x, perm):
    return x.permute(*(perm if perm is not None else reversed(range(x.ndim))))


def t_squeeze(x, axis):
    return torch.squeeze(x) if axis is None else torch.squeeze(x, axis)


def t_flip(x, axis):
    return torch.flip(x, _dims(x, axis))


def t_roll(x, shift, axis):
    return torch.roll(x, shift) if axis is None else torch.roll(x, shift, axis)


def t_tile(x, reps):
    return torch.tile(x, (reps,) if isinstance(reps, int) else reps)


def t_repeat(x, r, axis):
    return torch.repeat_interleave(x.reshape(-1) if axis is None else x, r, 0 if axis is None else axis)


def t_pad(x, pads, value):
    flat = [p for pair in reversed(pads) for p in pair]
    return F.pad(x, flat, value=value)


def t_index(x, key):
    """x[key] with numpy's semantics (negative steps, masks): an index array of positions."""
    pos = np.arange(x.numel()).reshape(tuple(x.shape))[key]
    return x.reshape(-1)[torch.as_tensor(np.asarray(pos).reshape(-1))].reshape(np.shape(pos))


def t_take(x, idx, axis):
    pos = np.take(np.arange(x.numel()).reshape(tuple(x.shape)), idx, axis)
    return x.reshape(-1)[torch.as_tensor(pos.reshape(-1))].reshape(pos.shape)


def t_bce(y, p):
    q = torch.clamp(p, 1e-7, 1 - 1e-7)
    return -torch.mean(y * torch.log(q) + (1 - y) * torch.log(1 - q))


def t_solve(a, b):
    """numpy 2's rule: b is a vector only when 1-D, else (a stack of) matrices."""
    if b.ndim == 1:
        return torch.linalg.solve(a, b.unsqueeze(-1)).squeeze(-1)
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return torch.linalg.solve(a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:]))


def t_sign(x):
    """numpy's sign: NaN at NaN (PyTorch's gives 0)."""
    return torch.where(torch.isnan(x), x.detach(), torch.sign(x))  # sign's derivative: 0


def t_conv2d(x, w, s, pad):
    kh, kw = w.shape[:2]
    x = x.permute(0, 3, 1, 2)
    if pad == "same":
        flat = []
        for size, k in zip(reversed(x.shape[2:]), (kw, kh)):
            total = max((-(-size // s) - 1) * s + k - size, 0)
            flat += [total // 2, total - total // 2]
        x = F.pad(x, flat)
    return F.conv2d(x, w.permute(3, 2, 0, 1), stride=s).permute(0, 2, 3, 1)


def t_max_pool2d(x):
    return F.max_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1)


def t_avg_pool2d(x):
    return F.avg_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1)
'''
