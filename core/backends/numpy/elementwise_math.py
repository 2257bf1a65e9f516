"""numpy kernels of the elementwise_math family (its table: ``core/primitives/elementwise_math.py``;
its unary kernels are ``elementwise.same``): the binary ones (``arctan2``, ``logaddexp``,
``hypot``, ``mod``, ..., the bitwise ones; numpy broadcasting) and ``round``."""

from __future__ import annotations

import numpy as np


def binary(fn):
    # asarray: 0-d inputs give a numpy scalar; the kernel returns an array
    return lambda i, a: np.asarray(fn(i["a"], i["b"]))


def round_(i, a):
    return np.asarray(np.round(i["x"], a.get("decimals", 0)))
