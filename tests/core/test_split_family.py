"""Issue 33 item 12: the split family (split, array_split, hsplit, vsplit, dsplit) with one
section, sections of size 0 and size-1 dimensions. ``np.split(x, 1)`` crashed in the backward
pass: a one-output node gets its dy alone (a Tensor), and split's VJP iterated over it as if it
were the tuple of the parts' dys (its rows). Values against numpy, gradients against PyTorch
(``torch.tensor_split``) in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapeviz.core as tv

CASES = [
    ("split", (2, 3), 1), ("split", (5,), 1), ("split", (1, 3), 1), ("split", (2, 3), [0]),
    ("split", (2, 3), [2]), ("split", (2, 3), [0, 0, 2]), ("split", (4, 2), 2),
    ("array_split", (2, 3), 1), ("array_split", (2, 3), 4), ("array_split", (3,), 5),
    ("array_split", (0, 3), 2), ("array_split", (2, 3), [5, 1]), ("array_split", (1, 1), 1),
    ("hsplit", (2, 3), 1), ("hsplit", (4,), 1), ("hsplit", (2, 3), [0, 3]), ("hsplit", (1, 1), 1),
    ("vsplit", (2, 3), 1), ("vsplit", (1, 3), 1), ("vsplit", (2, 3), [1, 1]),
    ("dsplit", (2, 3, 4), 1), ("dsplit", (1, 1, 1), 1), ("dsplit", (2, 1, 4), [0, 0]),
    ("dsplit", (2, 3, 4), 2),
]  # fmt: skip


def _weights(parts):
    rng = np.random.default_rng(12)
    return [rng.normal(size=np.shape(p)) for p in parts]


@pytest.mark.parametrize(("name", "shape", "arg"), CASES, ids=lambda c: str(c))
def test_split_family_values_and_gradient_against_numpy_and_autograd(name, shape, arg):
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    want_parts = getattr(np, name)(a, arg)
    weights = _weights(want_parts)
    x = tv.tensor(a)
    with tv.Tape() as tape:
        tape.watch(x)
        parts = getattr(np, name)(x, arg)
        # sum_k <part_k, w_k>: each part's gradient is its own weight, so a part's gradient
        # sent to the wrong place (or a part missing) shows
        loss = sum((tv.sum(p * w) for p, w in zip(parts, weights)), tv.sum(x) * 0.0)
    assert len(parts) == len(want_parts)
    for got, want in zip(parts, want_parts):
        np.testing.assert_array_equal(got.numpy(), want)
    (g,) = tape.gradient(loss, [x])

    np.testing.assert_allclose(g.numpy(), _torch_gradient(name, a, arg, weights), rtol=1e-12)


def _torch_gradient(name, a, arg, weights):
    """torch.tensor_split has numpy's array_split semantics (a count, or indices, also
    decreasing ones: HIPS autograd's array_split gradient breaks on [5, 1])."""
    axis = {"split": 0, "array_split": 0, "vsplit": 0, "dsplit": 2}.get(
        name, 1 if a.ndim > 1 else 0
    )
    x = torch.tensor(a, requires_grad=True)
    parts = torch.tensor_split(x, arg, dim=axis)
    assert len(parts) == len(weights)
    loss = sum((torch.sum(p * torch.tensor(w)) for p, w in zip(parts, weights)), 0.0 * x.sum())
    loss.backward()
    return x.grad.numpy()


@pytest.mark.parametrize(("name", "arg"), [("split", 1), ("array_split", 1), ("hsplit", 1),
                                           ("vsplit", 1), ("array_split", 3)])  # fmt: skip
def test_one_section_checks_at_order_two(name, arg):
    """The one-section VJP (dy passed through) is itself differentiable: check_grads order 2
    (reverse over reverse, and forward mode built on it)."""
    a = np.random.default_rng(1).normal(size=(2, 3))

    def f(x):
        return sum(tv.sin(p) * (k + 1.0) for k, p in enumerate(getattr(np, name)(x, arg))
                   if p.shape[0]).sum()  # fmt: skip

    report = tv.check_grads(f, a, order=2, raise_on_failure=False)
    assert report.passed, report.summary()


def test_one_section_gradient_through_jit():
    a = np.random.default_rng(2).normal(size=(3, 4))
    w = np.random.default_rng(3).normal(size=(3, 4))

    def loss(x):
        (part,) = np.split(x, 1, axis=1)
        return tv.sum(part * w)

    g = tv.jit(tv.grad(loss))(tv.tensor(a))
    np.testing.assert_array_equal(g.numpy(), w)
