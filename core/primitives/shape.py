"""The shape and indexing primitives, one ``Primitive`` row each; each VJP moves dy back to
where the values came from."""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..backends.numpy import shape as npk
from ..registry import batching as B
from ..registry import kernel_names as K
from ..registry.primitive import Primitive


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


ROWS = (
    Primitive(
        K.RESHAPE, kernel=lambda i, a: np.reshape(i["x"], a["shape"]), vjp=_reshape, batch=B.reshape
    ),
    Primitive(
        K.TRANSPOSE,
        kernel=lambda i, a: np.transpose(i["x"], a["perm"]),
        vjp=_transpose,
        batch=B.transpose,
    ),
    Primitive(K.CONCAT, kernel=npk.concat, vjp=_concat, batch=B.concat),
    Primitive(K.SPLIT, kernel=npk.split, vjp=_split, batch=B.split),
    Primitive(
        K.SLICE, kernel=lambda i, a: np.asarray(i["x"][a["key"]]), vjp=_slice, batch=B.slice_
    ),
    Primitive(K.SLICE_GRAD, kernel=npk.slice_grad, vjp=_slice_grad),
    Primitive(
        K.PAD,
        kernel=lambda i, a: np.pad(i["x"], a["paddings"], constant_values=a.get("constant", 0)),
        vjp=_pad,
        batch=B.pad,
    ),
    Primitive(K.TILE, kernel=lambda i, a: np.tile(i["x"], a["reps"]), vjp=_tile, batch=B.tile),
    Primitive(
        K.BROADCAST_TO,
        kernel=lambda i, a: np.broadcast_to(i["x"], a["shape"]).copy(),
        vjp=_broadcast_to,
        batch=B.broadcast_to,
    ),
    Primitive(K.ONE_HOT, kernel=npk.one_hot, vjp=None),
)
