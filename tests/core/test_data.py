"""Data sets: shapes, dtypes, seeding, digits and the split helper."""

import builtins

import numpy as np
import pytest

from tapeviz.core.nn import data


@pytest.mark.parametrize("make, shape", [(data.two_moons, (120, 2)), (data.spirals, (120, 2))])
def test_classification_sets_are_seeded(make, shape):
    x, y = make(120, seed=4)
    assert x.shape == shape and x.dtype == np.float32 and y.dtype == np.int32
    x2, y2 = make(120, seed=4)
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(make(120, seed=5)[0], x)
    assert np.bincount(y).min() >= 40  # balanced


def test_spirals_classes_and_uneven_counts():
    x, y = data.spirals(100, n_classes=4, noise=0.0, seed=0)
    assert x.shape == (100, 2) and sorted(np.bincount(y)) == [25, 25, 25, 25]
    assert np.abs(x).max() <= 1.0 + 1e-6
    with pytest.raises(ValueError, match="n_samples must be an int >= 4"):
        data.spirals(3, n_classes=4)


def test_regression_1d():
    x, y = data.regression_1d(80, noise=0.0, seed=1)
    assert x.shape == y.shape == (80, 1) and x.dtype == np.float32
    np.testing.assert_allclose(y, np.sin(3 * x) + 0.3 * x, atol=1e-6)


def test_load_digits():
    pytest.importorskip("sklearn")
    x, y = data.load_digits()
    assert x.shape == (1797, 8, 8, 1) and x.dtype == np.float32 and y.dtype == np.int32
    assert 0.0 <= x.min() and x.max() <= 1.0 and sorted(set(y.tolist())) == list(range(10))
    assert data.load_digits(as_images=False)[0].shape == (1797, 64)


def test_load_digits_without_sklearn_is_a_clear_import_error(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("sklearn"):
            raise ImportError("No module named 'sklearn'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match="load_digits needs scikit-learn.*pip install"):
        data.load_digits()


def test_train_test_split():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    xtr, xte, ytr, yte = data.train_test_split(x, y, test_size=0.3, seed=1)
    assert len(xtr) == 7 and len(xte) == 3
    np.testing.assert_array_equal(xtr[:, 0] // 2, ytr)
    assert sorted(np.concatenate([ytr, yte]).tolist()) == list(range(10))
    assert len(data.train_test_split(x, y, test_size=4)[1]) == 4
    _, xte2, _, _ = data.train_test_split(x, y, 0.3, shuffle=False)
    np.testing.assert_array_equal(xte2, x[:3])
    with pytest.raises(ValueError, match="test_size must be a fraction"):
        data.train_test_split(x, y, test_size=1.5)
    with pytest.raises(ValueError, match="x has 10 samples but y has 9"):
        data.train_test_split(x, y[:9])
