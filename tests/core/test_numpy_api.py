"""The numpy surface of issue 13 against HIPS autograd: every case of oracle_cases_numpy and oracle_cases_linalg on
every backend (forward, gradient of sum(f * w), Hessian-vector product; float32 loosely).

A minimal harness in the shared OracleCase format until tests/core/oracle.py is merged.
"""

from __future__ import annotations

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracle_cases_linalg import CASES as LINALG_CASES
from oracle_cases_numpy import CASES as NUMPY_CASES

import core as tv
from core import kernel_names as K

CASES = NUMPY_CASES + LINALG_CASES
BACKENDS = [b for b in ("numpy", "numba") if b in tv.list_backends()]
TOL64 = {"rtol": 1e-6, "atol": 1e-9}
TOL32 = {"rtol": 2e-3, "atol": 2e-4}


def _rng(text):
    return np.random.default_rng(sum(ord(c) * (i + 1) for i, c in enumerate(text)) % 2**31)


def _tv_grad_hvp(case, args, k, w, v, hvp):
    """tapeviz: gradient of sum(f * w) w.r.t. args[k], and its product with the Hessian."""

    def fw(x):
        xs = [tv.tensor(a) for a in args]
        xs[k] = x
        return tv.sum(case.tv_fn(*xs) * tv.tensor(w.astype(args[k].dtype)))

    x = tv.tensor(args[k])
    g = tv.grad(fw)(x)
    h = None
    if hvp:
        h = tv.grad(lambda x: tv.sum(tv.grad(fw)(x) * tv.tensor(v.astype(args[k].dtype))))(x)
    return g.numpy(), None if h is None else h.numpy()


def _ag_grad_hvp(case, args, k, w, v, hvp):
    fw = lambda *xs: anp.sum(case.ag_fn(*xs) * w)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # autograd warns when an output is constant
        g = autograd.grad(fw, k)(*args)
        h = (
            autograd.grad(lambda *xs: anp.sum(autograd.grad(fw, k)(*xs) * v), k)(*args)
            if hvp
            else None
        )
    return np.asarray(g), h


def check_case(case, backend, dtype=np.float64):
    """Forward, gradient and HVP of ``case`` on ``backend`` against the oracle; raises
    AssertionError naming the case and what differs."""
    tol = TOL64 if dtype == np.float64 else TOL32
    args = tuple(np.asarray(a, np.float64).astype(dtype) for a in case.args)
    args64 = tuple(a.astype(np.float64) for a in args)  # the oracle's gradients: float64
    with np.errstate(all="ignore"), tv.backend(backend):
        want = np.asarray(case.ag_fn(*args))
        got = case.tv_fn(*[tv.tensor(a) for a in args]).numpy()
        np.testing.assert_allclose(got, want, **tol, err_msg=f"{case.id}: forward")
        rng = _rng(case.id)
        w = rng.standard_normal(want.shape)
        expected = case.expect(w, *args64) if case.expect is not None else None
        for i, k in enumerate(case.argnums):
            v = rng.standard_normal(args64[k].shape)
            hvp = case.hvp and dtype == np.float64
            g, h = _tv_grad_hvp(case, args, k, w, v, hvp)
            if expected is None:
                g_ref, h_ref = _ag_grad_hvp(case, args64, k, w, v, hvp)
            else:  # the case's own reference (its note says why)
                g_ref, h_ref = expected[i], None
            np.testing.assert_allclose(g, g_ref, **tol, err_msg=f"{case.id}: gradient wrt {k}")
            if h_ref is not None:
                np.testing.assert_allclose(h, h_ref, rtol=1e-5, atol=1e-8,
                                           err_msg=f"{case.id}: Hessian-vector product wrt {k}")  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_oracle(case, backend):
    check_case(case, backend)
    if case.float32:
        check_case(case, backend, np.float32)


def test_case_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]


NEW_KERNELS = [
    K.SINH, K.COSH, K.ASIN, K.ACOS, K.ATAN, K.ASINH, K.ACOSH, K.ATANH, K.EXPM1, K.LOG2,
    K.LOG10, K.SINC, K.FLOOR, K.CEIL, K.ROUND, K.ATAN2, K.LOG_ADD_EXP, K.LOG_ADD_EXP2, K.HYPOT,
    K.MOD, K.CUMSUM, K.CUMPROD, K.EINSUM, K.MATRIX_INVERSE, K.MATRIX_DETERMINANT,
    K.LOG_MATRIX_DETERMINANT, K.MATRIX_SOLVE, K.CHOLESKY, K.SELF_ADJOINT_EIG, K.SVD, K.PINV, K.QR,
]  # fmt: skip


def test_every_new_kernel_has_a_case_a_gradient_and_both_backends():
    covered = {k for c in CASES for k in c.kernels}
    assert [k for k in NEW_KERNELS if k not in covered] == []
    for k in NEW_KERNELS:
        assert tv.get_gradient(k) is not None, k
        for b in BACKENDS:
            assert tv.get_kernel(k, b) is not None, (k, b)


def test_the_harness_catches_a_wrong_gradient():
    case = next(c for c in CASES if c.id == "sinh[2,3]")
    wrong = lambda dy, saved, attrs: {"x": lambda: dy * tv.sinh(saved[0])}  # noqa: E731
    with tv.gradient_override(K.SINH, wrong), pytest.raises(AssertionError, match="gradient"):
        check_case(case, "numpy")


def test_the_harness_catches_a_wrong_hessian():
    case = next(c for c in CASES if c.id == "arctan[2,3]")
    # right first derivative, wrong second: the gradient's own gradient is cut
    wrong = lambda dy, saved, attrs: {  # noqa: E731
        "x": lambda: dy / tv.stop_gradient(saved[0] * saved[0] + 1)
    }
    with tv.gradient_override(K.ATAN, wrong), pytest.raises(AssertionError, match="Hessian"):
        check_case(case, "numpy")
