"""Gradients of batched matmul (da = dy @ b^T, db = a^T @ dy; batch broadcast reduced by the
engine) and of the fused dense kernel, whose matmuls are fused matmuls with transposes (so no
Transpose nodes) and whose activation step is the activation's fused gradient kernel."""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..backends.numpy import linalg as npk
from ..engine.dispatch import run_kernel
from ..ops.elementwise import relu_grad, sigmoid_grad, tanh_grad
from ..ops.matrix import fused_matmul
from ..registry import batching as B
from ..registry import kernel_names as K
from ..registry.primitive import Primitive


def _swap(t):
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return o.transpose(t, perm)


def _matmul(dy, saved, attrs):
    a, b = saved
    if a is not None and b is not None and a.ndim + b.ndim == 3:
        return _matvec(dy, a, b)
    if dy.ndim == 2:  # a and b are 2-D: BLAS reads the transposes, no Transpose nodes
        return {
            "a": lambda: fused_matmul(dy, b, transpose_b=True),
            "b": lambda: fused_matmul(a, dy, transpose_a=True),
        }
    return {"a": lambda: o.matmul(dy, _swap(b)), "b": lambda: o.matmul(_swap(a), dy)}


def _matvec(dy, a, b):
    """A vector operand (recorded without reshapes): its partner's gradient is an outer
    product, its own a matrix-vector product."""
    if b.ndim == 1:  # y (m,) = a (m, k) @ b (k,)
        return {"a": lambda: o.reshape(dy, (-1, 1)) * b, "b": lambda: o.matmul(dy, a)}
    # y (n,) = a (k,) @ b (k, n)
    return {"a": lambda: o.matmul(b, dy), "b": lambda: o.reshape(a, (-1, 1)) * dy}


# y = act(z) read through y: relu's mask (y > 0 where z > 0), tanh's 1 - y^2, sigmoid's y(1-y)
_ACT_GRAD = {"relu": relu_grad, "tanh": tanh_grad, "sigmoid": sigmoid_grad}


# fused_matmul: y = act(a @ b + bias); dz = act'(dy, y);
# da = dz @ b^T, db = a^T @ dz, dbias = sum(dz, 0)
def _fused_matmul(dy, saved, attrs):
    """dense layer: dz = dy through the activation; da = dz b^T, db = a^T dz, dbias = sum(dz)"""
    a, b, y = saved
    ta, tb, act = attrs["transpose_a"], attrs["transpose_b"], attrs["activation"]
    dz = [None if act != "linear" else dy]

    def step():  # dz once, shared by the three gradients
        if dz[0] is None:
            dz[0] = _ACT_GRAD[act](dy, y)
        return dz[0]

    if not ta and not tb:
        da = lambda: fused_matmul(step(), b, transpose_b=True)  # noqa: E731
        db = lambda: fused_matmul(a, step(), transpose_a=True)  # noqa: E731
    elif not ta:  # y = a @ b^T
        da = lambda: fused_matmul(step(), b)  # noqa: E731
        db = lambda: fused_matmul(step(), a, transpose_a=True)  # noqa: E731
    elif not tb:  # y = a^T @ b
        da = lambda: fused_matmul(b, step(), transpose_b=True)  # noqa: E731
        db = lambda: fused_matmul(a, step())  # noqa: E731
    else:  # y = a^T @ b^T
        da = lambda: fused_matmul(b, step(), transpose_a=True, transpose_b=True)  # noqa: E731
        db = lambda: fused_matmul(step(), a, transpose_a=True, transpose_b=True)  # noqa: E731
    return {"a": da, "b": db, "bias": lambda: _sum_rows(step())}


def _sum_rows(dz):
    """sum(dz, axis=0): the Sum kernel run directly (the op's argument checks cost more)."""
    attrs = {"axis": (0,), "keepdims": False, "input_shape": dz.shape}
    return run_kernel(K.SUM, {"x": dz}, attrs)


def _dense_parts(ins: dict, attrs: dict):
    """``act(a @ b + bias)`` as separate ops: what the lesson graph draws for a fused layer."""
    a = o.transpose(ins["a"]) if attrs.get("transpose_a") else ins["a"]
    b = o.transpose(ins["b"]) if attrs.get("transpose_b") else ins["b"]
    z = a @ b
    if "bias" in ins:
        z = z + ins["bias"]
    act = attrs.get("activation", "linear")
    return z if act == "linear" else getattr(o, act)(z)


_READS = {"a": ("b",), "b": ("a",)}

ROWS = (
    Primitive(
        K.MATMUL,
        kernel=lambda i, a: np.matmul(i["a"], i["b"]),
        vjp=_matmul,
        inputs_to_save=("a", "b"),
        needed_by=_READS,
        formula={"a": r"{dy}\, {b}^\top", "b": r"{a}^\top {dy}"},
        batch=B.matmul,
    ),
    Primitive(
        K.FUSED_MATMUL,
        kernel=npk.fused_matmul,
        vjp=_fused_matmul,
        inputs_to_save=("a", "b"),
        outputs_to_save=(0,),
        needed_by=_READS,
        optional=("bias",),
        batch=B.fused_matmul,
        decomposition=_dense_parts,
    ),
)
