"""The engine's fast paths give what the general paths give: binary ops with Python numbers
and same-dtype tensors, cached scalar constants, reshape without -1, Variable.assign of a
temporary (no copy, measured with tracemalloc; never an alias of an array someone holds)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.ops.arguments import binary_args


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


def test_constants_are_fresh_tensors_that_no_one_can_change():
    x = core.tensor([1.0, 2.0])
    with core.Tape() as tape:
        x * 0.5
        x * 0.5
    b1, b2 = (n.inputs["b"] for n in tape.nodes)
    assert b1.id != b2.id  # tapeviz draws one constant per op
    with pytest.raises(ValueError, match="read-only"):
        b1.data[...] = 7.0  # a constant another op may share cannot be changed
    with core.tidy():
        x * 0.5
    assert not b1.is_disposed and float(b1.numpy()) == 0.5
    assert (x * 0.5).numpy().tolist() == [0.5, 1.0]


@pytest.mark.parametrize("numbers", [[0.0, -0.0, 0.0], [-0.0, 0.0], [1.0, float("nan"), 1.0]])
def test_signed_zero_and_nan_constants_give_what_numpy_gives(numbers):
    x = core.tensor(np.array([1.0, -2.0, 0.0], np.float32))
    for number in numbers:  # in turn: an earlier constant never stands in for a later one
        got, want = (x * number).numpy(), x.numpy() * np.float32(number)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
        assert np.signbit(got).tolist() == np.signbit(want).tolist()


def test_python_numbers_with_an_integer_tensor():
    i = core.tensor(np.array([1, 2], np.int32))
    assert (i * 1).dtype == np.int32 and (i * 1).numpy().tolist() == [1, 2]
    assert (i * 1.0).dtype == np.float32 and (i * 0.5).numpy().tolist() == [0.5, 1.0]


def test_reshape_fast_path_and_minus_one():
    x = core.tensor(np.arange(6.0))
    assert core.reshape(x, (2, 3)).shape == (2, 3)
    assert core.reshape(x, (-1, 2)).shape == (3, 2)
    assert core.reshape(core.zeros((0, 3)), (0, 5)).shape == (0, 5)
    with pytest.raises(ValueError, match="cannot reshape"):
        core.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="cannot reshape"):
        core.reshape(x, (-1, 4))


def test_assign_never_aliases_an_array_someone_holds():
    v = core.variable(np.zeros(3, np.float32))
    held = np.ones(3, np.float32)
    v.assign(held)
    held[0] = 7.0
    assert v.numpy().tolist() == [1.0, 1.0, 1.0]
    box = [np.full(3, 2.0, np.float32)]
    v.assign(box[0])
    box[0][:] = 9.0
    assert v.numpy().tolist() == [2.0, 2.0, 2.0]
    v.assign(np.ones(3, np.float64))  # another dtype: converted
    assert v.dtype == np.float32 and v.numpy().tolist() == [1.0, 1.0, 1.0]
    base = np.ones((2, 3), np.float32)
    v.assign(base[1])  # a view of an array someone holds: copied, never aliased
    base[1] = 5.0
    assert v.numpy().tolist() == [1.0, 1.0, 1.0]


def test_assigning_a_temporary_makes_no_copy():
    n = 1 << 20  # 4 MiB of float32
    v = core.variable(np.zeros(n, np.float32))

    def peak(fn):
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    alone = peak(lambda: np.full(n, 3.0, np.float32))
    assigned = peak(lambda: v.assign(np.full(n, 3.0, np.float32)))
    assert alone >= 4 * n and assigned < alone + 4 * n // 2  # a copy would add 4 MiB
    assert v.numpy()[-1] == 3.0
    copied = peak(lambda: v.assign(np.full(n, 3.0, np.float64)))  # the check sees a copy
    assert copied >= 8 * n + 4 * n
