"""Issue 25, one second-order policy: wherever a gradient cannot be differentiated (again),
the three custom styles and a built-in kernel without a gradient raise one error type,
``tv.NotDifferentiableError`` (a ``GradientError``), naming the node; audit skips such a node
as not differentiable; check_grads reports it as a missing gradient, not a wrong one."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


class Exp(tv.DifferentiableFunction):  # numpy backward: once only
    def __init__(self):
        super().__init__(save_outputs_for_backward=True)

    def forward(self, x):
        return np.exp(x)

    def backward(self, dy, compute_gradients, y):
        return dy * y


@tv.custom_grad
def exp_hiding_an_intermediate(x, save):
    y = tv.exp(x)
    save([y * 2.0])  # an intermediate: its second derivative cannot be known

    def grad_func(dy, saved):
        return dy * saved[0] / 2.0

    return y, grad_func


def frozen_layer():
    return tv.CompiledLayer(np.tanh, gradient=None, name="frozen")


def explicit_layer():
    return tv.CompiledLayer(np.tanh, gradient=lambda x, dy: dy * (1 - np.tanh(x) ** 2),
                            name="explicit")  # fmt: skip


X = np.array([0.3, -0.7])


def _hessian(f):
    return tv.hessian(lambda x: tv.sum(f(x)))(tv.tensor(X))


@pytest.mark.parametrize(
    "f, words",
    [
        (Exp(), r"Exp: cannot differentiate its gradient again"),
        (exp_hiding_an_intermediate, r"custom_grad\(exp_hiding_an_intermediate\): cannot "),
        (explicit_layer(), r"explicit.*cannot differentiate its gradient again"),
    ],
    ids=["DifferentiableFunction", "custom_grad", "CompiledLayer explicit"],
)
def test_second_order_through_each_style_raises_the_one_error(f, words):
    tv.grad(lambda x: tv.sum(f(x)))(tv.tensor(X))  # first order works
    with pytest.raises(tv.NotDifferentiableError, match=words):
        _hessian(f)
    report = tv.check_grads(lambda x: tv.sum(f(x)), X, order=2, raise_on_failure=False)
    assert not report.passed and "missing gradient" in report.summary()


def test_a_layer_without_a_gradient_is_not_differentiable_anywhere():
    layer = frozen_layer()
    x = tv.tensor(X)
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        y = tv.sum(layer(x))
    assert tape.nodes[0].grad is None  # recorded as not differentiable, not a raising VJP
    with pytest.raises(tv.NotDifferentiableError, match="'frozen' was built with gradient=None"):
        tape.gradient(y, x)
    audit = tv.audit(tape)
    assert audit.passed and "not differentiable" in audit.summary()
    report = tv.check_grads(lambda x: tv.sum(layer(x)), X, raise_on_failure=False)
    assert not report.passed and "missing gradient" in report.summary()
    # cut off by stop_gradient, it is a constant as any other
    g = tv.grad(lambda x: tv.sum(tv.stop_gradient(layer(x)) * x))(x)
    np.testing.assert_allclose(g.numpy(), np.tanh(X))


def test_a_kernel_with_no_gradient_raises_the_same_error_naming_register_gradient():
    tv.register_kernel("PolicyCube", "numpy", lambda i, a: i["x"] ** 3)
    try:
        x = tv.tensor(X)
        with pytest.raises(tv.NotDifferentiableError, match="'PolicyCube'.*register_gradient"):
            tv.grad(lambda x: tv.sum(tv.run_kernel("PolicyCube", {"x": x})))(x)
    finally:
        tv.unregister_kernel("PolicyCube", "numpy")
