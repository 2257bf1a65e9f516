"""Issue 12, classes 3-5: the exact examples, each against autograd or central differences,
on both backends. (The oracle, test_oracle.py, covers the same kernels systematically.)"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as tv
from tapeviz.core.ops.nn import softmax_cross_entropy_with_logits as sce

BACKENDS = ("numpy", "numba")
# the edge points make numpy warn (log of 0, inf - inf): that is the point of these tests
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _t(values):
    return tv.tensor(np.asarray(values, np.float64))


def _central_hessian(f, x, h=1e-3):
    """The Hessian of scalar ``f`` by central differences of central differences."""
    n = x.size
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            hess[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (
                4 * h * h
            )
    return hess


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "x", [[0.0, 2.0, 3.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.5, -2.0, 0.5], [0.0, -1.0]]
)
def test_hessian_of_prod_with_zeros_is_symmetric_and_exact(backend, x):
    x = np.asarray(x)
    with tv.backend(backend):
        hess = tv.hessian(tv.prod)(_t(x)).numpy()
    exact = _central_hessian(lambda v: float(np.prod(v)), x)
    np.testing.assert_allclose(hess, hess.T, atol=0)
    np.testing.assert_allclose(hess, exact, atol=1e-8)  # prod is multilinear: no truncation


@pytest.mark.parametrize("backend", BACKENDS)
def test_pow_zero_exponent_has_zero_derivative_at_zero(backend):
    with tv.backend(backend):
        g = tv.grad(lambda x: tv.sum(x**0.0))(_t([0.0, 1.5])).numpy()
        h = tv.hessian(lambda x: tv.sum(x**1.0))(_t([0.0, 2.0])).numpy()
    np.testing.assert_array_equal(g, [0.0, 0.0])  # PyTorch and autograd: 0
    np.testing.assert_array_equal(h, np.zeros((2, 2)))


def test_pow_mixed_second_derivative_at_zero_exponent():
    """d2(a^b)/da db = a^(b-1) (1 + b log a): 1/a at b = 0 (autograd's own rule gives a)."""
    point = np.array([2.0, 0.0])

    def f(v):
        return tv.pow(v[0], v[1])

    hess = tv.hessian(f)(_t(point)).numpy()
    exact = _central_hessian(lambda v: float(v[0] ** v[1]), point)
    np.testing.assert_allclose(hess, exact, atol=1e-5)
    assert hess[0, 1] == pytest.approx(0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pow_exponent_gradient_at_negative_and_zero_base(backend):
    a, b = _t([-2.0, 0.0, 0.0]), _t([3.0, 2.0, -1.0])
    with tv.backend(backend):
        _, gb = tv.grads(lambda a, b: tv.sum(a**b))(a, b)
    gb = gb.numpy()
    assert np.isnan(gb[0])  # log of a negative base: no real derivative (PyTorch, autograd)
    assert gb[1] == 0.0  # 0^b, b >= 0: 0 (PyTorch)
    assert gb[2] == -np.inf  # 0^-1 log 0 = inf * -inf (PyTorch)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [[1.0, 1.0, 1.0], [4.0]])
def test_std_at_zero_spread_has_zero_gradient(backend, x):
    with tv.backend(backend):
        g = tv.grad(tv.std)(_t(x)).numpy()
        value = tv.std(_t(x)).numpy()
    assert value == 0.0
    np.testing.assert_array_equal(g, np.zeros(len(x)))  # PyTorch's convention


def test_std_elsewhere_matches_autograd():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]])
    g = tv.grad(lambda x: tv.sum(tv.std(x, 1) * _t([1.0, 2.0])))(_t(x)).numpy()
    want = autograd.grad(lambda x: anp.std(x[0]))(x)
    np.testing.assert_allclose(g[0], want[0], rtol=1e-12)
    np.testing.assert_array_equal(g[1], [0.0, 0.0, 0.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_logsumexp_of_all_minus_inf(backend):
    x = _t([[-np.inf, -np.inf], [-np.inf, 0.0], [np.inf, 1.0]])
    with tv.backend(backend):
        y = tv.logsumexp(x, 1).numpy()
        g = tv.grad(lambda x: tv.sum(tv.logsumexp(x, 1)))(x).numpy()
    np.testing.assert_array_equal(y, [-np.inf, 0.0, np.inf])
    # PyTorch's gradient exp(x - y): NaN for the -inf row and at +inf, exact elsewhere
    assert np.isnan(g[0]).all() and np.isnan(g[2, 0])
    np.testing.assert_array_equal(g[1], [0.0, 1.0])
    assert g[2, 1] == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_with_nan_sends_the_gradient_to_both_inputs(backend, op):
    f = getattr(tv, op)
    a, b = _t([np.nan, 1.0, 2.0]), _t([1.0, 1.0, np.nan])
    with tv.backend(backend):
        ga, gb = tv.grads(lambda a, b: tv.sum(f(a, b) * _t([1.0, 2.0, 3.0])))(a, b)
    np.testing.assert_array_equal(ga.numpy(), [1.0, 1.0, 3.0])  # tie at index 1: halves
    np.testing.assert_array_equal(gb.numpy(), [1.0, 1.0, 3.0])


def _ag_sce(t, z):
    return -anp.sum(t * (z - anp.log(anp.sum(anp.exp(z), -1, keepdims=True)))) / z.shape[0]


@pytest.mark.parametrize(
    "labels",
    [np.eye(3)[[0, 2]], np.array([[0.5, 0.25, 0.75], [2.0, 0.0, -1.0]])],
    ids=["one-hot", "rows not summing to 1"],
)
def test_softmax_cross_entropy_hessian_in_labels_and_logits(labels):
    """The full Hessian over (labels, logits) together, mixed blocks included."""
    z = np.array([[0.2, -1.0, 0.7], [1.5, 0.3, -0.4]])
    both = np.concatenate([labels.ravel(), z.ravel()])

    def tv_f(v):
        return sce(tv.reshape(v[:6], (2, 3)), tv.reshape(v[6:], (2, 3)))

    hess = tv.hessian(tv_f)(_t(both)).numpy()
    want = autograd.hessian(lambda v: _ag_sce(v[:6].reshape(2, 3), v[6:].reshape(2, 3)))(both)
    np.testing.assert_allclose(hess, want, atol=1e-12)
    grad = tv.grad(tv_f)(_t(both)).numpy()
    np.testing.assert_allclose(grad, autograd.grad(lambda v: _ag_sce(
        v[:6].reshape(2, 3), v[6:].reshape(2, 3)))(both), atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_over_an_empty_axis_is_empty(backend, op):
    f = getattr(tv, op)
    x = tv.tensor(np.zeros((0, 3)))
    with tv.backend(backend):
        y = f(x, 0)
        g = tv.grad(lambda x: tv.sum(f(x, 0)))(x)
    assert y.shape == (0, 3) and g.shape == (0, 3)
