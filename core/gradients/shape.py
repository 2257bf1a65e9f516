"""The shape and indexing primitives, one ``Definition`` row each; each VJP moves dy back to
where the values came from."""

from __future__ import annotations

import numpy as np

from .. import batching as B
from .. import kernel_names as K
from .. import ops as o
from ..backends.numpy import shape as npk
from ..define import Definition as D


def _reshape(dy, saved, attrs):
    """reshape: dx = reshape(dy, x.shape)"""
    return {"x": lambda: o.reshape(dy, attrs["input_shape"])}


def _transpose(dy, saved, attrs):
    """transpose: dx = transpose(dy, inverse permutation)"""
    inverse = [0] * len(attrs["perm"])
    for i, p in enumerate(attrs["perm"]):
        inverse[p] = i
    return {"x": lambda: o.transpose(dy, inverse)}


def _concat(dy, saved, attrs):
    """concat: dx_i = the slice of dy where x_i was placed"""
    axis, sizes = attrs["axis"], attrs["sizes"]
    starts = np.concatenate([[0], np.cumsum(sizes)])

    def piece(i):
        key = (slice(None),) * axis + (slice(int(starts[i]), int(starts[i + 1])),)
        return lambda: o.getitem(dy, key)

    return {f"x{i}": piece(i) for i in range(len(sizes))}


def _split(dy, saved, attrs):
    """split: dx = concat(dy_1, ..., dy_n); one part (``np.split(x, 1)``): its dy, a Tensor
    (the engine hands a one-output node its dy alone, not in a tuple)."""
    if not isinstance(dy, (tuple, list)):
        return {"x": lambda: dy}
    return {"x": lambda: o.concat(list(dy), attrs["axis"])}


def _slice(dy, saved, attrs):
    """getitem: dx = zeros with dy scattered back to the selected positions"""
    return {"x": lambda: o.slice_grad(dy, attrs["key"], attrs["input_shape"], attrs["advanced"])}


def _slice_grad(dy, saved, attrs):
    """scatter (slice gradient): d(dy) = g gathered at the same positions"""
    return {"dy": lambda: o.getitem(dy, attrs["key"])}


def _pad(dy, saved, attrs):
    """pad: dx = dy without the padding"""
    key = tuple(slice(b, dy.shape[i] - a) for i, (b, a) in enumerate(attrs["paddings"]))
    return {"x": lambda: o.getitem(dy, key)}


def _tile(dy, saved, attrs):
    """tile: dx = dy summed over the repeats"""
    shape, reps = attrs["input_shape"], attrs["reps"]

    def dx():
        interleaved = tuple(v for r, s in zip(reps, shape) for v in (r, s))
        summed = o.sum(o.reshape(dy, interleaved), tuple(range(0, 2 * len(shape), 2)))
        return o.reshape(summed, shape)

    return {"x": dx}


def _broadcast_to(dy, saved, attrs):
    """broadcast_to: dx = dy summed over the broadcast axes"""
    return {"x": lambda: o.sum_to(dy, attrs["input_shape"])}


# one row per primitive: kernel name, numpy kernel, VJP (none saves anything), batching rule
DEFINITIONS = (
    D(K.RESHAPE, lambda i, a: np.reshape(i["x"], a["shape"]), _reshape, batch=B.reshape),
    D(K.TRANSPOSE, lambda i, a: np.transpose(i["x"], a["perm"]), _transpose, batch=B.transpose),
    D(K.CONCAT, npk.concat, _concat, batch=B.concat),
    D(K.SPLIT, npk.split, _split, batch=B.split),
    D(K.SLICE, lambda i, a: np.asarray(i["x"][a["key"]]), _slice, batch=B.slice_),
    D(K.SLICE_GRAD, npk.slice_grad, _slice_grad),
    D(K.PAD, lambda i, a: np.pad(i["x"], a["paddings"], constant_values=a.get("constant", 0)),
      _pad, batch=B.pad),
    D(K.TILE, lambda i, a: np.tile(i["x"], a["reps"]), _tile, batch=B.tile),
    D(K.BROADCAST_TO, lambda i, a: np.broadcast_to(i["x"], a["shape"]).copy(), _broadcast_to,
      batch=B.broadcast_to),
    D(K.ONE_HOT, npk.one_hot, None),
)  # fmt: skip
