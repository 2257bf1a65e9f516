"""The engine's fast paths give what the general paths give: binary ops with Python numbers
and same-dtype tensors, cached scalar constants, reshape without -1, Variable.assign of a
temporary (no copy, never an alias of an array someone holds)."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.ops._util import _constant_array, binary_args
from tapeviz.core.tensor import _Constant


@pytest.mark.parametrize("number", [0.9, 2, -3, 0.0, -0.0, float("nan"), float("inf"), True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_binary_fast_path_matches_binary_args(number, dtype):
    x = core.tensor(np.array([1.5, -2.0, 0.0]).astype(dtype))
    y = core.tensor(np.array([0.5, 4.0, -1.0]).astype(dtype))
    v = core.variable(np.array([1.0, 3.0, -2.0]).astype(dtype))
    s = core.tensor(np.array(2.5).astype(dtype))  # 0-d: broadcasts
    s64 = core.tensor(np.array(0.25))  # another dtype: promoted by binary_args
    cases = [
        (lambda: core.mul(x, number), "Mul", (x, number)),
        (lambda: core.sub(number, x), "Sub", (number, x)),
        (lambda: core.add(x, y), "Add", (x, y)),
        (lambda: core.mul(v, y), "Mul", (v, y)),
        (lambda: core.sub(s, x), "Sub", (s, x)),
        (lambda: core.maximum(x, s64), "Maximum", (x, s64)),
    ]
    for op, kernel, args in cases:
        with np.errstate(all="ignore"):
            fast = op()
            a, b = binary_args(*args, kernel)
            slow = core.run_kernel(kernel, {"a": a, "b": b})
        assert fast.dtype == slow.dtype and fast.shape == slow.shape
        np.testing.assert_array_equal(fast.numpy(), slow.numpy())
        assert np.signbit(fast.numpy()).tolist() == np.signbit(slow.numpy()).tolist()


def test_constants_are_cached_arrays_in_fresh_tensors():
    x = core.tensor([1.0, 2.0])
    with core.Tape() as tape:
        x * 0.5
        x * 0.5
    b1, b2 = (n.inputs["b"] for n in tape.nodes)
    assert type(b1) is _Constant and b1.id != b2.id  # tapeviz draws one constant per op
    assert b1._data is b2._data and not b1._data.flags.writeable
    with core.tidy():
        x * 0.5
    assert not b1.is_disposed and float(b1.numpy()) == 0.5


def test_signed_zero_and_nan_are_not_cached():
    neg, pos = _constant_array(-0.0, np.dtype(np.float32)), _constant_array(0.0, np.dtype("f4"))
    assert np.signbit(neg) and not np.signbit(pos)
    assert np.isnan(_constant_array(float("nan"), np.dtype(np.float32)))
    assert _constant_array(1, np.dtype(np.int32)).dtype == np.int32
    assert _constant_array(1.0, np.dtype(np.int32)).dtype == np.float32


def test_reshape_fast_path_and_minus_one():
    x = core.tensor(np.arange(6.0))
    assert core.reshape(x, (2, 3)).shape == (2, 3)
    assert core.reshape(x, (-1, 2)).shape == (3, 2)
    assert core.reshape(core.zeros((0, 3)), (0, 5)).shape == (0, 5)
    with pytest.raises(ValueError, match="cannot reshape"):
        core.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="cannot reshape"):
        core.reshape(x, (-1, 4))


def test_assign_keeps_a_temporary_and_copies_what_someone_holds():
    v = core.variable(np.zeros(3, np.float32))
    held = np.ones(3, np.float32)
    v.assign(held)
    held[0] = 7.0
    assert v.numpy().tolist() == [1.0, 1.0, 1.0] and v._data is not held
    box = [np.full(3, 2.0, np.float32)]
    v.assign(box[0])
    assert v._data is not box[0]
    ref = []

    def make():
        a = np.full(3, 3.0, np.float32)
        ref.append(weakref.ref(a))
        return a

    v.assign(make())
    assert ref[0]() is v._data  # only the call held it: no copy
    v.assign(np.ones(3, np.float64))  # another dtype: converted (a copy)
    assert v.dtype == np.float32 and v.numpy().tolist() == [1.0, 1.0, 1.0]
    view = np.ones((2, 3), np.float32)[0]
    v.assign(view * 1)
    v.assign(np.ones((2, 3), np.float32)[1])  # a view: copied, never aliased
    assert v._data.base is None
