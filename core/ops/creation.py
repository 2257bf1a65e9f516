"""Tensors made from shapes: zeros, ones, fill, like-forms, ranges and random values."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._util import as_tensor, drawn


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


def linspace(start, stop, num, dtype="float32") -> Tensor:
    return Tensor(np.linspace(start, stop, num, dtype=dtype))


def random_normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None) -> Tensor:
    def draw():
        rng = np.random.default_rng(seed)
        return (rng.standard_normal(shape) * stddev + mean).astype(dtype)

    return drawn(draw)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype="float32", seed=None) -> Tensor:
    def draw():
        return np.random.default_rng(seed).uniform(minval, maxval, shape).astype(dtype)

    return drawn(draw)
