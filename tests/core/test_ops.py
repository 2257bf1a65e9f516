"""Every op over the shared case table (tests/core/op_cases.py): forward against numpy
(float64 and float32), gradients by central differences, second order where the case asks
for it. On numpy every case; on numba the cases that run a kernel numba compiles itself
(``op_cases.backends``: from the registry, at collection), with its compiled path for every
size; the others run numpy's very kernel there, which
``test_delegated_cases_run_numpys_kernels_on_numba`` shows for all of them at once."""

from __future__ import annotations

import numpy as np
import op_cases
import pytest

import tapeviz.core as core

CASES = op_cases.CASES


def _params(cases):
    """(case, backend) pairs: each case on the backends ``op_cases.backends`` gives it."""
    return [pytest.param(c, b, id=f"{b}-{c.id}") for c in cases for b in op_cases.backends(c)]


def _tensors(args, dtype=None):
    out = []
    for a in args:
        if dtype is not None and a.dtype.kind == "f":
            a = a.astype(dtype)
        out.append(core.tensor(a))
    return out


@pytest.mark.parametrize("case,backend", _params(CASES))
def test_forward_matches_numpy(case, backend):
    with op_cases.on_backend(backend):
        y = case.fn(*_tensors(case.args))
    expected = np.asarray(case.ref(*case.args))
    assert y.shape == expected.shape, case.id
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-7, atol=1e-12, err_msg=case.id)
    if expected.dtype.kind == "f" and case.args[0].dtype.kind == "f":
        assert y.dtype == np.float64, f"{case.id}: float64 in, {y.dtype} out"


@pytest.mark.parametrize("case,backend", _params(c for c in CASES if c.args[0].dtype.kind == "f"))
def test_float32_stays_float32(case, backend):
    with op_cases.on_backend(backend):
        y = case.fn(*_tensors(case.args, np.float32))
    expected = np.asarray(case.ref(*case.args))
    if expected.dtype.kind == "f" and "cast64" not in case.id and "cast32" not in case.id:
        assert y.dtype == np.float32, f"{case.id}: float32 in, {y.dtype} out"
    np.testing.assert_allclose(y.numpy(), expected, rtol=2e-5, atol=2e-6, err_msg=case.id)


@pytest.mark.parametrize("case,backend", _params(c for c in CASES if c.order >= 1))
def test_gradients(case, backend):
    with op_cases.on_backend(backend):
        report = core.check_grads(case.fn, *case.args, order=1, **case.tol)
    assert report.passed


@pytest.mark.parametrize("case,backend", _params(c for c in CASES if c.order >= 2))
def test_second_order(case, backend):
    with op_cases.on_backend(backend):
        report = core.check_grads(case.fn, *case.args, order=2, **case.tol)
    assert report.passed


def _bits(x):
    return [(t.shape, t.dtype, t.numpy().tobytes()) for t in (x if isinstance(x, list) else [x])]


def test_delegated_cases_run_numpys_kernels_on_numba():
    """The cases left off numba above: there every kernel they run is numpy's own function
    (delegated, so numba adds nothing to check), and the value, the gradient and the
    gradient of the gradient on numba are numpy's bit for bit, recorded as numba's."""
    if "numba" not in core.list_backends():
        pytest.fail("the numba backend is not registered")
    compiled = op_cases.compiled_on_numba()
    left = [c for c in CASES if "numba" not in op_cases.backends(c)]
    assert len(left) > len(CASES) // 2, len(left)  # most cases: a change here is a signal
    wrong = []
    for case in left:
        for name in op_cases.kernels_run(case):
            mine = core.get_kernel(name, "numba")
            if name in compiled or mine.fn is not core.get_kernel(name, "numpy").fn:
                wrong.append((case.id, name))
        answers = {}
        for backend in ("numpy", "numba"):
            with op_cases.on_backend(backend), core.Tape(persistent=True) as tape:
                xs = [core.tensor(a) for a in case.args]
                floats = [x for x in xs if x.dtype.kind == "f"]
                tape.watch(*floats)
                y = case.fn(*xs)
                out = _bits(y)
                if case.order >= 1:
                    dy = core.tensor(np.ones(y.shape, y.dtype))
                    gs = tape.gradient(y, floats, dy, unconnected_gradients="zero")
                    out += _bits(list(gs))
                    vs = [core.tensor(np.ones(g.shape, g.dtype)) for g in gs]
                    out += _bits(list(tape.gradient(list(gs), floats, vs, "zero")))
            assert {n.backend for n in tape.nodes} <= {backend}, case.id
            answers[backend] = out
        if answers["numba"] != answers["numpy"]:
            wrong.append((case.id, "answer"))
    assert not wrong, wrong
