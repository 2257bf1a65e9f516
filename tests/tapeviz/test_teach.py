"""The grader: placeholders and wrong answers get "not yet: …", right ones "correct"."""

from __future__ import annotations

import numpy as np
import pytest

from tapeviz.teach import check, exercise_names


def test_placeholder_wrong_and_right():
    assert not check("02.sigmoid-slope", ...)
    assert "replace the ..." in repr(check("02.sigmoid-slope", ...))
    assert "too large" in check("02.sigmoid-slope", 0.5).message
    assert check("02.sigmoid-slope", 0.25).correct
    assert not check("00.L=d*f", d_grad=2.0, f_grad=4.0)  # d_grad has the wrong sign
    assert check("00.L=d*f", d_grad=-2.0, f_grad=4.0)


def test_keyword_answers_and_shapes():
    assert "pass f_grad" in check("00.L=d*f", d_grad=-2.0).message
    M = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert "shape" in check("02.sum(Mv)", [9.0], given={"M": M}).message
    assert "2 of 2 entries" in check("02.sum(Mv)", [1, 1], given={"M": M}).message
    assert check("02.sum(Mv)", [9, 12], given={"M": M})
    assert "expected numbers" in check("02.x*x", "six").message
    assert not check("02.x*x", (3.0, 3.0, 3.0)) and check("02.x*x", (3.0, 3.0, 6.0))


def test_verdicts_display_and_unknown_names():
    html = check("00.b=a+a", a_grad=1.0)._repr_html_()
    assert "not yet" in html and "too small" in html
    assert "correct" in check("00.b=a+a", a_grad=2.0)._repr_html_()
    with pytest.raises(KeyError, match="no exercise 'nope'.*00.L=d\\*f"):
        check("nope", 1)
    assert {"00.L=d*f", "00.d=e+c", "00.e=a*b", "00.b=a+a", "02.two-layer"} <= set(exercise_names())
