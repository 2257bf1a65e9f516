"""numpy kernels: reductions and softmax. attrs: axis (tuple or None), keepdims."""

from __future__ import annotations

import numpy as np


def reduce_(fn):
    def kernel(i, a):
        x = i["x"]
        out = fn(x, axis=a.get("axis"), keepdims=a.get("keepdims", False))
        return np.asarray(out).astype(x.dtype, copy=False)

    return kernel


def softmax(i, a):
    x = i["x"]
    if x.size == 0:  # nothing to normalise (np.max of an empty axis would raise)
        return x.copy()
    z = x - np.max(x, axis=a["axis"], keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=a["axis"], keepdims=True)


def log_softmax(i, a):
    x = i["x"]
    if x.size == 0:
        return x.copy()
    z = x - np.max(x, axis=a["axis"], keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=a["axis"], keepdims=True))
