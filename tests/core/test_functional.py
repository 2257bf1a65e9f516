"""The functional API: grad, grads, value_and_grad(s), variable_grads, jacobian, hessian,
vjp and jvp, each against numerical derivatives; stop_gradient and no_grad inside them."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as core

X = np.array([0.3, -0.7, 1.1])
A = np.array([[0.5, -1.2, 0.3], [0.8, 0.1, -0.4]])


def f_vec(x):  # R^3 -> R^2
    return core.matmul(core.tensor(A), core.tanh(x)) * core.sum(x * x)


def f_scalar(x):
    return core.sum(core.sin(x) * x) + core.prod(x)


def num_jac(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append(
            (f(core.tensor(x + e)).numpy() - f(core.tensor(x - e)).numpy()).reshape(-1) / (2 * eps)
        )
    return np.stack(cols, axis=-1)


def test_grad_matches_numerical():
    g = core.grad(f_scalar)(core.tensor(X))
    np.testing.assert_allclose(g.numpy(), num_jac(f_scalar, X)[0], rtol=1e-6)


def test_grad_of_grad():
    d2 = core.grad(lambda x: core.sum(core.grad(lambda y: core.sum(y**3))(x)))(core.tensor(X))
    np.testing.assert_allclose(d2.numpy(), 6 * X, rtol=1e-12)


def test_grads_and_value_and_grads():
    f = lambda a, b: core.sum(a * b + core.exp(a))  # noqa: E731
    a, b = core.tensor(X), core.tensor(X[::-1].copy())
    ga, gb = core.grads(f)(a, b)
    np.testing.assert_allclose(ga.numpy(), X[::-1] + np.exp(X))
    np.testing.assert_allclose(gb.numpy(), X)
    value, (ga2, gb2) = core.value_and_grads(f)([a, b])
    assert value.item() == pytest.approx(float(np.sum(X * X[::-1] + np.exp(X))))
    np.testing.assert_allclose(ga2.numpy(), ga.numpy())


def test_value_and_grad_with_dy():
    value, g = core.value_and_grad(core.exp)(core.tensor(X), dy=core.tensor(np.array([1.0, 2.0, 3.0])))  # fmt: skip
    np.testing.assert_allclose(value.numpy(), np.exp(X))
    np.testing.assert_allclose(g.numpy(), np.exp(X) * [1, 2, 3])


def test_grad_of_unused_argument_is_zero_and_python_input_is_float32():
    g = core.grads(lambda a, b: core.sum(a * 2))([1.0, 2.0], [[3.0]])
    assert g[0].dtype == np.float32 and g[1].numpy().tolist() == [[0.0]]
    assert core.grad(lambda x: x * x)(3).item() == 6.0  # an int becomes float32


def test_grad_errors_name_the_function():
    def returns_list(x):
        return [x]

    with pytest.raises(TypeError, match=r"grad\(returns_list\): the function must return a Tensor"):
        core.grad(returns_list)(core.tensor([1.0]))
    with pytest.raises(ValueError, match="not a scalar"):
        core.grad(core.exp)(core.tensor([1.0, 2.0]))


def test_variable_grads():
    w = core.variable(np.array([1.0, 2.0]), name="w")
    b = core.variable(np.array([0.5]), name="b")
    frozen = core.variable(np.array([3.0, 3.0]), name="frozen", trainable=False)
    value, grads = core.variable_grads(lambda: core.sum(w * w * frozen) + core.sum(b))
    assert value.item() == pytest.approx(15.5)
    assert set(grads) == {"w", "b"}
    np.testing.assert_allclose(grads["w"].numpy(), [6.0, 12.0])
    _, only = core.variable_grads(lambda: core.sum(w * frozen), var_list=[frozen])
    np.testing.assert_allclose(only["frozen"].numpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="uses no trainable variable"):
        core.variable_grads(lambda: core.sum(core.tensor([1.0])))
    with pytest.raises(ValueError, match="must return a scalar Tensor"):
        core.variable_grads(lambda: w * 2)


def test_jacobian_matches_numerical():
    j = core.jacobian(f_vec)(core.tensor(X))
    assert j.shape == (2, 3)
    np.testing.assert_allclose(j.numpy(), num_jac(f_vec, X), rtol=1e-6, atol=1e-9)


def test_jacobian_of_matrix_function_has_both_shapes():
    j = core.jacobian(lambda m: m * m)(core.tensor(A))
    assert j.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(j.numpy().reshape(6, 6), np.diag(2 * A.reshape(-1)))


def test_hessian_matches_numerical():
    h = core.hessian(f_scalar)(core.tensor(X))
    grad_f = lambda x: core.grad(f_scalar)(x)  # noqa: E731
    np.testing.assert_allclose(h.numpy(), num_jac(grad_f, X), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(h.numpy(), h.numpy().T, atol=1e-12)


def test_vjp_and_jvp_match_the_jacobian():
    jac = num_jac(f_vec, X)
    dy, tangent = np.array([0.7, -1.3]), np.array([0.2, 0.5, -0.9])
    y, vjp_fn = core.vjp(f_vec, core.tensor(X))
    np.testing.assert_allclose(y.numpy(), f_vec(core.tensor(X)).numpy())
    (g,) = vjp_fn(core.tensor(dy))
    np.testing.assert_allclose(g.numpy(), dy @ jac, rtol=1e-6)
    (g_again,) = vjp_fn(core.tensor(2 * dy))  # the vjp function can be called again
    np.testing.assert_allclose(g_again.numpy(), 2 * dy @ jac, rtol=1e-6)
    y2, jv = core.jvp(f_vec, [core.tensor(X)], [core.tensor(tangent)])
    np.testing.assert_allclose(jv.numpy(), jac @ tangent, rtol=1e-6)
    np.testing.assert_allclose(y2.numpy(), y.numpy())


def test_jvp_checks_its_arguments():
    with pytest.raises(
        ValueError, match=r"jvp\(f_vec\): tangent shape \(2,\) != primal shape \(3,\)"
    ):
        core.jvp(f_vec, [X], [np.ones(2)])
    with pytest.raises(ValueError, match="1 primals but 2 tangents"):
        core.jvp(f_vec, [X], [X, X])


def test_stop_gradient_and_no_grad_inside_grad():
    def f(x):
        with core.no_grad():
            c = core.exp(x)  # a constant for differentiation
        return core.sum(x * c + core.stop_gradient(x * x))

    g = core.grad(f)(core.tensor(X))
    np.testing.assert_allclose(g.numpy(), np.exp(X))


def test_functional_api_leaves_no_tape_active():
    core.grad(f_scalar)(core.tensor(X))
    from tapeviz.core.tensors import recording

    assert recording.current() is None
