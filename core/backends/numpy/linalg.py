"""numpy kernels: batched matrix multiply (numpy broadcasting over batch dimensions) and the
fused dense kernel ``_FusedMatMul``: y = act(op(a) @ op(b) + bias), op = transpose or not."""

from __future__ import annotations

import numpy as np

from .elementwise import sigmoid


def _relu_into(y):
    return np.maximum(y, 0, out=y)


def _tanh_into(y):
    return np.tanh(y, out=y)


def _sigmoid_into(y):
    y[...] = sigmoid(y)
    return y


# in place on the matmul result (one array for the whole layer); the same bits as the
# unfused Relu / Tanh / Sigmoid kernels
_ACTIVATE = {"linear": None, "relu": _relu_into, "tanh": _tanh_into, "sigmoid": _sigmoid_into}


def fused_matmul(i, a):
    x, w = i["a"], i["b"]
    y = np.matmul(x.T if a["transpose_a"] else x, w.T if a["transpose_b"] else w)
    bias = i.get("bias")
    if bias is not None:
        np.add(y, bias, out=y)
    act = _ACTIVATE[a["activation"]]
    return y if act is None else act(y)
