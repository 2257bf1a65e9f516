"""numpy kernels: reshape, transpose, concat/split, indexing, pad, tile, broadcast, one_hot."""

from __future__ import annotations

import numpy as np


def concat(i, a):
    return np.concatenate([i[f"x{k}"] for k in range(len(i))], axis=a["axis"])


def split(i, a):
    bounds = np.cumsum(a["sizes"])[:-1]
    return tuple(np.split(i["x"], bounds, axis=a["axis"]))


def slice_grad(i, a):
    """Scatter ``dy`` into zeros of the input's shape (adding where indices repeat)."""
    dy = i["dy"]
    out = np.zeros(a["shape"], dy.dtype)
    if a.get("advanced", False):
        np.add.at(out, a["key"], dy)
    else:
        out[a["key"]] = dy
    return out


def one_hot(i, a):
    idx = i["indices"]
    depth = a["depth"]
    if idx.size and (idx.min() < 0 or idx.max() >= depth):
        raise IndexError(
            f"one_hot: indices must be in [0, {depth}), got [{idx.min()}, {idx.max()}]"
        )
    out = np.zeros(idx.shape + (depth,), a.get("dtype", np.float32))
    np.put_along_axis(out, idx[..., None].astype(np.intp), 1, axis=-1)
    return out
