"""Found while testing issue 33 item 10 (``arctan2(y, tv.tensor(1e-8, dtype="float64"))``
differed from PyTorch by 5e-9): ``tv.tensor(0.1, dtype="float64")`` went through float32
first (Python floats default to float32) and came out as 0.10000000149011612; ints asked as
int64 went through int32 (2**40 wrapped). With ``dtype`` given, a Python number goes straight
to it, as ``np.asarray(x, dtype)`` does."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


@pytest.mark.parametrize("value", [0.1, 1e-8, 1 / 3, 1e300, -2.5e-310])
@pytest.mark.parametrize("wrap", [lambda v: v, lambda v: [v, v], lambda v: [[v]]])
def test_python_floats_asked_as_float64_are_numpys(value, wrap):
    got = tv.tensor(wrap(value), dtype="float64").numpy()
    np.testing.assert_array_equal(got, np.asarray(wrap(value), dtype=np.float64))


def test_ints_asked_as_int64_and_other_dtypes_are_numpys():
    assert tv.tensor(2**40, dtype="int64").numpy().item() == 2**40
    assert tv.tensor([2**40, -(2**41)], dtype=np.int64).numpy().tolist() == [2**40, -(2**41)]
    np.testing.assert_array_equal(tv.tensor(0.1, dtype="float16").numpy(), np.float16(0.1))
    np.testing.assert_array_equal(tv.tensor(1, dtype="float64").numpy(), 1.0)


def test_the_defaults_are_unchanged():
    assert tv.tensor(0.1).dtype == np.float32 and tv.tensor([1, 2]).dtype == np.int32
    assert tv.tensor(np.float64(0.1)).dtype == np.float64
