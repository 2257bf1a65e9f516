"""numpy kernel makers for the elementwise_math family (its table is
``core/gradients/elementwise_math.py``): hyperbolic and inverse trig functions, exp/log variants, rounding, and the
binary ``arctan2``, ``logaddexp``, ``logaddexp2``, ``hypot``, ``mod``, ``floor_divide`` and the
bitwise ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` (numpy broadcasting)."""

from __future__ import annotations

import numpy as np


def unary(fn):
    # asarray: a 0-d input gives a numpy scalar; the kernel returns arrays of the input dtype
    return lambda i, a: np.asarray(fn(i["x"])).astype(i["x"].dtype, copy=False)


def binary(fn):
    return lambda i, a: np.asarray(fn(i["a"], i["b"]))


def round_(i, a):
    return np.asarray(np.round(i["x"], a.get("decimals", 0)))
