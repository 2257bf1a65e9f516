"""numpy kernels: reductions and softmax. attrs: axis (tuple or None), keepdims."""

from __future__ import annotations

import numpy as np

from ... import kernel_names as K


def _reduce(fn):
    def kernel(i, a):
        x = i["x"]
        out = fn(x, axis=a.get("axis"), keepdims=a.get("keepdims", False))
        return np.asarray(out).astype(x.dtype, copy=False)

    return kernel


def _softmax(i, a):
    x = i["x"]
    if x.size == 0:  # nothing to normalise (np.max of an empty axis would raise)
        return x.copy()
    z = x - np.max(x, axis=a["axis"], keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=a["axis"], keepdims=True)


def _log_softmax(i, a):
    x = i["x"]
    if x.size == 0:
        return x.copy()
    z = x - np.max(x, axis=a["axis"], keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=a["axis"], keepdims=True))


# the ufuncs' reduce: what np.sum / np.max / ... call, without their Python wrappers
KERNELS = {
    K.SUM: _reduce(np.add.reduce),
    K.MAX: _reduce(np.maximum.reduce),
    K.MIN: _reduce(np.minimum.reduce),
    K.PROD: _reduce(np.multiply.reduce),
    K.SOFTMAX: _softmax,
    K.LOG_SOFTMAX: _log_softmax,
}
