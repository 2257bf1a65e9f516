"""Issue 12, class 1: a value saved for backward cannot change behind the tape's back.
``Variable.assign`` after the forward pass raises (naming the node, the variable and the
user's line, as PyTorch raises for in-place changes); a numpy array of the user's that an op
saved is owned by the tape (copied), so changing it in place cannot change the gradient."""

import inspect

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.autodiff.backward import StaleValueError

X = np.array([1.0, -2.0, 0.5])
W = np.array([3.0, 4.0, -1.5])


def test_assigning_a_saved_variable_before_gradient_raises_naming_node_variable_and_line():
    v = core.variable(X, name="w")
    with core.Tape() as tape:
        y = core.sum(v * v)
        line = inspect.currentframe().f_lineno - 1
    v.assign(X * 10)
    with pytest.raises(StaleValueError) as info:
        tape.gradient(y, v)
    msg = str(info.value)
    assert "variable 'w'" in msg and "node 0 (Mul" in msg and "assigned 1 time(s)" in msg
    assert f"test_saved_value_versioning.py:{line}" in msg


def test_a_persistent_tape_raises_on_a_second_gradient_after_assign():
    v = core.variable(X)
    with core.Tape(persistent=True) as tape:
        y = core.sum(core.exp(v) * v)
    g = tape.gradient(y, v)
    np.testing.assert_allclose(g.numpy(), autograd.grad(lambda x: anp.sum(anp.exp(x) * x))(X))
    v.assign_sub(0.1 * g.numpy())
    with pytest.raises(StaleValueError, match="assigned 1 time"):
        tape.gradient(y, v)


def test_assign_that_cannot_matter_is_fine():
    v = core.variable(X)
    with core.Tape() as tape:
        y = core.sum(v + 2.0)  # Add saves nothing: its gradient does not read v
    v.assign(X * 10)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), np.ones(3))


def test_assign_then_a_fresh_forward_is_fine_and_optimizers_still_train():
    v = core.variable([3.0])
    opt = core.optim.SGD(0.1)
    for _ in range(30):
        opt.minimize(lambda: core.sum(v * v))
    assert abs(v.item()) < 0.01


def test_a_numpy_operand_changed_in_place_cannot_change_the_gradient():
    x, w = core.tensor(X), W.copy()
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(x * w)
    w[:] = 100.0  # the user's array, after the forward pass
    oracle = autograd.grad(lambda x: anp.sum(x * W))(X)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), oracle)
    assert (w == 100.0).all()  # the user's array is theirs: not frozen, not restored


def test_a_numpy_view_operand_is_owned_too():
    x, base = core.tensor(X), np.stack([W, W])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.sin(x * base[0]))
    base[0] = 0.0
    oracle = autograd.grad(lambda x: anp.sum(anp.sin(x * W)))(X)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), oracle, rtol=1e-12)


class Scale(core.DifferentiableFunction):
    """Y = X1 * X2, backward reads the saved inputs."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, a, b):
        return a * b

    def backward(self, dy, compute, a, b):
        return dy * b, dy * a


def test_a_numpy_operand_saved_by_a_differentiable_function_is_owned():
    x, w = core.tensor(X), W.copy()
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(Scale()(x, w))
    w *= 0.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), W)


@pytest.mark.parametrize("access", ["data", "numpy"])
def test_a_tensors_value_cannot_be_written_in_place_behind_the_tape(access):
    """``.data`` and ``.numpy()`` are read-only views: a saved value cannot be changed in
    place (PyTorch's ``.data`` would let it change silently); the gradient stays right."""
    v = core.variable(X, name="w")
    x = core.tensor(W)
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(v * v * x)
    for t in (v, x):
        view = getattr(t, access)
        view = view() if callable(view) else view
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 100.0
    gv, gx = tape.gradient(y, [v, x])
    np.testing.assert_array_equal(gv.numpy(), 2 * X * W)
    np.testing.assert_array_equal(gx.numpy(), X * X)


VIEWS = {
    "reshape": lambda w: core.reshape(core.reshape(w, (6,)), (2, 3)),
    "transpose": lambda w: core.transpose(core.transpose(w)),
    "identity": core.identity,
    "stop_gradient": core.stop_gradient,
    "expand_dims+squeeze": lambda w: core.squeeze(core.expand_dims(w, 0), 0),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_a_numpy_operand_seen_through_a_view_kernel_is_owned(view):
    """A view kernel's output shares the user's memory: it is owned when saved, as its input
    would be (before: the gradient read the mutated array, silently)."""
    w0 = np.arange(6.0).reshape(2, 3) + 10
    x, w = core.tensor(w0 - 9), w0.copy()
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(x * VIEWS[view](w))
    w[...] = 0.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), w0)


def test_matrix_times_a_numpy_vector_is_owned():
    """``x @ w`` with a 1-D numpy ``w`` reshapes ``w`` (a view) before BatchMatMul saves it."""
    x, w = core.tensor(X), W.copy()
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.reshape(x, (1, 3)) @ w) + core.sum(x @ w)
    w[:] = 0.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), 2 * W)
