"""Issue 33 item 10, as shown: a report whose elements no finite difference can judge is
drawn NOT CHECKABLE (grey, with the reason), never a green PASS or a red FAIL."""

from __future__ import annotations

import numpy as np

import tapeviz as tv
from tapeviz.present.reports import gradcheck_html


def test_not_checkable_is_its_own_word_with_the_reason():
    report = tv.check_grads(lambda x: tv.sum(1e16 + 0.01 * x**2), np.array([0.3, -1.2]))
    assert report.outcome == "not checkable"
    html = gradcheck_html(report)
    assert ">NOT CHECKABLE<" in html and ">PASS<" not in html and ">FAIL<" not in html
    assert "not checkable at this step" in html


def test_pass_and_fail_are_unchanged():
    assert ">PASS<" in gradcheck_html(tv.check_grads(tv.tanh, np.array([0.3, -1.2])))
    with tv.gradient_override("Tanh", lambda dy, saved, attrs: {"x": lambda: dy * 1.5}):
        wrong = tv.check_grads(tv.tanh, np.array([0.3, -1.2]), raise_on_failure=False)
    assert ">FAIL<" in gradcheck_html(wrong)


def test_the_gradcheck_widget_says_not_checkable():
    w = tv.GradCheckWidget(lambda x: tv.sum(1e16 + 0.01 * x**2), [0.3, -1.2])
    assert w.error is None and "NOT CHECKABLE" in w.badge.value
    assert "not checkable at this step" in w.failure_class
