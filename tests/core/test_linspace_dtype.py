"""Issue 33 item 9: ``tv.linspace`` with a tensor endpoint ignored ``dtype=`` (it passed None
on to the tensor path: the result took the endpoints' dtype whatever was asked). Values and
dtypes against numpy's ``np.linspace`` on the same numbers; the float result stays
differentiable."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


@pytest.mark.parametrize("dtype", ["float32", "float64", np.int32, int, "int64"])
@pytest.mark.parametrize("endpoint_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("which", ["start", "stop", "both"])
def test_tensor_endpoint_follows_dtype_like_numpy(dtype, endpoint_dtype, which):
    start, stop = endpoint_dtype(-1.25), endpoint_dtype(7.5)
    a = tv.tensor(start) if which in ("start", "both") else float(start)
    b = tv.tensor(stop) if which in ("stop", "both") else float(stop)
    got = tv.linspace(a, b, 6, dtype=dtype)
    want = np.linspace(start, stop, 6, dtype=dtype)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def test_retstep_and_defaults_unchanged():
    a = tv.tensor(np.float64(1.0))
    y, step = tv.linspace(a, 3.0, 5, dtype="float32", retstep=True)
    want, want_step = np.linspace(1.0, 3.0, 5, dtype="float32", retstep=True)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), want)
    assert float(step) == want_step
    assert tv.linspace(a, 3.0, 5).dtype == np.float64  # no dtype: the endpoints'
    assert tv.linspace(0.0, 1.0, 3).dtype == np.float32  # numbers: tapeviz's float32
    assert tv.linspace(0.0, 1.0, 3, dtype=np.float64).dtype == np.float64


def test_gradient_flows_through_the_requested_float_dtype():
    a, b = tv.tensor(np.float64(0.0)), tv.tensor(np.float64(2.0))
    w = np.arange(1.0, 6.0, dtype=np.float32)
    with tv.Tape() as tape:
        tape.watch([a, b])
        y = tv.linspace(a, b, 5, dtype="float32")
        loss = tv.sum(y * w)
    assert y.dtype == np.float32
    ga, gb = tape.gradient(loss, [a, b])
    t = np.linspace(0.0, 1.0, 5)  # d y_i / d start = 1 - t_i, d y_i / d stop = t_i
    np.testing.assert_allclose(ga.numpy(), np.sum(w * (1 - t)), rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), np.sum(w * t), rtol=1e-6)
