"""Issue 12, classes 6, 8 and 10: second derivatives and forward mode are never silently
wrong. Judged by HIPS autograd as an independent oracle where it has an answer."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.extend import defvjp, primitive
from autograd.test_util import check_grads as ag_check_grads

import tapeviz.core as core
from tapeviz.core.autodiff.backward import GradientError
from tapeviz.core.check.gradcheck import GradientCheckError


@pytest.fixture
def foo_bar():
    """autograd's test_check_vjp_2nd_order_fail as tapeviz kernels: foo(x) = 2x with the
    gradient bar(dy) * 2, bar the identity whose own gradient is wrong (dy * 1.001)."""
    core.register_kernel("TrustFoo", "numpy", lambda i, a: i["x"] * 2.0)
    core.register_kernel("TrustBar", "numpy", lambda i, a: i["x"].copy())
    bar = lambda t: core.run_kernel("TrustBar", {"x": t})  # noqa: E731
    core.register_gradient("TrustFoo", lambda dy, s, a: {"x": lambda: bar(dy) * 2.0})
    core.register_gradient("TrustBar", lambda dy, s, a: {"x": lambda: dy * 1.001})
    yield lambda t: core.run_kernel("TrustFoo", {"x": t})
    for name in ("TrustFoo", "TrustBar"):
        core.unregister_kernel(name, "numpy")
        core.unregister_gradient(name)


def test_check_grads_order_2_checks_the_vjp_in_its_dy_direction(foo_bar):
    first = core.check_grads(foo_bar, [1.0], forward=False)  # right at first order
    assert first.passed
    with pytest.raises(GradientCheckError) as info:
        core.check_grads(foo_bar, [1.0], order=2, forward=False)
    bad = [c for c in info.value.report.checks if not c.passed]
    assert [c.arg for c in bad] == [(0, "dy")] and "d/d dy of grad arg 0" in bad[0].label
    np.testing.assert_allclose(bad[0].analytic, 2.002, rtol=1e-12)


def test_autograd_fails_the_same_case():
    """The oracle agrees that this gradient is wrong (its own test, in its own words)."""

    @primitive
    def foo(x):
        return x * 2.0

    @primitive
    def bar(x):
        return x

    defvjp(foo, lambda ans, x: lambda g: bar(g) * 2)
    defvjp(bar, lambda ans, x: lambda g: g * 1.001)
    with pytest.raises(AssertionError, match="check of vjp_foo failed"):
        ag_check_grads(foo, modes=["rev"])(1.0)


def test_order_2_still_passes_right_gradients_and_checks_dy():
    f = lambda x, w: core.sum(core.tanh(x * w))  # noqa: E731
    report = core.check_grads(f, [0.3, -0.7], [1.5, 0.2], order=2, forward=False)
    second = {c.arg for c in report.checks if c.order == 2}
    assert {(0, 0), (0, 1), (0, "dy"), (1, 0), (1, 1), (1, "dy")} <= second


X64 = np.array([0.5, -1.2, 2.0])


def _cube_by_closure(capture):
    """x**3 whose grad_func reaches 3x^2, computed in the forward, in the way ``capture``
    says: not through save(), so the outer tape cannot see it depends on x."""

    @core.custom_grad
    def cube(x, save):
        slope = 3.0 * x * x
        return x * x * x, capture(slope)

    return lambda x: core.sum(cube(x))


CAPTURES = {
    "closure": lambda slope: lambda dy, saved: dy * slope,
    "list in closure": lambda slope: (lambda box: lambda dy, saved: dy * box[0])([slope]),
    "default argument": lambda slope: lambda dy, saved, s=slope: dy * s,
    "nested function": lambda slope: (lambda h: lambda dy, saved: h(dy))(lambda d: d * slope),
}


@pytest.mark.parametrize("how", CAPTURES)
def test_second_derivative_through_a_closure_captured_intermediate_raises(how):
    f = _cube_by_closure(CAPTURES[how])
    first = core.grad(f)(core.tensor(X64))  # first order is right: autograd's answer
    np.testing.assert_allclose(first.numpy(), autograd.grad(lambda x: anp.sum(x**3))(X64))
    with pytest.raises(GradientError, match=r"custom_grad\(cube\).*1 closure-captured interm"):
        core.grad(lambda x: core.sum(core.grad(f)(x)))(core.tensor(X64))


class _Box:
    pass


class _Slope:
    def __init__(self, slope):
        self.slope = slope

    def __call__(self, dy, saved):
        return dy * self.slope


_GLOBAL_CACHE: dict = {}


def _through_global(slope):
    _GLOBAL_CACHE["slope"] = slope
    return lambda dy, saved: dy * _GLOBAL_CACHE["slope"]


def _through_attribute(slope):
    box = _Box()
    box.slope = slope
    return lambda dy, saved: dy * box.slope


# ways the closure scan cannot follow: seen when grad_func runs an op on the intermediate
HIDDEN = {
    "object attribute": _through_attribute,
    "callable object": _Slope,
    "bound method": lambda slope: _Slope(slope).__call__,
    "global dict": _through_global,
    "deeply nested list": lambda slope: (lambda b: lambda dy, saved: dy * b[0][0][0][0])(
        [[[[slope]]]]
    ),
}


@pytest.mark.parametrize("how", HIDDEN)
def test_second_derivative_through_a_hidden_intermediate_raises(how):
    """Before: the second derivative was silently 3x^2's derivative left out (6x missing)."""
    f = _cube_by_closure(HIDDEN[how])
    first = core.grad(f)(core.tensor(X64))
    np.testing.assert_allclose(first.numpy(), 3 * X64**2)
    with pytest.raises(GradientError, match=r"custom_grad\(cube\).*reached without save\(\)"):
        core.grad(lambda x: core.sum(core.grad(f)(x)))(core.tensor(X64))


def test_capturing_inputs_and_outputs_is_right_at_second_order():
    @core.custom_grad
    def cube(x, save):
        y = x * x * x
        return y, lambda dy, saved: dy * 3.0 * y / x  # y and x: the outer tape sees both

    g2 = core.grad(lambda x: core.sum(core.grad(lambda x: core.sum(cube(x)))(x)))
    oracle = autograd.grad(lambda x: anp.sum(autograd.elementwise_grad(lambda x: x**3)(x)))
    np.testing.assert_allclose(g2(core.tensor(X64)).numpy(), oracle(X64), rtol=1e-12)


class Softplus(core.DifferentiableFunction):
    """y = log(1 + exp(x)) * s (s broadcast); counts forward and backward calls."""

    calls = {"forward": 0, "backward": 0}

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, s):
        Softplus.calls["forward"] += 1
        return np.logaddexp(0.0, x) * s

    def backward(self, dy, compute, x, s):
        Softplus.calls["backward"] += 1
        sig = 1 / (1 + np.exp(-x))
        return dy * sig * s, np.sum(dy * np.logaddexp(0.0, x)).reshape(s.shape).astype(s.dtype)


def _softplus_oracle(x, s, tx, ts):
    f = lambda x, s: anp.logaddexp(0.0, x) * s  # noqa: E731
    return autograd.make_jvp(lambda xs: f(xs[0], xs[1]))((x, s))((tx, ts))[1]


@pytest.mark.parametrize("n", [3, 10_000])
def test_jvp_through_a_differentiable_function_is_linear_and_matches_autograd(n):
    rng = np.random.default_rng(n)
    x, tx = rng.standard_normal(n), rng.standard_normal(n)
    s, ts = np.array([1.5]), np.array([-0.5])
    Softplus.calls.update(forward=0, backward=0)
    fn = Softplus()
    _, out = core.jvp(fn, [core.tensor(x), core.tensor(s)], [core.tensor(tx), core.tensor(ts)])
    assert Softplus.calls["backward"] <= 2 and Softplus.calls["forward"] <= 7  # not per element
    np.testing.assert_allclose(out.numpy(), _softplus_oracle(x, s, tx, ts), rtol=1e-8, atol=1e-10)


class Relu(core.DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return np.maximum(x, 0.0)

    def backward(self, dy, compute, x):
        return dy * (x > 0)


def test_jvp_at_a_kink_is_exact_for_small_outputs_and_an_error_for_large_ones():
    x = np.array([0.0, 1e-7, -2.0, 3.0])  # a kink within the difference step
    t = np.array([1.0, 1.0, 1.0, 1.0])
    _, out = core.jvp(Relu(), [core.tensor(x)], [core.tensor(t)])
    np.testing.assert_allclose(out.numpy(), [0.0, 1.0, 0.0, 1.0])  # backward's own convention
    big = np.zeros(2000)
    with pytest.raises(
        GradientError, match=r"Relu: forward mode .* one-sided derivatives disagree"
    ):
        core.jvp(Relu(), [core.tensor(big)], [core.tensor(np.ones(2000))])


class CountingRelu(Relu):
    backward_calls = 0

    def backward(self, dy, compute, x):
        CountingRelu.backward_calls += 1
        return super().backward(dy, compute, x)


def test_jvp_with_a_few_kinks_in_a_large_output_is_exact_at_them_and_linear():
    """Only the elements whose one-sided derivatives disagree cost a backward call each
    (before: any kink in an output over 1024 elements was an error; per element: 10^5 calls)."""
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal(100_000), rng.standard_normal(100_000)
    x[[0, 500, 99_999]] = 0.0
    CountingRelu.backward_calls = 0
    _, out = core.jvp(CountingRelu(), [core.tensor(x)], [core.tensor(t)])
    # the three zeros and the few x within the difference step of 0 (|x| < ~1e-4)
    assert 3 <= CountingRelu.backward_calls <= 3 + int(np.sum(np.abs(x) < 1e-3)) + 2
    np.testing.assert_allclose(out.numpy(), t * (x > 0), atol=1e-9)
