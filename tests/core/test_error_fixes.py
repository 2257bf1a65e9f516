"""Issue 35, item 3: each error names the user's line and a fix that works. Every test
raises the error, checks the message, then applies the fix the message names and checks
the result against torch (an independent system)."""

from __future__ import annotations

import re
import traceback

import numpy as np
import pytest
import torch

import tapeviz.core as tv
from tapeviz.core.registry.validation import GradientError

X = np.array([0.5, -1.0, 2.0], np.float64)


def _torch_grad(fn, x):
    t = torch.tensor(x, requires_grad=True)
    fn(t).backward()
    return t.grad.numpy()


def test_grad_of_a_non_scalar_names_dy_and_the_fix_works():
    f = lambda x: x * x  # noqa: E731
    with pytest.raises(ValueError) as info:
        tv.grad(f)(tv.tensor(X))  # the user's line
    msg = str(info.value)
    assert "output_gradients" not in msg  # tv.grad has no such argument
    assert "dy=tv.ones((3,))" in msg and "tv.sum(y)" in msg
    frames = traceback.extract_tb(info.tb)
    assert any(fr.filename == __file__ and "the user's line" in fr.line for fr in frames)
    fix = re.search(r"dy=(tv\.ones\(\(3,\)\))", msg).group(1)
    g = tv.grad(f)(tv.tensor(X), dy=eval(fix, {"tv": tv}))  # the fix the message names
    np.testing.assert_allclose(g.numpy(), _torch_grad(lambda t: (t * t).sum(), X))
    g = tv.grad(lambda x: tv.sum(f(x)))(tv.tensor(X))  # the other fix: reduce to a scalar
    np.testing.assert_allclose(g.numpy(), 2 * X)


def test_dy_of_the_wrong_shape_names_the_output_shape():
    with pytest.raises(ValueError, match=r"dy has shape \(2,\), not the output's \(3,\)"):
        tv.grad(lambda x: x * x)(tv.tensor(X), dy=tv.ones((2,)))


def _op(grad_func):
    @tv.custom_grad
    def twice(x, save):
        return x * 2.0, grad_func

    return twice


def _line_of(fn):
    return f"{__file__}:{fn.__code__.co_firstlineno}"


def test_custom_grad_of_a_wrong_shape_names_grad_func_and_never_sum_to():
    def grad_func(dy, saved):
        return dy[:2] * 2.0  # planted: (2,) for an input of (3,)

    with pytest.raises(GradientError) as info:
        tv.grad(lambda x: tv.sum(_op(grad_func)(x)))(tv.tensor(X))
    msg = str(info.value)
    assert _line_of(grad_func) in msg, msg  # the user's grad_func, file:line
    assert "sum_to" not in msg  # tv.sum_to cannot make (3,) of (2,)
    assert "expected shape (3,), got (2,)" in msg
    with pytest.raises(ValueError):  # what the old message suggested fails
        tv.sum_to(tv.ones((2,)), (3,))

    def fixed(dy, saved):  # the fix: one gradient of the input's shape
        return dy * 2.0

    g = tv.grad(lambda x: tv.sum(_op(fixed)(x)))(tv.tensor(X))
    np.testing.assert_allclose(g.numpy(), _torch_grad(lambda t: (t * 2.0).sum(), X))


def test_custom_grad_of_a_broadcast_suggests_sum_to_and_it_works():
    def grad_func(dy, saved):
        return tv.ones((4, 3)) * dy * 2.0  # planted: a (4, 3) broadcast for (3,)

    with pytest.raises(GradientError) as info:
        tv.grad(lambda x: tv.sum(_op(grad_func)(x)))(tv.tensor(X))
    msg = str(info.value)
    assert _line_of(grad_func) in msg, msg
    call = re.search(r"tv\.sum_to\(g, (\(3,\))\)", msg)
    assert call, msg

    def fixed(dy, saved):  # the suggested fix applied; its sum is 4 times the slope
        return tv.sum_to(grad_func(dy, saved), eval(call.group(1))) / 4.0

    g = tv.grad(lambda x: tv.sum(_op(fixed)(x)))(tv.tensor(X))
    np.testing.assert_allclose(g.numpy(), _torch_grad(lambda t: (t * 2.0).sum(), X))


@pytest.mark.parametrize(
    "gshape, ok", [((4, 3), True), ((1, 3), True), ((2,), False), ((3, 1), False), ((), False)]
)
def test_sum_to_is_suggested_exactly_when_it_can_work(gshape, ok):
    from tapeviz.core.custom.tfjs.vjp import sums_to

    assert sums_to(gshape, (3,)) is ok
    if ok:
        assert tv.sum_to(tv.ones(gshape), (3,)).shape == (3,)
