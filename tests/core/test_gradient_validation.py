"""Issue 12, class 7: one validator for built-in and custom gradients. A gradient dict with
an unknown name, a gradient of the wrong shape or dtype kind, a saved input the kernel lacks
and a nameless registration are errors naming the kernel and the input, never a silent 0."""

import re

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.autodiff.backward import GradientError
from tapeviz.core.registry.validation import reducible

X = np.array([1.0, 2.0], np.float32)


@pytest.fixture
def square():
    """A fresh kernel 'TrustSquare' on numpy; its gradient is registered by each test."""
    core.register_kernel("TrustSquare", "numpy", lambda i, a: i["x"] ** 2)
    yield
    core.unregister_kernel("TrustSquare", "numpy")
    if core.get_gradient("TrustSquare") is not None:
        core.unregister_gradient("TrustSquare")


def _grad():
    f = lambda x: core.sum(core.run_kernel("TrustSquare", {"x": x}))  # noqa: E731
    return core.grad(f)(core.tensor(X))


def test_a_right_gradient_passes_the_validator(square):
    core.register_gradient("TrustSquare", lambda dy, s, a: {"x": lambda: dy * 2.0 * s[0]}, ["x"])
    np.testing.assert_allclose(_grad().numpy(), 2 * X)


def test_a_misspelt_input_name_is_an_error_not_a_zero_gradient(square):
    core.register_gradient("TrustSquare", lambda dy, s, a: {"xx": lambda: dy * 2.0 * s[0]}, ["x"])
    with pytest.raises(GradientError, match=r"'TrustSquare'.*'xx', which is not an input.*'x'"):
        _grad()


def test_a_larger_gradient_is_never_summed_down(square):
    core.register_gradient("TrustSquare", lambda dy, s, a: {"x": lambda: core.ones((3, 2))})
    with pytest.raises(
        GradientError, match=r"'TrustSquare'.*input 'x': expected shape \(2,\), got \(3, 2\)"
    ):
        _grad()


@pytest.mark.parametrize("shape", [(1, 2), (2, 1), (1, 1, 2)])
def test_a_gradient_with_extra_size_one_axes_is_an_error(square, shape):
    """Not the broadcast the forward made (its output is (2,)): an error, not squeezed."""
    core.register_gradient("TrustSquare", lambda dy, s, a: {"x": lambda: core.ones(shape)})
    with pytest.raises(GradientError, match=rf"expected shape \(2,\), got {re.escape(str(shape))}"):
        _grad()


def test_a_gradient_of_another_dtype_kind_is_an_error(square):
    core.register_gradient("TrustSquare", lambda dy, s, a: {"x": lambda: np.array([1, 2])})
    with pytest.raises(
        GradientError, match=r"'TrustSquare'.*expected dtype kind float32, got int64"
    ):
        _grad()


def test_saving_an_unknown_input_names_the_kernel_and_the_input(square):
    core.register_gradient("TrustSquare", lambda dy, s, a: {"x": lambda: dy}, inputs_to_save=["z"])
    with pytest.raises(GradientError, match=r"inputs_to_save names 'z'.*kernel 'TrustSquare'.*'x'"):
        _grad()


def test_saving_an_unknown_output_index_is_an_error(square):
    core.register_gradient("TrustSquare", lambda dy, s, a: {"x": lambda: dy}, outputs_to_save=[3])
    with pytest.raises(GradientError, match=r"outputs_to_save of kernel 'TrustSquare'.*1 output"):
        _grad()


@pytest.mark.parametrize("name", [None, "", 3])
def test_a_gradient_needs_a_kernel_name(name):
    with pytest.raises(TypeError, match="register_gradient: name must be a non-empty kernel"):
        core.register_gradient(name, lambda dy, s, a: {})
    with pytest.raises(TypeError, match="gradient_override: name must be a non-empty kernel"):
        with core.gradient_override(name, lambda dy, s, a: {}):
            pass


def test_an_override_goes_through_the_same_validator():
    x = core.tensor(X)
    with core.gradient_override("Exp", lambda dy, s, a: {"X": lambda: dy}):
        with pytest.raises(GradientError, match=r"'Exp'.*'X', which is not an input"):
            core.grad(lambda x: core.sum(core.exp(x)))(x)


def test_custom_grad_uses_the_same_validator():
    @core.custom_grad
    def wide(x, save):
        return x * 1.0, lambda dy, saved: core.ones((3, 2))

    with pytest.raises(GradientError, match=r"wide.*expected shape \(2,\), got \(3, 2\)"):
        core.grad(lambda x: core.sum(wide(x)))(core.tensor(X))


def test_the_engines_broadcast_reduction_still_reduces():
    a, b = core.tensor(np.ones((3, 1), np.float32)), core.tensor(np.ones((1, 4), np.float32))
    ga, gb = core.grads(lambda a, b: core.sum(a * b))(a, b)
    assert ga.shape == (3, 1) and gb.shape == (1, 4)
    np.testing.assert_allclose(ga.numpy(), 4.0)
    w, v = core.tensor(np.ones((4, 5), np.float32)), core.tensor(np.ones((2, 3, 4), np.float32))
    gw = core.grad(lambda w: core.sum(core.matmul(v, w)))(w)  # batch broadcast of a matmul
    np.testing.assert_allclose(gw.numpy(), 6.0)


@pytest.mark.parametrize(
    "shape, gshape, outs, ok",
    [
        ((2,), (3, 2), [(2,)], False),  # the case: a gradient bigger than the output
        ((2,), (3, 2), [(3, 2)], True),  # x broadcast to the output
        ((3, 1), (3, 4), [(3, 4)], True),
        ((4, 5), (2, 4, 5), [(2, 3, 5)], True),  # matmul's batch broadcast
        ((4, 5), (7, 4, 5), [(2, 3, 5)], False),
        ((2, 2), (3, 2), [(3, 2)], False),  # not a broadcast of x at all
        ((2,), (2,), [(2,)], False),  # same shape: nothing to reduce
    ],
)
def test_reducible_accepts_only_the_forwards_broadcast(shape, gshape, outs, ok):
    assert reducible(shape, gshape, outs) is ok
