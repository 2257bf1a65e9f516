"""numba: runs of elementwise arithmetic fuse into one compiled loop when that measures
faster, giving the separate kernels' results bit for bit (special values too, except the
sign of a NaN, which IEEE leaves open and compilers may take from either operand), and the
decision is written into the code show_code shows."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as tv

pytest.importorskip("numba")
from tapeviz.core.jit import fusion  # noqa: E402


def _arith(a, b, c):
    y = (a * b + c) * 0.5 - a
    return tv.sum(tv.tanh(y) * y / b - tv.square(c) + tv.abs(a))


def _bits(t) -> bytes:
    """The value's bytes with every NaN made one NaN (its sign is not specified)."""
    a = t.numpy().copy()
    a[np.isnan(a)] = np.nan
    return a.tobytes()


def _values(n, dtype, special=False):
    rng = np.random.default_rng(n)
    out = [rng.uniform(0.5, 1.5, n).astype(dtype) for _ in range(3)]
    if special:
        out[0][:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45]
        out[1][:6] = [0.0, 0.0, np.inf, 2.0, 1.0, 1e38]
    return [tv.tensor(x) for x in out]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [8, 1 << 16])
def test_fused_programs_equal_eager_bitwise(dtype, n):
    f = tv.grads(_arith)
    with tv.backend("numba"), np.errstate(all="ignore"):
        jf = tv.jit(f)
        jf(*_values(n, dtype))
        for special in (False, True):
            xs = _values(n, dtype, special)
            got, want = jf(*xs), f(*xs)
            for g, w in zip(got, want):
                assert _bits(g) == _bits(w)
        program = jf.trace(*xs)
    assert any(s.kind == "fused" for s in program.stmts)  # at this size fusion wins here


def test_the_decision_is_measured_and_shown(monkeypatch):
    xs = _values(1 << 12, "float32")
    with tv.backend("numba"):
        code = tv.jit(tv.grads(_arith)).trace(*xs).code
        assert "numba loop fusing" in code and "faster than separate kernels" in code
        fusion._DECIDED.clear()
        monkeypatch.setattr(fusion, "MIN_GAIN", 1e9)  # nothing can win by that much
        program = tv.jit(tv.grads(_arith)).trace(*xs)
    fusion._DECIDED.clear()
    assert not any(s.kind == "fused" for s in program.stmts)
    assert "not fused" in program.code


def test_non_contiguous_inputs_and_numpy_backend_untouched():
    base = np.random.default_rng(3).uniform(0.5, 1.5, (64, 64))
    f = tv.jit(lambda a, b: (a * b + a) / b - b)
    with tv.backend("numba"):
        f(tv.tensor(base), tv.tensor(base))
        a, b = tv.tensor(base).T, tv.tensor(base[::-1])
        got = f(a, b)
        want = (a * b + a) / b - b
    assert got.numpy().tobytes() == want.numpy().tobytes()
    plain = tv.jit(lambda a, b: (a * b + a) / b - b).trace(a, b)
    assert not any(s.kind == "fused" for s in plain.stmts)
