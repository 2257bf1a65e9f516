"""compare_values: a micrograd-style Value against the engine, node by node; and the
assignments' test helpers (tapeviz.teach.grading), each seen to fail on a wrong gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.teach.compare import compare_values
from tapeviz.teach.grading import (
    attempt,
    derivative,
    expect_close,
    nudged_derivative,
    second_derivative,
)
from tapeviz.teach.patterns import PATTERNS


def make_value(accumulate: bool = True, tanh_slope=lambda t: 1 - t * t):
    """A small micrograd Value; ``accumulate=False`` plants the ``=`` bug."""

    class Value:
        def __init__(self, data, _children=(), _op="", label=""):
            self.data, self.grad, self.label = float(data), 0.0, label
            self._backward, self._prev, self._op = (lambda: None), tuple(_children), _op

        def _send(self, child, share):
            child.grad = child.grad + share if accumulate else share

        def __add__(self, other):
            other = other if isinstance(other, Value) else Value(other)
            out = Value(self.data + other.data, (self, other), "+")
            out._backward = lambda: (self._send(self, out.grad), self._send(other, out.grad))
            return out

        def __mul__(self, other):
            other = other if isinstance(other, Value) else Value(other)
            out = Value(self.data * other.data, (self, other), "*")
            out._backward = lambda: (
                self._send(self, other.data * out.grad),
                self._send(other, self.data * out.grad),
            )
            return out

        __radd__, __rmul__ = __add__, __mul__

        def tanh(self):
            t = math.tanh(self.data)
            out = Value(t, (self,), "tanh")
            out._backward = lambda: self._send(self, tanh_slope(t) * out.grad)
            return out

        def backward(self):
            order, seen = [], set()

            def visit(v):
                if id(v) not in seen:
                    seen.add(id(v))
                    for c in v._prev:
                        visit(c)
                    order.append(v)

            visit(self)
            self.grad = 1.0
            for v in reversed(order):
                v._backward()

    return Value


def neuron(x1, x2, w1, w2, b):
    x1w1 = x1 * w1
    x2w2 = x2 * w2
    n = x1w1 + x2w2 + b
    o = n.tanh()
    return o


INPUTS = dict(x1=2.0, x2=0.0, w1=-3.0, w2=1.0, b=6.8813735870195432)


def test_a_right_value_agrees_node_by_node():
    c = compare_values(neuron, make_value(), **INPUTS)
    assert c.agrees and [r[0] for r in c.rows] == ["x1", "x2", "w1", "w2", "b", "x1w1",
                                                   "x2w2", "n", "o"]  # fmt: skip
    assert "your Value" in c._repr_html_() and "tapeviz's engine" in c._repr_html_()
    assert '"{ x1w1 | data -6 | grad 0.5 }"' in c.yours.to_dot().replace("0.5000", "0.5")
    assert "x1w1" in c.engine.to_dot()


def test_a_wrong_value_is_named_where_and_how():
    wrong = compare_values(neuron, make_value(tanh_slope=lambda t: 1 - t), **INPUTS)
    verdicts = {r[0]: r[-1] for r in wrong.rows}
    assert not wrong.agrees and verdicts["o"] == "agrees"
    assert verdicts["n"] != "agrees" and verdicts["x1"] != "agrees"

    def twice(a, b):
        s = a + a
        return s * b

    bug = compare_values(twice, make_value(accumulate=False), a=3.0, b=2.0)
    assert {r[0]: r[-1] for r in bug.rows}["a"] == PATTERNS["factor"]  # one share of two


def test_a_value_without_micrograds_names_is_refused():
    class Bare:
        def __init__(self, data, label=""):
            self.data = data

    with pytest.raises(TypeError, match="no grad, _prev, _op"):
        compare_values(lambda a: a, Bare, a=1.0)


def test_grading_helpers_pass_right_and_fail_wrong():
    x = np.array([-2.0, -0.5, 0.3, 1.5])
    expect_close(derivative(tv.tanh, x), nudged_derivative(tv.tanh, x), "tanh'")
    expect_close(second_derivative(tv.tanh, x), -2 * np.tanh(x) * (1 - np.tanh(x) ** 2), "tanh''")
    dy = np.array([1.0, 2.0, 3.0, 4.0])
    expect_close(derivative(tv.tanh, x, dy), dy * (1 - np.tanh(x) ** 2), "dy · tanh'")
    with pytest.raises(AssertionError, match="relu': right except where x < 0"):
        expect_close(np.ones(4), (x > 0) * 1.0, "relu'", where={"x < 0": x < 0})
    with pytest.raises(AssertionError, match="tanh': the sign is flipped"):
        expect_close(-derivative(tv.tanh, x), nudged_derivative(tv.tanh, x), "tanh'")
    with pytest.raises(AssertionError, match="computing it raised ZeroDivisionError: division"):
        attempt("computing it", lambda: 1 / 0)
