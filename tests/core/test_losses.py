"""Losses: values against numpy, stability, gradients, and label checks."""

import numpy as np
import pytest

import tapeviz.core as tv
from tapeviz.core.nn import losses


def _logits(n=6, c=4, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal((n, c)).astype(dtype)


def _np_log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_mean_squared_error_value_and_column_labels():
    p = tv.tensor(np.array([[1.0], [2.0], [4.0]], np.float32))
    assert losses.mean_squared_error([[0.0], [2.0], [1.0]], p).item() == pytest.approx(10 / 3)
    assert losses.mean_squared_error(np.array([0.0, 2.0, 1.0]), p).item() == pytest.approx(10 / 3)
    with pytest.raises(ValueError, match=r"mean_squared_error: labels have shape \(2,\)"):
        losses.mean_squared_error(np.zeros(2), p)


@pytest.mark.parametrize("one_hot", [False, True])
def test_softmax_cross_entropy_matches_numpy(one_hot):
    z = _logits()
    y = np.array([0, 3, 1, 2, 2, 0], np.int32)
    labels = np.eye(4)[y] if one_hot else y
    got = losses.softmax_cross_entropy(labels, tv.tensor(z)).item()
    want = -_np_log_softmax(z)[np.arange(6), y].mean()
    assert got == pytest.approx(want, rel=1e-12)


def test_softmax_cross_entropy_is_stable_for_huge_logits():
    z = tv.tensor(np.array([[1e4, 0.0, -1e4], [0.0, 5e3, 0.0]], np.float32))
    value = losses.softmax_cross_entropy([0, 1], z)
    assert np.isfinite(value.item()) and value.item() == pytest.approx(0.0, abs=1e-6)
    g = tv.grad(lambda t: losses.softmax_cross_entropy([2, 0], t))(z).numpy()
    assert np.all(np.isfinite(g))


def test_softmax_cross_entropy_gradient_is_softmax_minus_onehot():
    z = _logits()
    y = np.array([1, 1, 0, 3, 2, 0])
    g = tv.grad(lambda t: losses.softmax_cross_entropy(y, t))(tv.tensor(z)).numpy()
    want = (np.exp(_np_log_softmax(z)) - np.eye(4)[y]) / 6
    np.testing.assert_allclose(g, want, rtol=1e-10)
    tv.check_grads(lambda t: losses.softmax_cross_entropy(y, t), tv.tensor(z))


def test_softmax_cross_entropy_label_errors():
    z = tv.tensor(_logits(dtype=np.float32))
    with pytest.raises(ValueError, match=r"integer class ids of shape \(6,\).*got int32 labels"):
        losses.softmax_cross_entropy(np.zeros((6, 1), np.int32), z)
    with pytest.raises(ValueError, match="one-hot floats of shape"):
        losses.softmax_cross_entropy(np.zeros(6, np.float32), z)
    with pytest.raises(ValueError, match=r"must be in \[0, 4\), got values in \[0, 7\]"):
        losses.softmax_cross_entropy(np.array([0, 1, 2, 3, 7, 1]), z)
    with pytest.raises(ValueError, match=r"got int32 labels of shape \(5,\)"):
        losses.softmax_cross_entropy(np.zeros(5, np.int32), z)
    with pytest.raises(TypeError, match="predictions must be floating"):
        losses.softmax_cross_entropy([0], tv.tensor(np.array([[1, 2]], np.int32)))


def test_binary_cross_entropy_probabilities_and_logits_agree():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((8, 1))
    y = rng.integers(0, 2, (8, 1)).astype(np.float64)
    p = 1 / (1 + np.exp(-z))
    want = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert losses.binary_cross_entropy(y, tv.tensor(p)).item() == pytest.approx(want, rel=1e-6)
    got = losses.binary_cross_entropy(y, tv.tensor(z), from_logits=True).item()
    assert got == pytest.approx(want, rel=1e-10)
    big = tv.tensor(np.array([[800.0], [-800.0]]))
    assert losses.binary_cross_entropy([[1.0], [0.0]], big, from_logits=True).item() == 0.0
    tv.check_grads(lambda t: losses.binary_cross_entropy(y, t, from_logits=True), tv.tensor(z))


def test_binary_cross_entropy_label_errors():
    p = tv.tensor(np.full((4, 1), 0.5, np.float32))
    with pytest.raises(ValueError, match=r"labels must be numbers in \[0, 1\]"):
        losses.binary_cross_entropy(np.array([0, 1, 2, 1]), p)
    with pytest.raises(ValueError, match=r"labels have shape \(3,\)"):
        losses.binary_cross_entropy(np.zeros(3), p)


def test_get_by_name():
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get("softmax_cross_entropy") is losses.softmax_cross_entropy
    assert losses.get(len) is len
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        losses.get("hinge")
