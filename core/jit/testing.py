"""One call to check a function through ``tv.jit``: for the differential fuzzer and tests.

``assert_jit_matches(fn, *args, reruns=[...])`` traces ``fn`` on ``args``, then runs the
compiled program on ``args`` and on every argument tuple in ``reruns`` (the same shapes and
dtypes, other values: where a stale program would show), and compares each result with
``fn`` run eagerly on the same arguments, bit for bit. A trace that refuses (``JitError``,
e.g. ``ConcretizationError``) is not a failure: it returns the error, so a fuzzer can count
refusals; a result that differs raises ``AssertionError`` naming the leaf and the call.
"""

from __future__ import annotations

import numpy as np

from ..tensors.tensor import Tensor
from .errors import JitError
from .function import jit
from .pytree import flatten_result

__all__ = ["assert_jit_matches"]


def assert_jit_matches(fn, *args, reruns=(), nan_sign: bool = True, static_argnums=()):
    """Compare ``tv.jit(fn)`` with ``fn`` on ``args`` and each tuple of ``reruns``.

    Args:
        fn: the function (called eagerly and compiled with the same arguments).
        *args: the arguments it is traced with.
        reruns: more argument tuples of the same signature, run by the compiled program.
        nan_sign: compare NaN bits too (False: any NaN equals any NaN; a fused numba loop
            may give a NaN the other sign, which IEEE leaves open).
        static_argnums: passed to ``tv.jit``.

    Returns:
        None when every result matched; the ``JitError`` when the trace refused.
    """
    jitted = jit(fn, static_argnums=static_argnums)
    try:
        first = jitted(*args)
    except JitError as e:
        return e
    _compare(first, fn(*args), "the traced call", nan_sign)
    for i, call_args in enumerate([args, *reruns]):
        got = jitted(*call_args)
        _compare(got, fn(*call_args), f"compiled call {i}", nan_sign)
    return None


def _compare(got, want, where: str, nan_sign: bool) -> None:
    a, b = [], []
    sa, sb = flatten_result(got, a), flatten_result(want, b)
    if _shape(sa) != _shape(sb) or len(a) != len(b):
        raise AssertionError(f"tv.jit: {where} returned {sa}, eagerly {sb}")
    for k, (x, y) in enumerate(zip(a, b)):
        x, y = _array(x), _array(y)
        if x.shape != y.shape or x.dtype != y.dtype or _bits(x, nan_sign) != _bits(y, nan_sign):
            raise AssertionError(
                f"tv.jit: {where}, result leaf {k}: {x.dtype}{x.shape} {x!r} differs from "
                f"eager mode's {y.dtype}{y.shape} {y!r}"
            )


def _shape(struct):
    """The structure without the static values (those are compared as leaves are)."""
    if isinstance(struct, tuple) and struct and struct[0] == "S":
        return ("S",)
    if isinstance(struct, tuple):
        return tuple(_shape(s) for s in struct)
    return struct


def _array(x) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _bits(a: np.ndarray, nan_sign: bool) -> bytes:
    if not nan_sign and a.dtype.kind == "f":
        a = a.copy()
        a[np.isnan(a)] = np.nan
    return a.tobytes()
