"""The numpy surface of issue 13: every new kernel has an oracle case (the cases are in
oracle_cases_numpy.py and oracle_cases_linalg.py; tests/core/test_oracle.py runs them against
HIPS autograd on every backend), and the oracle catches a wrong first and second derivative of
the new kernels.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import check_case
from oracle_cases_linalg import CASES as LINALG_CASES
from oracle_cases_numpy import CASES as NUMPY_CASES

import tapeviz.core as tv
from tapeviz.core.registry import kernel_names as K

CASES = NUMPY_CASES + LINALG_CASES
BACKENDS = [b for b in ("numpy", "numba") if b in tv.list_backends()]


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
        check_case(case, "numpy", np.float64)


def test_the_harness_catches_a_wrong_hessian():
    case = next(c for c in CASES if c.id == "arctan[2,3]")
    # right first derivative, wrong second: the gradient's own gradient is cut
    wrong = lambda dy, saved, attrs: {  # noqa: E731
        "x": lambda: dy / tv.stop_gradient(saved[0] * saved[0] + 1)
    }
    with tv.gradient_override(K.ATAN, wrong), pytest.raises(AssertionError, match="Hessian"):
        check_case(case, "numpy", np.float64)
