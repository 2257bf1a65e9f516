"""Issue 35, item 5: a failed gradient check names the mistake when a pattern fits (the sign,
a factor, an offset, a branch, the gradient at -x, a transpose, NaN), in check_grads, audit
and the gradient-check widget alike; "value mismatch" only when none fits; and no pattern
sentence ever for a right gradient. Each pattern is planted as a custom_grad mistake."""

from __future__ import annotations

import html

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.check.mistakes import MISTAKES

X = np.array([0.5, -1.0, 2.0, -0.3, 1.2])
C = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 4.0], [2.5, 1.5, -0.5]])


def _op(forward, grad):
    """A one-input custom_grad op: ``forward(x)`` with the (planted) gradient ``grad(dy, x)``."""

    @tv.custom_grad
    def op(x, save):
        save([x])
        return forward(x), lambda dy, saved: grad(dy, saved[0])

    return op


def _log_sigmoid(wrong):
    sign = 1.0 if wrong else -1.0  # the user's bug: σ(z) written for σ(-z)
    return _op(lambda z: tv.log(tv.sigmoid(z)), lambda dy, z: dy * tv.sigmoid(sign * z))


# name -> (op, input, the sentence's start); each a mistake a student makes
PLANTED = {
    "sign": (_op(tv.tanh, lambda dy, x: -dy * (1 - tv.tanh(x) ** 2)), X, MISTAKES["sign"]),
    "factor": (
        _op(tv.sin, lambda dy, x: dy * tv.cos(x) * 2.0),
        X,
        MISTAKES["factor"].format(k=2.0),
    ),
    "offset": (
        _op(tv.sin, lambda dy, x: dy * (tv.cos(x) + 0.5)),
        X,
        MISTAKES["offset"].format(c=0.5),
    ),
    "where": (
        _op(lambda x: tv.where(x > 0, x * x, -x), lambda dy, x: dy * 2.0 * x),
        X,
        MISTAKES["where"].format(cond="x < 0", n=2, size=5),
    ),
    "minus x": (_log_sigmoid(wrong=True), X, MISTAKES["minus x"]),
    "transposed": (
        _op(lambda x: tv.sum(x * C), lambda dy, x: dy * tv.tensor(C.T)),
        np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]),
        MISTAKES["transposed"],
    ),
    "not finite": (
        _op(tv.exp, lambda dy, x: dy * tv.exp(x) * tv.sqrt(x - 10.0)),
        X,
        MISTAKES["not finite"].format(n=5, size=5),
    ),
}


def _total(op):
    return lambda x: tv.sum(op(x))


@pytest.mark.parametrize("name", list(PLANTED))
def test_check_grads_and_audit_name_each_planted_mistake(name):
    op, x, sentence = PLANTED[name]
    with np.errstate(all="ignore"):
        report = tv.check_grads(_total(op), x, forward=False, raise_on_failure=False)
    assert not report.passed and report.failure == "value mismatch"  # the class is kept
    assert report.verdicts == [sentence], str(report)
    assert f"FAIL: {sentence}" in str(report) and "value mismatch" not in str(report)
    assert html.escape(sentence) in report._repr_html_()
    t = tv.tensor(x, dtype="float64")
    with tv.Tape(persistent=True) as tape, np.errstate(all="ignore"):
        tape.watch(t)
        tv.sum(op(t))
    found = tv.audit(tape)
    (node,) = found.failures
    assert sentence in node.line() and "value mismatch" not in found.summary(), found.summary()


@pytest.mark.parametrize("name", ["sign", "factor", "minus x", "where"])
def test_the_widget_says_the_same_sentence(name):
    op, x, sentence = PLANTED[name]
    w = tv.GradCheckWidget(_total(op), x)
    assert not w.passed and w.failure_class == sentence


def test_a_mismatch_no_pattern_fits_stays_a_value_mismatch():
    # 1/(1+|x|) for softsign's 1/(1+|x|)²: not a sign, factor, offset, branch, -x, transpose
    wrong = _op(lambda x: x / (1 + tv.abs(x)), lambda dy, x: dy / (1 + tv.abs(x)))
    report = tv.check_grads(_total(wrong), X, forward=False, raise_on_failure=False)
    assert report.verdicts == ["value mismatch"], str(report)
    assert not any(s.split(":")[0] in str(report) for s in MISTAKES.values())
    w = tv.GradCheckWidget(_total(wrong), X)
    assert w.failure_class.startswith("value mismatch")


RIGHT = {
    "log_sigmoid": _total(_log_sigmoid(wrong=False)),
    "tanh": lambda x: tv.sum(tv.tanh(x)),
    "sigmoid": lambda x: tv.sum(tv.sigmoid(x) * x),
    "exp": lambda x: tv.sum(tv.exp(x)),
    "sin": lambda x: tv.sum(tv.sin(x) * tv.cos(x)),
    "square": lambda x: tv.sum(x * x),
    "relu": lambda x: tv.sum(tv.relu(x) * x),
    "abs": lambda x: tv.sum(tv.abs(x)),
    "softplus": lambda x: tv.sum(tv.log(1 + tv.exp(x))),
    "softmax": lambda x: tv.sum(tv.softmax(x) * tv.arange(5.0)),
    "mean": lambda x: tv.mean(x * x * x),
    "max": lambda x: tv.max(x * 2.0),
    "matmul": lambda x: tv.sum(tv.matmul(tv.reshape(x[:4], (2, 2)), tv.tensor(C[:2, :2]))),
    "cube_even": lambda x: tv.sum(tv.cos(x) + x**3),  # even and odd parts: f'(-x) differs
}


@pytest.mark.parametrize("name", list(RIGHT))
def test_a_right_gradient_gets_no_pattern_sentence(name):
    report = tv.check_grads(RIGHT[name], X, raise_on_failure=False)
    assert report.passed and report.verdicts == [], str(report)
    text = str(report) + report._repr_html_()
    assert not any(s.split(":")[0] in text for s in MISTAKES.values())
    assert all(c.pattern == "" and c.verdict == "" for c in report.checks)
    t = tv.tensor(X, dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch(t)
        RIGHT[name](t)
    found = tv.audit(tape, mode="full")
    assert found.passed, found.summary()
    assert not any(c.pattern for n in found.nodes for c in n.report.checks)
