"""Every op over the shared case table (tests/core/op_cases.py), on every backend: forward
against numpy (float64 and float32), gradients by central differences, second order where
the case asks for it."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES

import tapeviz.core as core


def _tensors(args, dtype=None):
    out = []
    for a in args:
        if dtype is not None and a.dtype.kind == "f":
            a = a.astype(dtype)
        out.append(core.tensor(a))
    return out


@pytest.mark.parametrize("backend", core.list_backends())
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_forward_matches_numpy(case, backend):
    with core.backend(backend):
        y = case.fn(*_tensors(case.args))
    expected = np.asarray(case.ref(*case.args))
    assert y.shape == expected.shape, case.id
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-7, atol=1e-12, err_msg=case.id)
    if expected.dtype.kind == "f" and case.args[0].dtype.kind == "f":
        assert y.dtype == np.float64, f"{case.id}: float64 in, {y.dtype} out"


@pytest.mark.parametrize("backend", core.list_backends())
@pytest.mark.parametrize(
    "case", [c for c in CASES if c.args[0].dtype.kind == "f"], ids=lambda c: c.id
)
def test_float32_stays_float32(case, backend):
    with core.backend(backend):
        y = case.fn(*_tensors(case.args, np.float32))
    expected = np.asarray(case.ref(*case.args))
    if expected.dtype.kind == "f" and "cast64" not in case.id and "cast32" not in case.id:
        assert y.dtype == np.float32, f"{case.id}: float32 in, {y.dtype} out"
    np.testing.assert_allclose(y.numpy(), expected, rtol=2e-5, atol=2e-6, err_msg=case.id)


@pytest.mark.parametrize("backend", core.list_backends())
@pytest.mark.parametrize("case", [c for c in CASES if c.order >= 1], ids=lambda c: c.id)
def test_gradients(case, backend):
    with core.backend(backend):
        report = core.check_grads(case.fn, *case.args, order=1, **case.tol)
    assert report.passed


@pytest.mark.parametrize("backend", core.list_backends())
@pytest.mark.parametrize("case", [c for c in CASES if c.order >= 2], ids=lambda c: c.id)
def test_second_order(case, backend):
    with core.backend(backend):
        report = core.check_grads(case.fn, *case.args, order=2, **case.tol)
    assert report.passed
