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
