"""User data as numpy arrays: what every tensor is made from (``to_array``), and the
dtypes a tensor may have (``check_dtype``). The bottom layer under ``core.tensors.tensor``."""

from __future__ import annotations

import threading

import numpy as np

from .operators import TensorOperators

__all__ = ["to_array", "check_dtype", "HoldsTensor", "CONVERTING"]

SUPPORTED_KINDS = "fiub"  # float, signed int, unsigned int, bool


def check_dtype(arr: np.ndarray, where: str) -> np.ndarray:
    if arr.dtype.kind not in SUPPORTED_KINDS:
        raise TypeError(
            f"{where}: unsupported dtype {arr.dtype} (expected a float, int or bool array)"
        )
    return arr


def to_array(data, dtype=None, where="tensor") -> np.ndarray:
    """Convert user data: Python floats -> float32, ints -> int32, numpy keeps its dtype;
    with ``dtype`` given, Python numbers go straight to it (``tv.tensor(0.1, dtype="float64")``
    is float64's 0.1, not float32's 0.1 widened)."""
    if isinstance(data, TensorOperators):  # a Tensor (the operators mixin is its base)
        arr = data.numpy()
    elif isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    else:
        try:
            arr = np.asarray(data)
        except (ValueError, TypeError) as e:
            raise TypeError(
                f"{where}: cannot make a tensor from {type(data).__name__}: {e}"
            ) from None
        if dtype is not None and arr.dtype.kind in "fiub":
            pass  # the dtype asked for, converted once below: never through float32/int32
        elif arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            arr = arr.astype(np.int32)
        elif arr.dtype.kind == "O" or arr.dtype.kind in "USV":
            raise TypeError(
                f"{where}: expected numbers (nested lists of float/int/bool or an array), "
                f"got {type(data).__name__} of {arr.dtype}"
            )
    if dtype is not None:
        arr = arr.astype(np.dtype(dtype), copy=False)
    return check_dtype(arr, where)


class HoldsTensor(Exception):
    """``__array__`` ran while ``ops.arguments.from_data`` converted a list of tensors."""


CONVERTING = threading.local()  # on while from_data converts a list (ops/arguments.py)
