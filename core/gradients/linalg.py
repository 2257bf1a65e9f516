"""Gradient of batched matmul: da = dy @ b^T, db = a^T @ dy (batch broadcast reduced by the
engine)."""

from __future__ import annotations

from .. import kernel_names as K
from .. import ops as o


def _swap(t):
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return o.transpose(t, perm)


def _matmul(dy, saved, attrs):
    a, b = saved
    return {"a": lambda: o.matmul(dy, _swap(b)), "b": lambda: o.matmul(_swap(a), dy)}


GRADIENTS = [(K.MATMUL, _matmul, ("a", "b"), (), {"a": ("b",), "b": ("a",)})]
