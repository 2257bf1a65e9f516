"""Gradients of shape and indexing kernels: each moves dy back to where the values came from."""

from __future__ import annotations

import numpy as np

from .. import batching as B
from .. import kernel_names as K
from .. import ops as o


def _reshape(dy, saved, attrs):
    return {"x": lambda: o.reshape(dy, attrs["input_shape"])}


def _transpose(dy, saved, attrs):
    inverse = [0] * len(attrs["perm"])
    for i, p in enumerate(attrs["perm"]):
        inverse[p] = i
    return {"x": lambda: o.transpose(dy, inverse)}


def _concat(dy, saved, attrs):
    axis, sizes = attrs["axis"], attrs["sizes"]
    starts = np.concatenate([[0], np.cumsum(sizes)])

    def piece(i):
        key = (slice(None),) * axis + (slice(int(starts[i]), int(starts[i + 1])),)
        return lambda: o.getitem(dy, key)

    return {f"x{i}": piece(i) for i in range(len(sizes))}


def _split(dy, saved, attrs):
    return {"x": lambda: o.concat(list(dy), attrs["axis"])}


def _slice(dy, saved, attrs):
    return {"x": lambda: o.slice_grad(dy, attrs["key"], attrs["input_shape"], attrs["advanced"])}


def _slice_grad(dy, saved, attrs):  # scatter is linear; its adjoint is the gather
    return {"dy": lambda: o.getitem(dy, attrs["key"])}


def _pad(dy, saved, attrs):
    key = tuple(slice(b, dy.shape[i] - a) for i, (b, a) in enumerate(attrs["paddings"]))
    return {"x": lambda: o.getitem(dy, key)}


def _tile(dy, saved, attrs):
    shape, reps = attrs["input_shape"], attrs["reps"]

    def dx():
        interleaved = tuple(v for r, s in zip(reps, shape) for v in (r, s))
        summed = o.sum(o.reshape(dy, interleaved), tuple(range(0, 2 * len(shape), 2)))
        return o.reshape(summed, shape)

    return {"x": dx}


def _broadcast_to(dy, saved, attrs):
    return {"x": lambda: o.sum_to(dy, attrs["input_shape"])}


GRADIENTS = [
    (K.RESHAPE, _reshape, (), ()),
    (K.TRANSPOSE, _transpose, (), ()),
    (K.CONCAT, _concat, (), ()),
    (K.SPLIT, _split, (), ()),
    (K.SLICE, _slice, (), ()),
    (K.SLICE_GRAD, _slice_grad, (), ()),
    (K.PAD, _pad, (), ()),
    (K.TILE, _tile, (), ()),
    (K.BROADCAST_TO, _broadcast_to, (), ()),
]

BATCHING = {  # how the batched replay runs each (core/batching.py)
    K.RESHAPE: B.reshape,
    K.TRANSPOSE: B.transpose,
    K.BROADCAST_TO: B.broadcast_to,
    K.CONCAT: B.concat,
    K.SPLIT: B.split,
    K.SLICE: B.slice_,
    K.PAD: B.pad,
    K.TILE: B.tile,
}
