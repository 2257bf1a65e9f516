"""Overriding a built-in gradient (TensorFlow.js registerGradient): every op using the kernel
gets the override, restoring brings the built-in back. Example: guided-ReLU saliency."""

import warnings

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.autodiff.backward import GradientError
from tapeviz.core.registry import kernels as registry

RNG = np.random.default_rng(3)
W1 = RNG.standard_normal((6, 5)).astype(np.float32)
W2 = RNG.standard_normal((5, 4)).astype(np.float32)
IMAGE = RNG.standard_normal((1, 6)).astype(np.float32)


def guided_relu(dy, saved, attrs):
    """Guided backprop: pass only positive gradients through positive inputs."""
    (x,) = saved
    return {"x": lambda: dy * tv.cast(x > 0, dy.dtype) * tv.cast(dy > 0, dy.dtype)}


@pytest.fixture
def builtin_relu():
    """Put the exact built-in Relu config back whatever a test does."""
    builtin = tv.get_gradient("Relu")
    assert builtin.builtin
    yield builtin
    registry.primitive("Relu").grad = builtin


def net(x, k=3):
    """A tiny two-layer ReLU net; the class-k score (k=3 is active at IMAGE). Uses both the op and the method form."""
    h = tv.relu(x @ tv.tensor(W1))
    return (h @ tv.tensor(W2)).relu()[0, k]


def saliency(x):
    return tv.grad(net)(x)


def numpy_saliency(x, k=3, guided=True):
    h1 = x @ W1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ W2
    g = np.zeros_like(h2)
    g[0, k] = 1.0
    g2 = g * (h2 > 0) * ((g > 0) if guided else 1)
    ga1 = g2 @ W2.T
    g1 = ga1 * (h1 > 0) * ((ga1 > 0) if guided else 1)
    return g1 @ W1.T


def test_guided_relu_saliency_with_a_scoped_override(builtin_relu):
    x = tv.tensor(IMAGE)
    plain = saliency(x)
    with tv.gradient_override("Relu", guided_relu):
        guided = saliency(x)
        with tv.Tape() as tape:
            tape.watch(x)
            net(x)
        assert [n.style for n in tape.nodes if n.kernel == "Relu"] == ["override", "override"]
    np.testing.assert_allclose(guided.numpy(), numpy_saliency(IMAGE), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(plain.numpy(), numpy_saliency(IMAGE, guided=False), rtol=1e-5)
    assert not np.allclose(guided.numpy(), plain.numpy())
    # restored: the built-in is back, for every op using the kernel
    assert tv.get_gradient("Relu") is builtin_relu
    np.testing.assert_allclose(saliency(x).numpy(), plain.numpy())
    with tv.Tape() as tape:
        tape.watch(x)
        net(x)
    assert {n.style for n in tape.nodes if n.kernel == "Relu"} == {"builtin"}


def test_a_node_recorded_under_the_override_keeps_it(builtin_relu):
    x = tv.tensor([[-1.0, 2.0]])
    with tv.Tape() as tape:
        tape.watch(x)
        with tv.gradient_override("Relu", guided_relu):
            y = tv.relu(x)
    g = tape.gradient(y, x, output_gradients=tv.tensor([[5.0, -3.0]]))
    np.testing.assert_array_equal(g.numpy(), [[0.0, 0.0]])  # guided drops the negative dy
    assert tv.get_gradient("Relu") is builtin_relu


def test_override_is_restored_when_the_block_raises(builtin_relu):
    with pytest.raises(RuntimeError, match="boom"):
        with tv.gradient_override("Relu", guided_relu):
            raise RuntimeError("boom")
    assert tv.get_gradient("Relu") is builtin_relu


def test_register_gradient_overrides_and_re_registering_restores(builtin_relu):
    x = tv.tensor(IMAGE)
    plain = saliency(x).numpy()
    with pytest.warns(UserWarning, match="overriding the gradient of kernel 'Relu'"):
        tv.register_gradient("Relu", guided_relu, ["x"])
    np.testing.assert_allclose(saliency(x).numpy(), numpy_saliency(IMAGE), rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tv.register_gradient(
            "Relu",
            builtin_relu.grad_fn,
            builtin_relu.inputs_to_save,
            builtin_relu.outputs_to_save,
        )
    assert tv.get_gradient("Relu").grad_fn is builtin_relu.grad_fn
    np.testing.assert_allclose(saliency(x).numpy(), plain)


def test_an_override_with_a_wrong_shape_names_the_kernel(builtin_relu):
    def wrong(dy, saved, attrs):
        return {"x": lambda: tv.ones([7])}

    with tv.gradient_override("Relu", wrong):
        with pytest.raises(
            GradientError, match=r"'Relu'.*input 'x': expected shape \(3,\), got \(7,\)"
        ):
            tv.grad(lambda x: tv.relu(x).sum())(tv.tensor([1.0, -1.0, 2.0]))


def test_override_and_custom_grad_agree(builtin_relu):
    """The same guided gradient written as an override and as a custom_grad op."""

    @tv.custom_grad
    def guided(x, save):
        save([x])
        return tv.relu(
            x
        ), lambda dy, s: dy * tv.cast(s[0] > 0, dy.dtype) * tv.cast(dy > 0, dy.dtype)

    x, dy = tv.tensor([-1.0, 0.5, 2.0, 3.0]), tv.tensor([1.0, 1.0, -1.0, 2.0])
    g_custom = tv.grad(guided)(x, dy=dy)
    with tv.gradient_override("Relu", guided_relu):
        g_override = tv.grad(tv.relu)(x, dy=dy)
    np.testing.assert_array_equal(g_custom.numpy(), g_override.numpy())
    np.testing.assert_array_equal(g_custom.numpy(), [0.0, 1.0, 0.0, 2.0])
