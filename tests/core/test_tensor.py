"""Tensors and variables: creation and dtype rules, value access, operators and methods."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as core


def test_creation_dtype_rules():
    assert core.tensor([1.0, 2.0]).dtype == np.float32
    assert core.tensor([1, 2]).dtype == np.int32
    assert core.tensor([True]).dtype == np.bool_
    assert core.tensor(np.ones(2)).dtype == np.float64
    assert core.tensor(np.ones(2, np.int64)).dtype == np.int64
    assert core.tensor([1, 2], dtype="float64").dtype == np.float64
    assert core.tensor(3.0).shape == () and core.tensor(np.float32(2)).dtype == np.float32
    with pytest.raises(TypeError, match="tensor: expected numbers"):
        core.tensor(["a"])
    with pytest.raises(TypeError, match="unsupported dtype complex128"):
        core.tensor(np.ones(2, complex))


def test_tensor_copies_its_input_and_numpy_is_read_only():
    a = np.ones(3)
    t = core.tensor(a, name="t")
    a[0] = 5
    assert t.numpy()[0] == 1 and t.name == "t"
    with pytest.raises(ValueError):
        t.numpy()[0] = 2
    arr = np.asarray(t)
    arr[0] = 7  # __array__ gives a copy
    assert t.numpy()[0] == 1
    assert core.tensor(t).id != t.id


def test_value_access():
    t = core.tensor([[1.0, 2.0, 3.0]])
    assert (t.shape, t.ndim, t.size, t.nbytes, len(t)) == ((1, 3), 2, 3, 12, 1)
    assert core.tensor([2.5]).item() == 2.5 and float(core.tensor(2.0)) == 2.0
    assert int(core.tensor(3)) == 3 and t.tolist() == [[1.0, 2.0, 3.0]]
    with pytest.raises(ValueError, match="item\\(\\): tensor id \\d+ has 3 elements"):
        t.item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(core.tensor(1.0))
    assert [r.shape for r in t] == [(3,)]
    assert [1, 2, 3][core.tensor(1)] == 2
    with pytest.raises(TypeError, match="only integer tensors"):
        [1, 2][core.tensor(1.0)]


def test_operators_match_numpy():
    a, b = np.array([1.5, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    ta, tb = core.tensor(a), core.tensor(b)
    pairs = [
        (ta + tb, a + b),
        (ta - tb, a - b),
        (ta * tb, a * b),
        (ta / tb, a / b),
        (abs(ta) ** tb, np.abs(a) ** b),
        (2 + ta, 2 + a),
        (2 - ta, 2 - a),
        (2 * ta, 2 * a),
        (2 / ta, 2 / a),
        (2**ta, 2**a),
        (-ta, -a),
        (+ta, a),
        (ta > tb, a > b),
        (ta >= 1.5, a >= 1.5),
        (ta < tb, a < b),
        (ta <= tb, a <= b),
        (ta == tb, a == b),
        (ta != tb, a != b),
        (ta[1:], a[1:]),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want)
        assert got.dtype == want.dtype
    m = core.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose((m @ m.T).numpy(), m.numpy() @ m.numpy().T)
    np.testing.assert_allclose((np.ones((2, 2)) @ m).numpy(), np.ones((2, 2)) @ m.numpy())
    assert isinstance(np.ones(3) + ta, core.Tensor)  # numpy defers to the tensor


def test_methods_dispatch_to_ops():
    x = core.tensor(np.array([[0.5, -1.0], [2.0, 0.25]]))
    np.testing.assert_allclose(x.exp().numpy(), np.exp(x.numpy()))
    assert x.sum(axis=0).shape == (2,) and x.mean().item() == pytest.approx(0.4375)
    assert x.reshape(4).shape == (4,) and x.T.shape == (2, 2)
    assert x.astype("float32").dtype == np.float32
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'nope'"):
        x.nope()


def test_tensors_are_immutable():
    t = core.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="tensors are immutable"):
        t[0] = 3.0


def test_variable_assign_and_trainable():
    v = core.variable([1.0, 2.0], name="w")
    assert isinstance(v, core.Tensor) and v.trainable and v.dtype == np.float32
    v.assign([3.0, 4.0])
    assert v.numpy().tolist() == [3.0, 4.0]
    v.assign_sub([1.0, 1.0])
    assert v.numpy().tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match=r"Variable 'w' \(id \d+\).assign: expected shape \(2,\), got \(3,\)"):  # fmt: skip
        v.assign([1.0, 2.0, 3.0])
    assert "variable(" in repr(v) and "name='w'" in repr(v)
    assert not core.variable([1.0], trainable=False).trainable


def test_repr_shows_value_and_dtype():
    assert repr(core.tensor([1.0, 2.0])) == "tensor([1., 2.], dtype=float32)"
