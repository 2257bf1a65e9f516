"""The checkers' arguments, validated before anything is checked.

A mistyped argument must be a ``TypeError`` (or ``ValueError``) naming the function and the
argument, never a verdict on the gradients: ``tv.audit(tape, loss)`` put a Tensor where
``mode`` goes, each node's check then broke on it and every built-in node was reported
"invalid gradient". Every public entry point of the checker (``check_grads``,
``numerical_jacobian``, ``audit``, ``detect_anomaly``, ``GradCheckReport.eps_sweep`` and the
``GradCheckWidget``) runs these first.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "describe",
    "check_callable",
    "check_choice",
    "check_real",
    "check_number",
    "check_flag",
    "check_int",
    "check_seed",
    "check_float_dtype",
    "check_wrt",
]


def describe(value) -> str:
    """A value in a few words, for an error message: its type, and a short form of it."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (numbers.Number, np.generic)):
        kind = "numpy array" if isinstance(value, np.ndarray) else type(value).__name__
        return f"a {kind} of shape {tuple(shape)}"
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_callable(where: str, name: str, value) -> None:
    """``value`` must be callable (the function to check)."""
    if not callable(value):
        raise TypeError(f"{where}: {name} must be a function, got {describe(value)}")


def check_choice(where: str, name: str, value, choices, hint: str = "") -> None:
    """``value`` must be one of ``choices`` (strings, or ints for ``order``)."""
    kinds = {type(c) for c in choices}
    ok_type = _is_int(value) if kinds == {int} else isinstance(value, tuple(kinds))
    allowed = " or ".join(repr(c) for c in choices)
    if not ok_type:
        raise TypeError(f"{where}: {name} must be {allowed}, got {describe(value)}{hint}")
    if value not in choices:
        raise ValueError(f"{where}: {name} must be {allowed}, got {value!r}")


def check_real(where: str, name: str, value) -> float:
    """A finite real number (not a bool, a tensor or a string), as a float."""
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be a number, got {describe(value)}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{where}: {name} must be finite, got {value!r}")
    return float(value)


def check_number(where: str, name: str, value, *, positive: bool, none: bool = True) -> None:
    """A real number (not a bool, a tensor or a string), finite, > 0 if ``positive`` else
    >= 0; None allowed where ``none`` (the default applies)."""
    if value is None and none:
        return
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be a number, got {describe(value)}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        need = "positive" if positive else "non-negative"
        raise ValueError(f"{where}: {name} must be a finite {need} number, got {value!r}")


def check_flag(where: str, name: str, value) -> None:
    """``value`` must be True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be True or False, got {describe(value)}")


def check_int(where: str, name: str, value, minimum: int = 0) -> None:
    """An integer (not a bool) >= ``minimum``."""
    if not _is_int(value):
        raise TypeError(f"{where}: {name} must be an integer, got {describe(value)}")
    if value < minimum:
        raise ValueError(f"{where}: {name} must be at least {minimum}, got {value!r}")


def check_seed(where: str, value) -> None:
    """A seed numpy's ``default_rng`` takes: None, a non-negative int, or a Generator."""
    if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence)):
        return
    check_int(where, "seed", value)


def check_float_dtype(where: str, name: str, value) -> None:
    """None or a floating dtype (``"float64"``, ``np.float32``)."""
    if value is None:
        return
    if not isinstance(value, (str, type, np.dtype)):  # np.dtype(t) reads a tensor's .dtype
        raise TypeError(f"{where}: {name} must be a floating dtype or None, got {describe(value)}")
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"{where}: {name} must be a floating dtype or None, "
                        f"got {describe(value)}") from None  # fmt: skip
    if dt.kind != "f":
        raise TypeError(f"{where}: {name} must be a floating dtype or None, got {dt}")


def check_wrt(where: str, wrt, n_args: int):
    """``wrt``: None, an index, or a list/tuple/set of indices into the ``n_args`` arguments.
    Returns None or the set of indices."""
    if wrt is None:
        return None
    items = [wrt] if _is_int(wrt) else wrt
    if isinstance(items, np.ndarray) and items.ndim == 1 and items.dtype.kind in "iu":
        items = items.tolist()
    if not isinstance(items, (list, tuple, set, frozenset, range)):
        raise TypeError(f"{where}: wrt must be None, an argument index or a list of them, "
                        f"got {describe(wrt)}")  # fmt: skip
    for i in items:
        if not _is_int(i):
            raise TypeError(f"{where}: wrt must hold argument indices (ints), got {describe(i)}")
        if not 0 <= i < n_args:
            raise ValueError(f"{where}: wrt index {i} is out of range: f is given {n_args} "
                             f"argument{'s' if n_args != 1 else ''}")  # fmt: skip
    return {int(i) for i in items}
