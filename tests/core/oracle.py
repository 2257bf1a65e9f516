"""An independent oracle for tapeviz's gradients: HIPS ``autograd``.

Every ``OracleCase`` is one function written twice, with tapeviz ops (``tv_fn``) and with
``autograd.numpy`` (``ag_fn``). ``check_case`` runs it on one backend and dtype and compares
with autograd, which shares no code with tapeviz:

- the forward value (same shape, the run's dtype, NaN where NaN, the same infinities);
- the gradient of ``sum(f(*args) * w)`` for a fixed random ``w`` w.r.t. each argnum;
- when ``hvp``: the Hessian-vector product, the gradient of ``sum_i <grad_i, v_i>`` w.r.t. each
  argnum for fixed random ``v_i`` (tapeviz: a tape over the gradient's own ops).

float32 runs round the arguments to float32 first and give autograd the rounded point (in
float64), so both sides differentiate the same function at the same point; tolerances are
loose there. Cases live in ``tests/core/oracle_cases_*.py`` (each a list ``CASES``).
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import autograd
import autograd.numpy as anp
import numpy as np

import tapeviz.core as core

BACKENDS = ("numpy", "numba")
DTYPES = (np.float64, np.float32)
# rtol, atol (atol scaled by the largest finite magnitude of the oracle's answer)
TOLERANCE = {np.float64: (1e-7, 1e-9), np.float32: (2e-3, 2e-4)}


@dataclass(frozen=True)
class OracleCase:
    """One function checked against autograd (see the module docstring).

    ``expect``, when given, replaces autograd's *gradient*: ``expect(w, *args)`` returns one
    array per argnum, the gradient of ``sum(f(*args) * w)`` that tapeviz deliberately gives
    (``note`` says what differs and why; the forward value is still autograd's, and ``hvp``
    must be False).
    """

    id: str  # unique, e.g. "tanh[2,3]" or "prod[zero]"
    kernels: tuple[str, ...]  # registered kernel names this case exercises
    tv_fn: Callable  # (*tv tensors) -> tv tensor, written with tapeviz ops
    ag_fn: Callable  # (*numpy arrays) -> array, written with autograd.numpy
    args: tuple  # float64 numpy arrays
    argnums: tuple[int, ...] = (0,)  # which args are differentiated
    hvp: bool = True  # also compare a Hessian-vector product (smooth points only)
    float32: bool = True  # also run in float32 with loose tolerances
    note: str = ""  # where tapeviz deliberately differs from the oracle: what and why
    expect: Callable | None = None  # optional override of the oracle's gradient (with note)


def _rng(case: OracleCase, salt: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32((case.id + salt).encode()))


def _point(case: OracleCase, dtype) -> list[np.ndarray]:
    """The case's arguments rounded to ``dtype``."""
    return [np.asarray(a).astype(dtype) for a in case.args]


def _weights(case: OracleCase, out_shape, arg_shapes):
    """The fixed ``w`` (output-shaped) and ``v`` (one per argnum) of a case."""
    w = _rng(case, "w").uniform(0.5, 1.5, out_shape)
    vs = [_rng(case, f"v{i}").uniform(-1, 1, arg_shapes[i]) for i in case.argnums]
    return w, vs


@dataclass
class Answer:
    value: np.ndarray
    grads: list
    hvps: list | None


_ORACLE_CACHE: dict = {}  # (case id, dtype) -> Answer: one autograd run serves both backends


def oracle_answer(case: OracleCase, dtype) -> Answer:
    """autograd's value, gradient and HVP at the case's point rounded to ``dtype``."""
    key = (case.id, np.dtype(dtype))
    if key not in _ORACLE_CACHE:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            # autograd warns when a gradient is identically zero (stop_gradient, sign)
            warnings.filterwarnings("ignore", "Output seems independent", UserWarning)
            _ORACLE_CACHE[key] = _oracle_answer(case, dtype)
    return _ORACLE_CACHE[key]


def _oracle_answer(case: OracleCase, dtype) -> Answer:
    args = [a.astype(np.float64) for a in _point(case, dtype)]
    value = np.asarray(case.ag_fn(*args))
    w, vs = _weights(case, value.shape, [a.shape for a in args])

    def loss(*a):
        return anp.sum(case.ag_fn(*a) * w)

    if case.expect is not None:
        if case.hvp:
            raise ValueError(f"oracle case {case.id!r}: expect= needs hvp=False")
        grads = [np.asarray(g, np.float64) for g in case.expect(w, *args)]
        return Answer(value, grads, None)
    grads = [np.asarray(autograd.grad(loss, i)(*args)) for i in case.argnums]
    hvps = None
    if case.hvp:

        def inner(*a):
            return sum(anp.sum(autograd.grad(loss, i)(*a) * v) for i, v in zip(case.argnums, vs))

        hvps = [np.asarray(autograd.grad(inner, i)(*args)) for i in case.argnums]
    return Answer(value, grads, hvps)


def tapeviz_answer(case: OracleCase, backend: str, dtype) -> Answer:
    """tapeviz's value, gradient and HVP on ``backend`` at the case's point in ``dtype``."""
    args = _point(case, dtype)
    xs = [core.tensor(a) for a in args]
    sources = [xs[i] for i in case.argnums]
    with core.backend(backend), core.Tape(persistent=True) as outer:
        outer.watch(*sources)
        with core.Tape() as inner:
            inner.watch(*sources)
            y = case.tv_fn(*xs)
            w, vs = _weights(case, y.shape, [a.shape for a in args])
            loss = core.sum(y * core.tensor(w.astype(dtype)))
        grads = inner.gradient(loss, sources, unconnected_gradients="zero")
        hvps = None
        if case.hvp:
            total = core.tensor(np.zeros((), dtype))
            for g, v in zip(grads, vs):
                total = total + core.sum(g * core.tensor(v.astype(dtype)))
            hvps = outer.gradient(total, sources, unconnected_gradients="zero")
            hvps = [h.numpy() for h in hvps]
    return Answer(y.numpy(), [g.numpy() for g in grads], hvps)


def _compare(what: str, got, want, dtype) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, oracle {want.shape}"
    assert got.dtype == np.dtype(dtype), f"{what}: dtype {got.dtype}, expected {np.dtype(dtype)}"
    rtol, atol = TOLERANCE[dtype]
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(
        got.astype(np.float64), want, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=what
    )


def check_case(case: OracleCase, backend: str, dtype) -> None:
    """Assert tapeviz agrees with the oracle on ``backend`` in ``dtype`` (names what differs)."""
    want = oracle_answer(case, dtype)
    with np.errstate(all="ignore"):
        got = tapeviz_answer(case, backend, dtype)
    where = f"{case.id} on {backend}, {np.dtype(dtype)}"
    _compare(f"{where}: forward value", got.value, want.value, dtype)
    for i, g, gw in zip(case.argnums, got.grads, want.grads):
        _compare(f"{where}: gradient w.r.t. argument {i}", g, gw, dtype)
    if case.hvp:
        for i, h, hw in zip(case.argnums, got.hvps, want.hvps):
            _compare(f"{where}: Hessian-vector product w.r.t. argument {i}", h, hw, dtype)
