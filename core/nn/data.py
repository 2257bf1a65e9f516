"""Small data sets for training demos: seeded synthetic sets and scikit-learn's digits.

Every function returns numpy arrays: inputs float32, class labels int32.
"""

from __future__ import annotations

import numpy as np

__all__ = ["two_moons", "spirals", "regression_1d", "load_digits", "train_test_split"]


def _check_n(n, fn, minimum=2):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"{fn}: n_samples must be an int >= {minimum}, got {n!r}")


def two_moons(n_samples: int = 200, noise: float = 0.1, seed: int = 0):
    """Two interleaved half circles in 2-D, labels 0 and 1.

    Example:
        >>> x, y = two_moons(100, seed=0)
        >>> x.shape, x.dtype, sorted(set(y.tolist()))
        ((100, 2), dtype('float32'), [0, 1])
    """
    _check_n(n_samples, "two_moons")
    rng = np.random.default_rng(seed)
    n0 = n_samples // 2
    t0 = np.linspace(0, np.pi, n0)
    t1 = np.linspace(0, np.pi, n_samples - n0)
    upper = np.stack([np.cos(t0), np.sin(t0)], 1)
    lower = np.stack([1 - np.cos(t1), 0.5 - np.sin(t1)], 1)
    x = np.concatenate([upper, lower]) + rng.normal(0, noise, (n_samples, 2))
    y = np.concatenate([np.zeros(n0), np.ones(n_samples - n0)]).astype(np.int32)
    perm = rng.permutation(n_samples)
    return x[perm].astype(np.float32), y[perm]


def spirals(n_samples: int = 300, n_classes: int = 3, noise: float = 0.2, seed: int = 0):
    """``n_classes`` interleaved spiral arms in 2-D (the CS231n set), labels 0..n_classes-1.

    Example:
        >>> x, y = spirals(300, 3, seed=0)
        >>> x.shape, int(y.max())
        ((300, 2), 2)
    """
    _check_n(n_samples, "spirals", n_classes)
    rng = np.random.default_rng(seed)
    counts = [n_samples // n_classes + (k < n_samples % n_classes) for k in range(n_classes)]
    xs, ys = [], []
    for k, n in enumerate(counts):
        r = np.linspace(0.0, 1.0, n)
        t = np.linspace(k * 4.0, (k + 1) * 4.0, n) + rng.normal(0, noise, n)
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], 1))
        ys.append(np.full(n, k, np.int32))
    perm = rng.permutation(n_samples)
    return np.concatenate(xs)[perm].astype(np.float32), np.concatenate(ys)[perm]


def regression_1d(n_samples: int = 200, noise: float = 0.1, seed: int = 0):
    """Noisy ``y = sin(3x) + 0.3x`` for x in [-2, 2]; shapes (n, 1) and (n, 1).

    Example:
        >>> x, y = regression_1d(50)
        >>> x.shape, y.shape
        ((50, 1), (50, 1))
    """
    _check_n(n_samples, "regression_1d")
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (n_samples, 1))
    y = np.sin(3 * x) + 0.3 * x + rng.normal(0, noise, x.shape)
    return x.astype(np.float32), y.astype(np.float32)


def load_digits(as_images: bool = True):
    """scikit-learn's bundled 8x8 handwritten digits (1797 samples; no download).

    Args:
        as_images: shape (n, 8, 8, 1) for convolutions; False gives (n, 64).

    Returns:
        ``(x, y)``: float32 pixels scaled to [0, 1], int32 labels 0..9.

    Raises:
        ImportError: scikit-learn is not installed.
    """
    try:
        from sklearn.datasets import load_digits as _sk_load_digits
    except ImportError:
        raise ImportError(
            "data.load_digits needs scikit-learn (it ships the digits data); install it with "
            '`pip install "tapeviz[data]"` (or scikit-learn)'
        ) from None
    bunch = _sk_load_digits()
    x = (bunch.data / 16.0).astype(np.float32)
    y = bunch.target.astype(np.int32)
    return (x.reshape(-1, 8, 8, 1) if as_images else x), y


def train_test_split(x, y, test_size: float = 0.25, seed: int = 0, shuffle: bool = True):
    """Split ``x, y`` into ``x_train, x_test, y_train, y_test`` (scikit-learn's order).

    Args:
        test_size: a fraction in (0, 1) or a number of test samples.
        seed: shuffling seed.

    Example:
        >>> import numpy as np
        >>> xtr, xte, ytr, yte = train_test_split(np.zeros((10, 2)), np.arange(10), 0.3)
        >>> len(xtr), len(xte)
        (7, 3)
    """
    x, y = np.asarray(x), np.asarray(y)
    n = len(x)
    if len(y) != n:
        raise ValueError(f"train_test_split: x has {n} samples but y has {len(y)}")
    if isinstance(test_size, float) and 0 < test_size < 1:
        n_test = int(np.ceil(test_size * n))
    elif isinstance(test_size, (int, np.integer)) and 0 < test_size < n:
        n_test = int(test_size)
    else:
        raise ValueError(
            f"train_test_split: test_size must be a fraction in (0, 1) or a count in [1, {n}), "
            f"got {test_size!r}"
        )
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    test, train = order[:n_test], order[n_test:]
    return x[train], x[test], y[train], y[test]
