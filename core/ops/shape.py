"""Shape ops: reshape, transpose, expand/squeeze, concat, stack, split, indexing, pad, tile."""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.tensor import Tensor
from .arguments import as_tensor, cast, norm_axis, unchanged


def reshape(x, shape) -> Tensor:
    """Same values, new ``shape`` (one entry may be -1)."""
    x = as_tensor(x, "reshape")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
    try:
        if min(shape, default=0) >= 0 and math.prod(shape) == x.size:
            target = shape  # no -1 to resolve (the common case: no allocation)
        else:  # resolves -1, checks size
            target = np.empty(x.shape, np.bool_).reshape(shape).shape
    except ValueError:
        raise ValueError(
            f"reshape: cannot reshape a tensor of shape {x.shape} into {shape}"
        ) from None
    if target == x.shape:
        return unchanged(x)
    return run_kernel(K.RESHAPE, {"x": x}, {"shape": target, "input_shape": x.shape})


def flatten(x) -> Tensor:
    """Keep the first (batch) axis, flatten the rest."""
    x = as_tensor(x, "flatten")
    return reshape(x, (x.shape[0], -1) if x.ndim > 1 else (-1,))


def transpose(x, perm=None) -> Tensor:
    """Permute axes (reverse them by default, as numpy)."""
    x = as_tensor(x, "transpose")
    ndim = len(x.shape)
    perm = tuple(range(ndim - 1, -1, -1)) if perm is None else tuple(map(int, perm))
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"transpose: perm {perm} is not a permutation of {x.ndim} axes")
    if perm == tuple(range(ndim)):
        return unchanged(x)
    return run_kernel(K.TRANSPOSE, {"x": x}, {"perm": perm})


def expand_dims(x, axis: int) -> Tensor:
    x = as_tensor(x, "expand_dims")
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of range for rank {x.ndim}")
    ax = axis % (x.ndim + 1)
    return reshape(x, x.shape[:ax] + (1,) + x.shape[ax:])


def squeeze(x, axis=None) -> Tensor:
    x = as_tensor(x, "squeeze")
    axes = norm_axis(axis, x.ndim, "squeeze")
    if axes is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    for ax in axes:
        if x.shape[ax] != 1:
            raise ValueError(f"squeeze: axis {ax} has size {x.shape[ax]}, not 1")
    return reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in axes))


def concat(tensors, axis: int = 0) -> Tensor:
    """Join tensors along an existing ``axis``."""
    ts = [as_tensor(t, "concat") for t in tensors]
    if not ts:
        raise ValueError("concat: expected at least one tensor")
    ndim = ts[0].ndim
    if ndim == 0:
        raise ValueError("concat: cannot concatenate scalars; use stack")
    (ax,) = norm_axis(axis, ndim, "concat")
    for i, t in enumerate(ts):
        if (
            t.ndim != ndim
            or t.shape[:ax] + t.shape[ax + 1 :] != ts[0].shape[:ax] + ts[0].shape[ax + 1 :]
        ):
            raise ValueError(
                f"concat: tensor {i} has shape {t.shape}, incompatible with {ts[0].shape} "
                f"along axis {ax}"
            )
    if len({t.dtype for t in ts}) > 1:
        common = np.result_type(*[t.dtype for t in ts])
        ts = [cast(t, common) for t in ts]
    sizes = tuple(t.shape[ax] for t in ts)
    return run_kernel(
        K.CONCAT, {f"x{i}": t for i, t in enumerate(ts)}, {"axis": ax, "sizes": sizes}
    )


def stack(tensors, axis: int = 0) -> Tensor:
    """Join tensors along a new ``axis``."""
    ts = [as_tensor(t, "stack") for t in tensors]
    if not ts:
        raise ValueError("stack: expected at least one tensor")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise ValueError(f"stack: tensor {i} has shape {t.shape}, expected {ts[0].shape}")
    return concat([expand_dims(t, axis) for t in ts], axis)


def split(x, num_or_sizes, axis: int = 0) -> list[Tensor]:
    """Split along ``axis`` into equal parts (an int) or parts of the given sizes."""
    x = as_tensor(x, "split")
    (ax,) = norm_axis(axis, x.ndim, "split")
    n = x.shape[ax]
    if isinstance(num_or_sizes, (int, np.integer)):
        if num_or_sizes <= 0 or n % num_or_sizes:
            raise ValueError(f"split: axis {ax} of size {n} does not split into {num_or_sizes}")
        sizes = (n // num_or_sizes,) * int(num_or_sizes)
    else:
        sizes = tuple(int(s) for s in num_or_sizes)
        if builtins.sum(sizes) != n or builtins.min(sizes) < 0:
            raise ValueError(f"split: sizes {sizes} do not add up to axis {ax}'s size {n}")
    return list(run_kernel(K.SPLIT, {"x": x}, {"axis": ax, "sizes": sizes}))


def _normalize_key(key):
    """Index key -> (key with arrays for tensors, advanced?). Index arrays are copied (and
    made read-only): the node keeps them in its attrs for the gradient, and a user changing
    their array after the forward pass must not move the gradient."""
    if not isinstance(key, tuple):
        key = (key,)
    out, advanced = [], False
    for k in key:
        if isinstance(k, Tensor):
            k = k._array
        if isinstance(k, (list, np.ndarray)):
            # a copy: the user's array may change after the forward pass; subok keeps a value
            # tv.jit is tracing traced (so the jit refuses it rather than bake it in)
            was_list = isinstance(k, list)
            k = np.array(k, subok=True)
            if was_list and k.size == 0 and k.dtype.kind == "f":  # x[[]]: numpy's intp
                k = k.astype(np.intp)
            k.flags.writeable = False
            if k.dtype.kind not in "iub":
                raise TypeError(f"getitem: index arrays must be int or bool, got {k.dtype}")
            advanced = True
        elif not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
            raise TypeError(f"getitem: unsupported index {k!r} of type {type(k).__name__}")
        out.append(k)
    return tuple(out), advanced


def getitem(x, key) -> Tensor:
    """numpy indexing: ints, slices, None, ``...``, and integer/bool index arrays."""
    x = as_tensor(x, "getitem")
    key, advanced = _normalize_key(key)
    try:
        np.empty(x.shape, np.bool_)[key]
    except IndexError as e:
        raise IndexError(f"getitem: index {key!r} is invalid for shape {x.shape}: {e}") from None
    attrs = {"key": key, "advanced": advanced, "input_shape": x.shape}
    return run_kernel(K.SLICE, {"x": x}, attrs)


def slice_grad(dy, key, shape, advanced) -> Tensor:
    """Scatter ``dy`` into zeros of ``shape`` at ``key`` (the gradient of getitem)."""
    return run_kernel(
        K.SLICE_GRAD, {"dy": dy}, {"key": key, "shape": tuple(shape), "advanced": advanced}
    )


def gather(x, indices, axis: int = 0) -> Tensor:
    """Take ``indices`` along ``axis`` (TensorFlow.js ``gather``)."""
    x = as_tensor(x, "gather")
    (ax,) = norm_axis(axis, x.ndim, "gather")
    idx = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {idx.dtype}")
    return getitem(x, (slice(None),) * ax + (idx,))


def pad(x, paddings, constant_values=0) -> Tensor:
    """Pad with a constant; ``paddings`` is one (before, after) pair per axis."""
    x = as_tensor(x, "pad")
    paddings = tuple((int(a), int(b)) for a, b in paddings)
    if len(paddings) != x.ndim or builtins.min([0] + [v for p in paddings for v in p]) < 0:
        raise ValueError(
            f"pad: expected {x.ndim} non-negative (before, after) pairs, got {paddings}"
        )
    return run_kernel(K.PAD, {"x": x}, {"paddings": paddings, "constant": constant_values})


def tile(x, reps) -> Tensor:
    """Repeat the tensor ``reps[i]`` times along axis ``i``, as ``numpy.tile``: short
    ``reps`` are padded with leading 1s, a short tensor gets leading axes of size 1."""
    x = as_tensor(x, "tile")
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    if builtins.min(reps, default=0) < 0:
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    if len(reps) > x.ndim:
        x = reshape(x, (1,) * (len(reps) - x.ndim) + x.shape)
    reps = (1,) * (x.ndim - len(reps)) + reps
    return run_kernel(K.TILE, {"x": x}, {"reps": reps, "input_shape": x.shape})


def broadcast_to(x, shape) -> Tensor:
    x = as_tensor(x, "broadcast_to")
    shape = tuple(map(int, shape))
    if not _broadcasts_to(x.shape, shape):
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    if shape == x.shape:
        return unchanged(x)
    return run_kernel(K.BROADCAST_TO, {"x": x}, {"shape": shape, "input_shape": x.shape})


def _broadcasts_to(small: tuple, big: tuple) -> bool:
    """numpy's rule: ``small`` broadcasts to ``big`` (trailing dims equal or 1)."""
    if len(small) > len(big) or min(big, default=0) < 0:
        return False
    for s, b in zip(small[::-1], big[::-1]):
        if s != b and s != 1:
            return False
    return True


def one_hot(indices, depth: int, dtype="float32") -> Tensor:
    """One-hot encoding along a new last axis (not differentiable)."""
    indices = as_tensor(indices, "one_hot")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"one_hot: indices must be integers, got {indices.dtype}")
    return run_kernel(
        K.ONE_HOT, {"indices": indices}, {"depth": int(depth), "dtype": np.dtype(dtype)}
    )
