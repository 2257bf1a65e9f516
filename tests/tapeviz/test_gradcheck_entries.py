"""The gradient-check table lists Jacobian entries for small functions (not dyᵀJ for a
random dy), and the eps sweep explains a first-order slope at a kink."""

from __future__ import annotations

import numpy as np

import tapeviz as tv


@tv.custom_grad
def softsign_missing_square(x, save):
    save([x])
    grad = lambda dy, saved: dy / (1 + tv.abs(saved[0]))  # noqa: E731 - should be squared
    return {"value": x / (1 + tv.abs(x)), "grad_func": grad}


@tv.custom_grad
def softsign(x, save):
    save([x])
    grad = lambda dy, saved: dy / tv.square(1 + tv.abs(saved[0]))  # noqa: E731
    return {"value": x / (1 + tv.abs(x)), "grad_func": grad}


def test_elementwise_table_shows_the_diagonal_entries():
    w = tv.GradCheckWidget(softsign_missing_square, np.linspace(-3, 3, 7))
    table = w.worst.value
    assert "only its diagonal" in table
    # at x = -3: custom 1/(1+3) = 0.25 against the true 1/(1+3)^2 = 0.0625
    assert "<td>∂y[0]/∂x[0]</td><td>0.25</td><td>0.0625</td>" in table


def test_a_small_full_jacobian_and_a_large_one():
    w = tv.GradCheckWidget(lambda m: tv.sum(m @ m, axis=0), np.arange(4.0).reshape(2, 2))
    assert "entries of the Jacobian, worst first" in w.worst.value
    assert "∂y[1]/∂x[1, 0]" in w.worst.value or "∂y[0]/∂x[1, 0]" in w.worst.value
    big = tv.GradCheckWidget(lambda v: tv.tanh(v), np.linspace(-1, 1, 20))  # 400 entries
    assert "random dy" in big.worst.value


def test_the_sweep_explains_slope_one_at_a_kink():
    at_zero = tv.GradCheckWidget(softsign, np.linspace(-3, 3, 7))  # 0 is one of the points
    assert at_zero.passed and "healthy" in at_zero.sweep.verdict
    assert 0.5 < at_zero.sweep.slope_truncation < 1.5
    assert "not smooth at this point" in at_zero.sweep.verdict
    away = tv.GradCheckWidget(softsign, np.linspace(-3, 3, 6))  # no point at 0
    assert "not smooth" not in away.sweep.verdict
