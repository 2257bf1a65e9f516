"""Issue 12, class 2: nothing silently detaches. A list or tuple holding tensors is stacked
with ops (the tape records it; gradients match HIPS autograd's ``np.array`` of boxes); a
recorded tensor turned into a numpy array inside a tape is a named error."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as core

X = np.array([0.5, -1.5, 2.0])


def _grad(f):
    return core.grad(f)(core.tensor(X)).numpy()


@pytest.mark.parametrize(
    "f, oracle",
    [
        (lambda x: core.mean([x, x + 2]), lambda x: anp.mean(anp.array([x, x + 2]))),
        (lambda x: core.sum(core.tensor([x, 3 * x])), lambda x: anp.sum(anp.array([x, 3 * x]))),
        (
            lambda x: core.sum(core.tensor((x, x * x)) ** 2),
            lambda x: anp.sum(anp.array((x, x * x)) ** 2),
        ),
        (
            lambda x: core.sum(core.exp([[x, x], [x * 2, 1.0 + 0 * x]])),
            lambda x: anp.sum(anp.exp(anp.array([[x, x], [x * 2, 1.0 + 0 * x]]))),
        ),
        (
            lambda x: core.sum(core.tensor([x[0], 2.0, x[1] * x[2]]) ** 2),
            lambda x: anp.sum(anp.array([x[0], 2.0, x[1] * x[2]]) ** 2),
        ),
    ],
    ids=["mean of a list", "tensor of a list", "tuple", "nested, mixed", "scalars and a number"],
)
def test_lists_of_tensors_are_stacked_differentiably(f, oracle):
    np.testing.assert_allclose(_grad(f), autograd.grad(oracle)(X), rtol=1e-12)


def test_stacking_keeps_dtype_and_name_and_records_a_node():
    x = core.tensor(X)
    with core.Tape() as tape:
        tape.watch(x)
        y = core.tensor([x, 2.0 * x], name="pair")
    assert y.dtype == np.float64 and y.shape == (2, 3) and y.name == "pair"
    assert tape.producer(y) is not None
    assert core.tensor([x, x], dtype="float32").dtype == np.float32
    with pytest.raises(ValueError, match=r"tensor: cannot stack tensors of different shapes"):
        core.tensor([x, x[0]])


def test_lists_without_tensors_are_converted_as_before():
    assert core.tensor([1.0, 2.0]).dtype == np.float32
    assert core.tensor([[1, 2]]).dtype == np.int32


def test_np_asarray_of_a_recorded_tensor_inside_a_tape_names_the_hazard():
    x = core.tensor(X)
    with core.Tape() as tape:
        tape.watch(x)
        y = x * 2.0
        for arg in (x, y):
            with pytest.raises(TypeError, match=r"recorded by an active tape.*tv.stack"):
                np.asarray(arg)
        assert np.asarray(core.tensor([1.0])).shape == (1,)  # not recorded: fine
        assert y.numpy().shape == (3,)  # an explicit constant: fine
    np.testing.assert_allclose(np.asarray(y), 2 * X)  # outside a tape: numpy works
    v = core.variable([1.0, 2.0])
    with core.Tape():
        with pytest.raises(TypeError, match="recorded by an active tape"):
            np.array(v)
    with core.no_grad():
        assert np.asarray(y).shape == (3,)


def _ag_softmax(z):
    e = anp.exp(z - anp.max(z, -1, keepdims=True))
    return e / anp.sum(e, -1, keepdims=True)


def _ag_sigmoid(z):
    return 1 / (1 + anp.exp(-z))


_P = np.array([[0.2, 0.8, -0.3], [0.5, 0.5, 1.1]])
_Q = np.array([[1.0, 2.0, 0.1], [0.5, -1.0, 0.3]])
LOSSES = {
    "softmax_cross_entropy (soft labels)": (
        lambda a, b: core.losses.softmax_cross_entropy(core.softmax(a), b),
        lambda a, b: -anp.mean(anp.sum(_ag_softmax(a) * anp.log(_ag_softmax(b)), -1)),
    ),
    "mean_squared_error": (
        lambda a, b: core.losses.mean_squared_error(a * 2, b),
        lambda a, b: anp.mean((b - a * 2) ** 2),
    ),
    "binary_cross_entropy": (
        lambda a, b: core.losses.binary_cross_entropy(core.sigmoid(a), core.sigmoid(b)),
        lambda a, b: (
            -anp.mean(
                _ag_sigmoid(a) * anp.log(_ag_sigmoid(b))
                + (1 - _ag_sigmoid(a)) * anp.log(1 - _ag_sigmoid(b))
            )
        ),
    ),
    "binary_cross_entropy (logits)": (
        lambda a, b: core.losses.binary_cross_entropy(core.sigmoid(a), b, from_logits=True),
        lambda a, b: anp.mean(anp.logaddexp(0.0, b) - _ag_sigmoid(a) * b),
    ),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_a_loss_differentiates_its_labels_when_they_are_a_recorded_tensor(loss):
    """Before: the losses read the labels with .numpy(), so a teacher's soft targets (or the
    other side of an MSE) silently got a zero gradient. Now as PyTorch: both sides."""
    tv_fn, ag_fn = LOSSES[loss]
    a, b = core.tensor(_P), core.tensor(_Q)
    with core.Tape() as tape:
        tape.watch(a, b)
        value = tv_fn(a, b)
    ga, gb = tape.gradient(value, [a, b], unconnected_gradients="zero")
    np.testing.assert_allclose(value.item(), ag_fn(_P, _Q), rtol=1e-12)
    np.testing.assert_allclose(ga.numpy(), autograd.grad(ag_fn, 0)(_P, _Q), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), autograd.grad(ag_fn, 1)(_P, _Q), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_tensor_of_a_recorded_tensor_keeps_the_gradient(dtype):
    """``tv.tensor(x * 2)`` in a tape was a detached copy (gradient 2x instead of 4x, or None
    after a dtype change); now an op, as ``tv.tensor([x * 2])[0]`` already was."""
    x = core.tensor(X)
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.cast(core.tensor(x * x, dtype=dtype), "float64") * 2.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 4 * X, rtol=1e-6)
    outside = core.tensor(x)  # not recorded: a plain copy, as before
    assert (
        outside is not x and type(outside) is core.Tensor and outside.numpy().tolist() == X.tolist()
    )
