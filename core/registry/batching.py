"""Batching rules: how the batched replay (``core/check/batched_replay.py``) runs a kernel
once on inputs that carry a leading batch axis, instead of once per row.

A rule is ``rule(fn, ins, attrs, size) -> tuple of arrays``: ``fn`` the kernel, ``ins``
``{input name: (array, batched)}``, ``size`` the batch size. A rule that does not fit the
shapes raises ``ValueError`` (or ``IndexError``/``TypeError``) and the replay loops over rows,
which is always right. Each primitive's definition names its rule (``batch=``, ``core/primitives/<family>.py``);
``core.primitives.register`` puts it on the primitive (``register_batching``).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "elementwise", "broadcast", "reduce_axes", "shift_axis", "matmul", "fused_matmul",
    "reshape", "transpose", "broadcast_to", "concat", "split", "slice_", "pad", "tile",
    "nhwc_images",
]  # fmt: skip


def elementwise(fn, ins, attrs, size):
    """One input ``x``, elementwise (or acting along axes the attrs do not name)."""
    return _as_tuple(fn({"x": ins["x"][0]}, attrs))


def broadcast(fn, ins, attrs, size):
    """Inputs that broadcast together (numpy rules): ranks aligned behind the batch axis."""
    return _as_tuple(fn(align(ins), attrs))


def reduce_axes(fn, ins, attrs, size):
    """A reduction over ``attrs["axis"]`` (a tuple, or None for all): axes shift by one."""
    x = ins["x"][0]
    axis = attrs.get("axis")
    shifted = tuple(range(1, x.ndim)) if axis is None else tuple(i + 1 for i in axis)
    return _as_tuple(fn({"x": x}, {**attrs, "axis": shifted}))


def shift_axis(fn, ins, attrs, size):
    """One input ``x`` and an int ``attrs["axis"]`` (softmax): the axis shifts by one."""
    return _as_tuple(fn({"x": ins["x"][0]}, {**attrs, "axis": attrs["axis"] + 1}))


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def align(ins) -> dict:
    """Give batched operands rank 1 + (the largest unbatched rank) so numpy broadcasting
    keeps the batch axis first."""
    rank = max(a.ndim - (1 if b else 0) for a, b in ins.values())
    out = {}
    for k, (a, b) in ins.items():
        if b and a.ndim - 1 < rank:
            a = a.reshape((a.shape[0],) + (1,) * (rank - a.ndim + 1) + a.shape[1:])
        out[k] = a
    return out


def matmul(fn, ins, attrs, size):
    """One GEMM instead of a stack of small ones when a 2-D operand is unbatched."""
    return (_matmul(fn, ins, attrs),)


def _matmul(fn, ins, attrs):
    (a, ba), (b, bb) = ins["a"], ins["b"]
    if ba and not bb and b.ndim == 2:
        return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[-1],))
    if bb and not ba and a.ndim == 2 and b.ndim == 2:  # matrix @ a batch of vectors
        return b @ a.T
    if (ba and not bb and b.ndim == 1) or (bb and not ba and a.ndim == 1):
        return a @ b  # numpy broadcasts the batch of matrices against the vector
    if a.ndim - ba == 1 or b.ndim - bb == 1:
        raise ValueError("a batched vector operand without a rule: loop")
    if bb and not ba and a.ndim == 2 and b.ndim == 3:
        size, k, m = b.shape
        out = a @ np.moveaxis(b, 0, 1).reshape(k, size * m)
        return np.moveaxis(out.reshape(a.shape[0], size, m), 1, 0)
    return fn(align(ins), attrs)


def reshape(fn, ins, attrs, size):
    return (fn({"x": ins["x"][0]}, {**attrs, "shape": (size,) + tuple(attrs["shape"])}),)


def transpose(fn, ins, attrs, size):
    perm = (0,) + tuple(p + 1 for p in attrs["perm"])
    return (fn({"x": ins["x"][0]}, {**attrs, "perm": perm}),)


def broadcast_to(fn, ins, attrs, size):
    x, shape = ins["x"][0], tuple(attrs["shape"])
    x = x.reshape((size,) + (1,) * (len(shape) - x.ndim + 1) + x.shape[1:])
    return (fn({"x": x}, {**attrs, "shape": (size,) + shape}),)


def concat(fn, ins, attrs, size):
    arrays = {k: a if b else np.broadcast_to(a, (size,) + a.shape) for k, (a, b) in ins.items()}
    return (fn(arrays, {**attrs, "axis": attrs["axis"] + 1}),)


def split(fn, ins, attrs, size):
    return _as_tuple(fn({"x": ins["x"][0]}, {**attrs, "axis": attrs["axis"] + 1}))


def slice_(fn, ins, attrs, size):
    if attrs.get("advanced"):
        raise ValueError("advanced indexing: loop")
    key = (slice(None),) + tuple(attrs["key"])
    return (fn({"x": ins["x"][0]}, {**attrs, "key": key}),)


def pad(fn, ins, attrs, size):
    paddings = ((0, 0),) + tuple(tuple(p) for p in attrs["paddings"])
    return (fn({"x": ins["x"][0]}, {**attrs, "paddings": paddings}),)


def tile(fn, ins, attrs, size):
    x = ins["x"][0]
    if len(attrs["reps"]) != x.ndim - 1:
        raise ValueError("tile reps differ from the rank: loop")
    return (fn({"x": x}, {**attrs, "reps": (1,) + tuple(attrs["reps"])}),)


def fused_matmul(fn, ins, attrs, size):
    """Only ``a`` batched (not transposed): its rows stack into one GEMM, as a dense layer."""
    a, batched = ins["a"]
    if attrs["transpose_a"] or not batched or any(b for k, (_, b) in ins.items() if k != "a"):
        raise ValueError("fused matmul with a batched weight: loop")
    arrays = {k: v for k, (v, _) in ins.items()}
    arrays["a"] = a.reshape(-1, a.shape[-1])
    out = fn(arrays, attrs)
    return (out.reshape((size, a.shape[1]) + out.shape[1:]),)


def nhwc_images(fn, ins, attrs, size):
    """Images: fold the batch axis into N, run once, unfold (the filter unbatched)."""
    if ins.get("filter", (None, False))[1]:
        raise ValueError("a batched filter: loop")
    x = ins["x"][0]
    arrays = {k: a for k, (a, b) in ins.items()}
    arrays["x"] = x.reshape((-1,) + x.shape[2:])
    out = fn(arrays, attrs)
    return (out.reshape((size, x.shape[1]) + out.shape[1:]),)
