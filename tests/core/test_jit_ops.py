"""Every op of the shared case table (tests/core/op_cases.py) through tv.jit, on every
backend: the compiled program, traced on one set of values and run on another, gives
eager mode's result bit for bit, forward and gradient; or the trace refuses with
ConcretizationError (an op whose implementation reads values outside kernels: listed here,
so a new refusal, or a stale result, fails)."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES

import tapeviz.core as tv

# gradients that branch on values in Python (core/primitives): jit refuses them rather than
# compile a stale program. pow: only with a tensor exponent (x ** 2 compiles); prod: always.
REFUSED = {"grad": ("prod",)}


def _refusable(case, kind) -> bool:
    return any(case.id.startswith(name) for name in REFUSED.get(kind, ()))


def _other(args, key):
    """Values of the same shapes and signs, different magnitudes (the same domain)."""
    rng = np.random.default_rng(abs(hash(key)) % 2**31)
    out = []
    for a in args:
        if a.dtype.kind == "f":
            a = a * rng.uniform(0.8, 1.2, a.shape)
        out.append(a)
    return out


def _bits(x):
    leaves = x if isinstance(x, (list, tuple)) else [x]
    return [(t.shape, t.dtype, t.numpy().tobytes()) for t in leaves]


def _scalar(fn):
    def f(*xs):
        out = fn(*xs)
        leaves = out if isinstance(out, (list, tuple)) else [out]
        return sum(tv.sum(t * (i + 1)) for i, t in enumerate(leaves) if t.dtype.kind == "f")

    return f


def _check(fn, case, backend, kind):
    xs = [tv.tensor(a) for a in case.args]
    ys = [tv.tensor(a) for a in _other(case.args, case.id)]
    with tv.backend(backend):
        jf = tv.jit(fn)
        try:
            jf(*xs)
        except tv.ConcretizationError:
            assert _refusable(case, kind), f"{case.id}: refused, but not listed in REFUSED"
            return
        assert not _refusable(case, kind), f"{case.id}: compiles now: drop it from REFUSED"
        got, want = jf(*ys), fn(*ys)
    assert _bits(got) == _bits(want), case.id


@pytest.mark.parametrize("backend", tv.list_backends())
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_forward(case, backend):
    _check(case.fn, case, backend, "forward")


@pytest.mark.parametrize("backend", tv.list_backends())
@pytest.mark.parametrize("case", [c for c in CASES if c.order >= 1], ids=lambda c: c.id)
def test_gradient(case, backend):
    _check(tv.grads(_scalar(case.fn)), case, backend, "grad")
