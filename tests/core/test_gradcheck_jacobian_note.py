"""Small Jacobians are shown in their entries: an elementwise function's check compares the
diagonal ∂y[i]/∂x[i] itself; a failed check of another small Jacobian names its worst entries
beside dyᵀJ for a random dy."""

from __future__ import annotations

import numpy as np

import tapeviz.core as core


@core.custom_grad
def softsign_missing_square(x, save):
    save([x])
    grad = lambda dy, saved: dy / (1 + core.abs(saved[0]))  # noqa: E731 - should be squared
    return {"value": x / (1 + core.abs(x)), "grad_func": grad}


def test_an_elementwise_check_compares_the_diagonal_entries():
    x = np.linspace(-3, 3, 7)
    report = core.check_grads(softsign_missing_square, x, raise_on_failure=False)
    (check,) = [c for c in report.checks if c.arg == 0]
    assert check.kind == "entries" and check.failure == "value mismatch"
    np.testing.assert_allclose(check.analytic, 1 / (1 + np.abs(x)), rtol=1e-12)
    np.testing.assert_allclose(check.numerical, 1 / (1 + np.abs(x)) ** 2, rtol=1e-6)
    assert (check.analytic[2], round(check.numerical[2], 6)) == (0.5, 0.25)  # x = -1
    assert "random dy" not in report.summary().split("jvp")[0]
    ok = core.check_grads(lambda t: core.tanh(t) * t, x)
    assert [c.kind for c in ok.checks if c.arg == 0] == ["entries"]


def test_a_gradient_mixing_elements_is_not_shown_as_entries():
    def mixed(dy, saved, attrs):  # right on the diagonal of dy = ones, wrong for any other dy
        x = saved[0]
        return {"x": lambda: core.flip(dy) * (1 - core.square(core.tanh(x)))}

    with core.gradient_override("Tanh", mixed, inputs_to_save=["x"]):
        report = core.check_grads(core.tanh, np.linspace(-1, 1, 5), raise_on_failure=False)
    (check,) = [c for c in report.checks if c.arg == 0]
    assert check.kind == "reverse" and check.failure == "value mismatch"


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
