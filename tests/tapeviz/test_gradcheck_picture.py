"""Issue 35, item 6: the static gradient-check picture (``GradCheckWidget.png()``, the README's
docs/gradcheck.png) says what the live widget says. For a wrong gradient the eps sweep is flat
and "no step size fixes it": the picture marks no best eps and no rounding region and says the
gradient is wrong; for a right one it keeps the best eps and the reference slopes."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


@tv.custom_grad
def softsign(x, save):  # the README picture's planted bug: the square lost
    save([x])
    return x / (1 + tv.abs(x)), lambda dy, saved: dy / (1 + tv.abs(saved[0]))


def _sweep_axes(widget):
    fig = widget.figure()
    return fig.axes[2]


def _labels(ax):
    return [h.get_label() for h in ax.get_legend().legend_handles] if ax.get_legend() else []


@pytest.mark.parametrize("x", [np.linspace(-3.0, 3.0, 7), np.array([0.4])])
def test_a_wrong_gradient_picture_says_no_eps_fixes_it(x):
    w = tv.GradCheckWidget(softsign, x)
    assert not w.passed and w.sweep.wrong
    assert "no step size fixes it" in w.sweep.verdict  # what the live widget says
    ax = _sweep_axes(w)
    labels, texts = _labels(ax), " ".join(t.get_text() for t in ax.texts)
    assert not any(label.startswith("best eps") for label in labels), labels
    assert not any(label.startswith("slope") for label in labels), labels
    assert "rounding rise" not in texts and not ax.patches  # no rounding region drawn
    assert "no eps fixes it" in texts and "wrong" in ax.get_title()
    assert w.png()[:4] == b"\x89PNG"


def test_a_right_gradient_picture_keeps_the_best_eps_and_slopes():
    w = tv.GradCheckWidget(lambda x: tv.tanh(x) * x, [0.5])
    assert w.passed and not w.sweep.wrong
    labels = _labels(_sweep_axes(w))
    assert any(label.startswith("best eps") for label in labels), labels
    assert any(label.startswith("slope 2") for label in labels), labels
    assert "no eps fixes it" not in " ".join(t.get_text() for t in _sweep_axes(w).texts)
