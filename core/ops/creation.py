"""Tensors made from data (``tensor``) and from shapes: zeros, ones, fill, like-forms, ranges
and random values."""

from __future__ import annotations

import numpy as np

from ..tensors.arrays import to_array
from ..tensors.recording import tracks
from ..tensors.tensor import Tensor
from .arguments import as_tensor, binary_args, cast, drawn, from_data, identity
from .elementwise import div, where
from .elementwise_math import floor
from .order import moveaxis


def tensor(data, dtype=None, name: str | None = None) -> Tensor:
    """Make a tensor. Lists of Python floats become float32; numpy arrays keep their dtype.

    Args:
        data: nested lists, a number, a numpy array or a Tensor (copied). A list or tuple
            holding tensors is stacked with ops, so a tape records it and gradients flow;
            so is a float Tensor an active tape records (an ``Identity`` or ``Cast`` op, as
            ``jnp.array``; PyTorch's ``torch.tensor`` would detach it silently but for a
            warning). A constant on purpose: ``x.numpy()`` or ``tv.stop_gradient(x)``.
        dtype: optional dtype to convert to.
        name: optional name shown by tapeviz.

    Returns:
        A new ``Tensor``.

    Example:
        >>> import tapeviz as tv
        >>> tv.tensor([[1.0, 2.0]]).shape
        (1, 2)
    """
    if type(data) is list or type(data) is tuple:  # tensors inside are stacked with ops
        out = from_data(data, dtype, "tensor")
        out.name = name
        return out
    if isinstance(data, Tensor) and data.dtype.kind == "f":
        if tracks(data):  # a copy would silently cut the gradient: copy with an op
            same = dtype is None or np.dtype(dtype) == data.dtype
            out = identity(data) if same else cast(data, dtype)
            out.name = name
            return out
    arr = to_array(data, dtype, "tensor")
    if arr is data or isinstance(data, Tensor):
        arr = arr.copy()
    return Tensor(arr, name)


def zeros(shape, dtype="float32") -> Tensor:
    return Tensor(np.zeros(shape, dtype))


def ones(shape, dtype="float32") -> Tensor:
    return Tensor(np.ones(shape, dtype))


def fill(shape, value, dtype="float32") -> Tensor:
    return Tensor(np.full(shape, value, dtype))


def zeros_like(x) -> Tensor:
    x = as_tensor(x, "zeros_like")
    return Tensor(np.zeros(x.shape, x.dtype))


def ones_like(x) -> Tensor:
    x = as_tensor(x, "ones_like")
    return Tensor(np.ones(x.shape, x.dtype))


def arange(start, stop=None, step=1, dtype="float32") -> Tensor:
    return Tensor(
        np.arange(start, stop, step, dtype=dtype)
        if stop is not None
        else np.arange(start, dtype=dtype)
    )


def linspace(start, stop, num=50, dtype=None, *, endpoint=True, retstep=False, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (float32 unless ``dtype``).

    With a tensor endpoint it is differentiable, in the endpoints' dtype unless ``dtype`` is
    given (numpy's ``np.linspace`` on tensors runs this too): see ``linspace_tensors``.
    """
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        return linspace_tensors(start, stop, num, endpoint, retstep, dtype, axis)
    dtype = "float32" if dtype is None else dtype
    out = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    return (Tensor(out[0]), out[1]) if retstep else Tensor(out)


def linspace_tensors(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``numpy.linspace`` with tensor endpoints (scalars or arrays, broadcast; the new axis
    at ``axis``), differentiable as autograd's: ``d/dstart = 1 - t``, ``d/dstop = t`` for
    ``t = i / (num - 1)`` (``i / num`` without the endpoint). numpy's formula: ``i * step +
    start`` with ``step = (stop - start) / div``, the last value ``stop`` itself. (numpy
    switches to ``i / div * delta`` where a step underflows to exactly 0; not here.)"""
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    start, stop = binary_args(start, stop, "linspace")
    if start.dtype.kind != "f":
        start, stop = cast(start, np.float64), cast(stop, np.float64)
    dt = start.dtype
    nd = max(start.ndim, stop.ndim)
    delta = stop - start
    steps = Tensor(np.arange(num, dtype=dt).reshape((-1,) + (1,) * nd))
    n_div = (num - 1) if endpoint else num
    if n_div > 0:
        step = div(delta, n_div)
        y = steps * step + start
    else:
        step = Tensor(np.full(delta.shape, np.nan, dt))
        y = steps * delta + start
    if endpoint and num > 1:
        last = np.zeros((num,) + (1,) * nd, bool)
        last[-1] = True
        y = where(Tensor(last), stop, y)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind in "iu":
            y = floor(y)
        y = cast(y, dtype)
    return (y, step) if retstep else y


def random_normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None) -> Tensor:
    def draw():
        rng = np.random.default_rng(seed)
        return (rng.standard_normal(shape) * stddev + mean).astype(dtype)

    return drawn(draw)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype="float32", seed=None) -> Tensor:
    def draw():
        return np.random.default_rng(seed).uniform(minval, maxval, shape).astype(dtype)

    return drawn(draw)
