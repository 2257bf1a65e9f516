"""A failed check of a small Jacobian names its entries, not only dyᵀJ for a random dy."""

from __future__ import annotations

import numpy as np

import tapeviz.core as core


@core.custom_grad
def softsign_missing_square(x, save):
    save([x])
    grad = lambda dy, saved: dy / (1 + core.abs(saved[0]))  # noqa: E731 - should be squared
    return {"value": x / (1 + core.abs(x)), "grad_func": grad}


def test_elementwise_failure_lists_diagonal_entries():
    report = core.check_grads(softsign_missing_square, np.linspace(-3, 3, 7),
                              raise_on_failure=False)  # fmt: skip
    (check,) = [c for c in report.checks if c.kind == "reverse"]
    assert "diagonal Jacobian entries" in check.detail
    assert "∂y[2]/∂x[2]: 0.5 vs 0.25" in check.detail  # x = -1: 1/2 against 1/4
    assert "random dy" in report.summary()


def test_a_matrix_failure_lists_entries_and_a_pass_has_no_note():
    def wrong(dy, saved, attrs):
        (x,) = saved
        return {"x": lambda: dy * x}  # should be dy * 2x

    with core.gradient_override("Square", wrong):
        report = core.check_grads(lambda a: core.square(a) @ a, np.eye(2) + 0.5,
                                  raise_on_failure=False)  # fmt: skip
    (check,) = [c for c in report.checks if c.kind == "reverse"]
    assert "worst Jacobian entries" in check.detail and "∂y[" in check.detail
    ok = core.check_grads(lambda a: core.tanh(a), np.array([0.1, 0.2]))
    assert all(c.detail == "" for c in ok.checks)
