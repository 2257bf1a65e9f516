"""Issue 33 items 11 and 13 in the GradCheckWidget: a mistyped constructor argument is a
TypeError/ValueError naming the widget and the argument, raised at once (a Tensor eps was
used silently, ``arg="x"`` and ``x_range=(3,)`` showed Python's own words in the badge, an eps
outside the slider's range was clamped without a word); an argument that is not checked (a
tuple of einsum subscripts) reaches f as given."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


def _tanh_x(x):
    return tv.tanh(x) * x


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [({"eps": tv.tensor(1e-3)}, TypeError, "eps"), ({"eps": "1e-3"}, TypeError, "eps"),
     ({"eps": 1.0}, ValueError, "eps"), ({"eps": -1e-6}, ValueError, "eps"),
     ({"arg": "x"}, TypeError, "arg"), ({"arg": True}, TypeError, "arg"),
     ({"atol": "1e-3"}, TypeError, "atol"), ({"rtol": tv.tensor(1.0)}, TypeError, "rtol"),
     ({"x_range": (3,)}, TypeError, "x_range"), ({"x_range": ("a", 1)}, TypeError, "x_range"),
     ({"x_range": (2.0, 1.0)}, ValueError, "x_range")],
)  # fmt: skip
def test_a_mistyped_constructor_argument_names_itself(kwargs, error, name):
    with pytest.raises(error, match=rf"^GradCheckWidget: {name} "):
        tv.GradCheckWidget(_tanh_x, [0.5, -1.0], **kwargs)


def test_f_not_callable_names_f():
    with pytest.raises(TypeError, match="^GradCheckWidget: f must be a function"):
        tv.GradCheckWidget([0.5], _tanh_x)


def test_a_tuple_argument_reaches_f_as_given():
    seen = []

    def f(x, subscripts):
        seen.append(subscripts)
        return np.einsum(x, subscripts, (1, 0)) * 2.0

    w = tv.GradCheckWidget(f, np.ones((2, 3)), (0, 1))
    assert w.error is None and w.passed, w.badge.value
    assert seen and all(s == (0, 1) and type(s) is tuple for s in seen)
