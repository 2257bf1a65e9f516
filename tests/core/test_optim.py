"""Optimizers: update rules against numpy references, minimize, apply_gradients, errors."""

import gc

import numpy as np
import pytest

import tapeviz.core as tv
from tapeviz.core.nn import optim

W0 = np.array([1.0, -2.0, 0.5])
TARGET = np.array([0.3, 0.1, -0.4])


def _grad(w):  # of sum((w - t)^2 * [1, 2, 3])
    return 2 * (w - TARGET) * np.array([1.0, 2.0, 3.0])


def _loss(w):
    return tv.sum((w - TARGET) ** 2 * np.array([1.0, 2.0, 3.0]))


def _reference(kind, steps, lr):
    w, a, m, v, s = W0.copy(), 0 * W0, 0 * W0, 0 * W0, 0 * W0
    for t in range(1, steps + 1):
        g = _grad(w)
        if kind == "sgd":
            w = w - lr * g
        elif kind == "momentum":
            a = 0.9 * a + g
            w = w - lr * a
        elif kind == "nesterov":
            a = 0.9 * a + g
            w = w - lr * (g + 0.9 * a)
        elif kind == "rmsprop":
            s = 0.9 * s + 0.1 * g * g
            w = w - lr * g / np.sqrt(s + 1e-7)
        elif kind == "adam":
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            w = w - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-7)
    return w


OPTIMIZERS = {
    "sgd": lambda lr: optim.SGD(lr),
    "momentum": lambda lr: optim.Momentum(lr, 0.9),
    "nesterov": lambda lr: optim.Momentum(lr, 0.9, use_nesterov=True),
    "rmsprop": lambda lr: optim.RMSProp(lr),
    "adam": lambda lr: optim.Adam(lr),
}


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_update_rule_matches_reference(kind):
    w = tv.variable(W0.copy())
    opt = OPTIMIZERS[kind](0.05)
    for _ in range(25):
        opt.minimize(lambda: _loss(w))
    np.testing.assert_allclose(w.numpy(), _reference(kind, 25, 0.05), rtol=1e-6, atol=1e-9)
    assert opt.iterations == 25


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_each_optimizer_converges(kind):
    w = tv.variable(W0.copy())
    opt = OPTIMIZERS[kind](0.02)
    first = opt.minimize(lambda: _loss(w), return_cost=True).item()
    for _ in range(800):
        last = opt.minimize(lambda: _loss(w), return_cost=True)
    assert last.item() < 1e-3 * first


def test_minimize_var_list_trains_only_those():
    a, b = tv.variable([1.0]), tv.variable([1.0])
    optim.SGD(0.1).minimize(lambda: tv.sum(a * b), var_list=[a])
    assert a.item() == pytest.approx(0.9) and b.item() == 1.0
    assert optim.SGD(0.1).minimize(lambda: tv.sum(a * b)) is None


def test_minimize_releases_the_tape():
    # measured against its own start (tv.memory() counts every live tape and tensor, an
    # earlier test's garbage too): 20 steps leave no tape, no saved value, no tensor behind
    w = tv.variable(np.ones((50, 50), np.float32))
    gc.collect()
    before = tv.memory()
    for _ in range(20):
        optim.Adam(0.01).minimize(lambda: tv.sum(tv.tanh(w @ w)))
    after = tv.memory()
    assert after["saved_bytes"] <= before["saved_bytes"]
    assert after["num_tapes"] <= before["num_tapes"]
    assert after["num_tensors"] <= before["num_tensors"]


def test_apply_gradients_pairs_and_none():
    w, u = tv.variable([1.0, 2.0]), tv.variable([5.0])
    opt = optim.SGD(0.5)
    opt.apply_gradients([(tv.tensor([2.0, 2.0]), w), (None, u)])
    np.testing.assert_allclose(w.numpy(), [0.0, 1.0])
    assert u.item() == 5.0
    with pytest.raises(ValueError, match=r"gradient of shape \(3,\) for variable"):
        opt.apply_gradients([(tv.tensor([1.0, 1.0, 1.0]), w)])


def test_no_trainable_variables_is_an_error():
    frozen = tv.variable([1.0], trainable=False)
    x = tv.tensor([1.0])
    with pytest.raises(ValueError, match="SGD.minimize: the loss uses no trainable variable"):
        optim.SGD().minimize(lambda: tv.sum(x * frozen))
    with pytest.raises(ValueError, match=r"Adam.minimize: no trainable variables \(1 given"):
        optim.Adam().minimize(lambda: tv.sum(x * frozen), var_list=[frozen])
    with pytest.raises(ValueError, match="no trainable variables"):
        optim.SGD().apply_gradients([])
    with pytest.raises(TypeError, match="var_list must hold Variables, got Tensor"):
        optim.SGD().minimize(lambda: tv.sum(x), var_list=[x])
    w = tv.variable([1.0])
    with pytest.raises(ValueError, match="does not depend on any of the 1 variables"):
        optim.SGD().minimize(lambda: tv.sum(x * 2), var_list=[w])


def test_loss_must_be_a_scalar():
    w = tv.variable([1.0, 2.0])
    gc.collect()  # tapes an earlier test left in reference cycles: not this test's
    before = tv.memory()["saved_bytes"]
    with pytest.raises(ValueError, match=r"must return a scalar, got a tensor of shape \(2,\)"):
        optim.RMSProp().minimize(lambda: w * 2)
    with pytest.raises(TypeError, match="must return a scalar Tensor, got float"):
        optim.SGD().minimize(lambda: 1.0)
    assert tv.memory()["saved_bytes"] <= before  # the failed steps released their tapes


def test_get_and_bad_learning_rate():
    assert isinstance(optim.get("adam"), optim.Adam)
    opt = optim.Momentum(0.1)
    assert optim.get(opt) is opt and "Momentum(learning_rate=0.1" in repr(opt)
    with pytest.raises(ValueError, match="unknown|expected an Optimizer"):
        optim.get("adagrad")
    with pytest.raises(
        ValueError, match="SGD: learning_rate must be a finite number in \\(0, inf\\)"
    ):
        optim.SGD(0)


# --- arguments that would give NaN weights are rejected by name (issue 12, class 11) ---
@pytest.mark.parametrize(
    "cls, kwargs, arg",
    [
        (optim.Adam, {"beta1": 1.0}, "beta1"),
        (optim.Adam, {"beta1": -0.1}, "beta1"),
        (optim.Adam, {"beta2": 1.0}, "beta2"),
        (optim.Adam, {"epsilon": -1e-7}, "epsilon"),
        (optim.Adam, {"learning_rate": float("inf")}, "learning_rate"),
        (optim.SGD, {"learning_rate": float("nan")}, "learning_rate"),
        (optim.SGD, {"learning_rate": -0.1}, "learning_rate"),
        (optim.SGD, {"learning_rate": 0.0}, "learning_rate"),
        (optim.Momentum, {"momentum": 1.0}, "momentum"),
        (optim.RMSProp, {"decay": 1.5}, "decay"),
        (optim.RMSProp, {"epsilon": float("inf")}, "epsilon"),
        (optim.Adam, {"epsilon": 0.0}, "epsilon"),
        (optim.RMSProp, {"epsilon": 0.0}, "epsilon"),
    ],
)
def test_optimizers_reject_arguments_that_give_nan_weights(cls, kwargs, arg):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: {arg} must be a finite number"):
        cls(**kwargs)


@pytest.mark.parametrize("cls", [optim.Adam, optim.RMSProp])
def test_epsilon_zero_is_rejected_because_a_zero_gradient_gives_a_nan_weight(cls):
    """PyTorch accepts eps=0; its step for a weight whose gradient is 0 is then 0 / 0."""
    with pytest.raises(ValueError, match=r"epsilon .* \(0, inf\), got 0\.0 \(.*0 / 0 = NaN"):
        cls(0.1, epsilon=0.0)
    w = tv.variable([1.0, 2.0])
    opt = cls(0.1, epsilon=1e-12)  # the smallest sensible: finite where the gradient is 0
    opt.minimize(lambda: tv.sum(w * tv.tensor([0.0, 1.0])))
    assert np.isfinite(w.numpy()).all() and w.numpy()[0] == 1.0


def test_a_learning_rate_changed_between_steps_is_checked_at_the_step():
    w = tv.variable([3.0])
    opt = optim.SGD(0.1)
    opt.learning_rate = float("inf")
    with pytest.raises(ValueError, match="SGD: learning_rate must be a finite number"):
        opt.minimize(lambda: tv.sum(w * w))
    assert w.numpy().tolist() == [3.0]  # not -inf


def test_optimizer_edge_values_that_are_valid_still_work():
    w = tv.variable([3.0])
    opt = optim.Adam(0.1, beta1=0.0, epsilon=1e-12)
    for _ in range(5):
        opt.minimize(lambda: tv.sum(w * w))
    assert np.isfinite(w.numpy()).all() and abs(w.item()) < 3.0
    with pytest.raises(TypeError, match="Momentum: momentum must be a number"):
        optim.Momentum(momentum="fast")
