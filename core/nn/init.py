"""Initial weights: the seeded generator layers draw from (``set_seed``; dropout masks draw
from it too) and the named initializers of ``Module.add_weight``."""

from __future__ import annotations

import numpy as np

__all__ = ["set_seed", "generator", "initial_value"]

_RNG = [np.random.default_rng()]


def set_seed(seed: int) -> None:
    """Seed the generator layers draw their initial weights (and dropout masks) from.

    Example:
        >>> import tapeviz as tv
        >>> tv.nn.set_seed(0)
        >>> a = tv.nn.Dense(2)(tv.ones((1, 3))).numpy()
        >>> tv.nn.set_seed(0)
        >>> bool((a == tv.nn.Dense(2)(tv.ones((1, 3))).numpy()).all())
        True
    """
    _RNG[0] = np.random.default_rng(seed)


def generator(seed=None) -> np.random.Generator:
    """The shared generator (``seed=None``), or a fresh one seeded with ``seed``."""
    return _RNG[0] if seed is None else np.random.default_rng(seed)


def initial_value(init, shape: tuple, dtype, rng: np.random.Generator) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` from ``init``: ``"glorot_uniform"``,
    ``"he_normal"``, ``"zeros"``, ``"ones"`` or a function ``(shape, dtype) -> array``."""
    if callable(init):
        return np.asarray(init(shape, dtype), dtype)
    if init == "zeros":
        return np.zeros(shape, dtype)
    if init == "ones":
        return np.ones(shape, dtype)
    fan_in, fan_out = _fans(shape)
    if init == "glorot_uniform":
        limit = np.sqrt(6.0 / max(fan_in + fan_out, 1))
        return rng.uniform(-limit, limit, shape).astype(dtype)
    if init == "he_normal":
        return (rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))).astype(dtype)
    raise ValueError(
        f"add_weight: unknown initializer {init!r} (expected 'glorot_uniform', 'he_normal', "
        "'zeros', 'ones' or a function (shape, dtype) -> array)"
    )


def _fans(shape):
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive
