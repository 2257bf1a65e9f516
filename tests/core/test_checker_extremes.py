"""Issue 33 item 10: ``check_grads`` reported "FAIL ... Confirmed" for exact gradients where f
changes on a scale below its 1e-6 step (the Hessian of ``linalg.norm`` at [1e-9, 2e-9],
``arctan2(y, 1e-8)``) or its value is huge next to its change (``sum(1e10 + 0.01 x²)``); its
confirmation only tried equal or larger steps and never estimated rounding. PyTorch agrees
with tapeviz's gradients there. Both directions are tested: at the same extreme scales an
exact gradient is never called wrong (PASS, or "not checkable at this step" where no step
can judge it), and a planted wrong gradient is still a FAIL wherever a step can judge it.

Threat model (what a user's function can do to a finite difference): change on a scale far
below eps (tiny inputs, steep functions), carry a value far above its change (a large
constant, an offset), saturate at large steps (tanh, arctan2: D ~ 1/h there), lose the
difference to rounding at small steps, or be smooth where one step sees a kink. Each case
below is one of these; each planted defect (a wrong factor, a first-order-only gradient) is
checked to be caught at that scale."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import tapeviz as tv
from tapeviz.core.registry import kernel_names as K

F64 = "float64"

# name: (tapeviz f, torch f, args, order, kernel to plant a wrong gradient in)
CASES = {
    "norm_hessian_1e-9": (lambda x: np.linalg.norm(x), lambda x: torch.linalg.norm(x),
                          [np.array([1e-9, 2e-9])], 2, K.SQRT),
    "arctan2_y_over_1e-8": (lambda y: tv.arctan2(y, tv.tensor(1e-8, dtype=F64)),
                            lambda y: torch.atan2(y, torch.tensor(1e-8, dtype=torch.float64)),
                            [np.array([0.3e-8, -2e-8, 5e-9])], 1, K.ATAN2),
    "huge_value_1e10": (lambda x: tv.sum(1e10 + 0.01 * x**2),
                        lambda x: torch.sum(1e10 + 0.01 * x**2),
                        [np.array([0.3, -1.2, 2.0])], 1, K.POW),
    "tanh_scale_1e-10": (lambda x: tv.sum(tv.tanh(x * 1e10)), lambda x: torch.sum(torch.tanh(x * 1e10)),
                         [np.array([0.5e-10, -2e-10, 1e-11])], 1, K.TANH),
    "sin_offset_1e12": (lambda x: tv.sum(tv.sin(x) + 1e12), lambda x: torch.sum(torch.sin(x) + 1e12),
                        [np.array([0.2, 1.1])], 1, K.SIN),
}  # fmt: skip


def _torch_reference(fn, args, order):
    xs = [torch.tensor(a, requires_grad=True) for a in args]
    if order == 2:
        return [torch.autograd.functional.hessian(fn, xs[0]).numpy()]
    y = fn(*xs)
    y = y if y.ndim == 0 else y.sum()
    return [g.numpy() for g in torch.autograd.grad(y, xs)]


def _tv_reference(fn, args, order):
    xs = [tv.tensor(a) for a in args]
    if order == 2:
        return [tv.hessian(lambda x: tv.sum(fn(x)))(xs[0]).numpy()]
    with tv.Tape() as tape:
        tape.watch(xs)
        y = tv.sum(fn(*xs))
    return [g.numpy() for g in tape.gradient(y, xs)]


@pytest.mark.parametrize("name", CASES)
def test_tapeviz_agrees_with_pytorch_at_the_extreme_scale(name):
    fn, tfn, args, order, _ = CASES[name]
    for mine, theirs in zip(_tv_reference(fn, args, order), _torch_reference(tfn, args, order)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", CASES)
def test_an_exact_gradient_at_an_extreme_scale_is_not_called_wrong(name):
    fn, _, args, order, _ = CASES[name]
    report = tv.check_grads(fn, *args, order=order, raise_on_failure=False)
    assert report.outcome != "fail", report.summary()
    assert "Confirmed" not in report.summary()


@pytest.mark.parametrize("name", CASES)
def test_a_wrong_gradient_at_the_same_scale_is_still_caught(name):
    fn, _, args, order, kernel = CASES[name]
    right = tv.get_gradient(kernel)

    def wrong(dy, saved, attrs):  # 1.5 times the right gradient
        return {k: (lambda t=t: t() * 1.5) for k, t in right.grad_fn(dy, saved, attrs).items()}

    with tv.gradient_override(kernel, wrong):
        report = tv.check_grads(fn, *args, order=order, raise_on_failure=False)
    assert report.outcome == "fail", report.summary()
    assert "Confirmed" in report.summary()


def test_a_gradient_right_only_at_first_order_is_caught_at_1e_minus_9():
    """The Hessian of the norm at [1e-9, 2e-9] with sqrt's gradient built on a constant:
    first order exact, second order missing (the defect order 2 exists for)."""

    def first_order_only(dy, saved, attrs):
        (y,) = saved
        return {"x": lambda: dy * tv.stop_gradient(0.5 / y)}

    x = np.array([1e-9, 2e-9])
    with tv.gradient_override(K.SQRT, first_order_only):
        report = tv.check_grads(lambda v: np.linalg.norm(v), x, order=2, raise_on_failure=False)
    assert [c.passed for c in report.checks if c.order == 1 and c.kind != "forward"] == [True]
    assert report.outcome == "fail", report.summary()


def test_where_no_step_can_judge_the_verdict_is_not_checkable_not_fail():
    """sum(1e16 + 0.01 x²): f's rounding (about 4 in 3e16) swamps its change at every step
    up to 1e4; an exact gradient and a slightly wrong one are both not checkable, never
    FAIL and never PASS."""

    def f(x):
        return tv.sum(1e16 + 0.01 * x**2)

    x = np.array([0.3, -1.2, 2.0])
    report = tv.check_grads(f, x, raise_on_failure=True)  # does not raise
    assert report.outcome == "not checkable" and report.passed
    assert re.search(r"NOT CHECKABLE at this step \(no failure found; \d+ element\(s\) no "
                     r"finite difference can judge\)$", report.summary().split("\n")[0])  # fmt: skip
    line = report.checks[0].line()
    assert "not checkable at this step" in line and "Neither pass nor fail" in line
    assert report.to_dict()["outcome"] == "not checkable"
    right = tv.get_gradient(K.POW)

    def slightly_wrong(dy, saved, attrs):
        return {k: (lambda t=t: t() * 1.01) for k, t in right.grad_fn(dy, saved, attrs).items()}

    with tv.gradient_override(K.POW, slightly_wrong):
        wrong = tv.check_grads(f, x, raise_on_failure=False)
    assert wrong.outcome == "not checkable", wrong.summary()


def test_a_smooth_function_at_a_tiny_scale_is_not_called_a_kink():
    """norm at [1e-9, 2e-9] looks like |x| at step 1e-6; the line must not say "kink"
    (and a wrong gradient between the one-sided derivatives must not pass as a kink)."""
    x = np.array([1e-9, 2e-9])
    report = tv.check_grads(lambda v: np.linalg.norm(v), x, raise_on_failure=False)
    assert report.outcome == "pass" and "kink" not in report.summary(), report.summary()
    right = tv.get_gradient(K.SQRT)

    def wrong(dy, saved, attrs):  # 1.2 times: between the one-sided derivatives at 1e-6
        return {k: (lambda t=t: t() * 1.2) for k, t in right.grad_fn(dy, saved, attrs).items()}

    with tv.gradient_override(K.SQRT, wrong):
        report = tv.check_grads(lambda v: np.linalg.norm(v), x, raise_on_failure=False)
    assert report.outcome == "fail", report.summary()


def test_a_real_kink_is_still_accepted():
    report = tv.check_grads(lambda v: tv.sum(tv.relu(v) + tv.abs(v)), np.array([0.0, 1.0, -2.0]))
    assert report.outcome == "pass" and "kink" in report.summary()
