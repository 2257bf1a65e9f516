"""tapeviz.teach.slips: the slips a public check names, and engine errors told as the
student's mistake without the engine's fix."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.teach.grading import derivative
from tapeviz.teach.slips import (
    DOUT_LEFT_OUT,
    answer,
    expect_gradient,
    expect_returns,
    name_slip,
    numerical_vjp,
)


def test_numerical_vjp_is_dout_times_the_jacobian():
    rng = np.random.default_rng(0)
    x, w, dout = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(numerical_vjp(lambda x, w: x @ w, [x, w], dout, 0), dout @ w.T,
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(numerical_vjp(lambda x, w: (x @ w, "cache"), [x, w], dout, 1),
                               x.T @ dout, rtol=1e-6)  # fmt: skip


def test_a_slip_is_named_only_where_it_differs_from_the_answer():
    want = np.array([1.0, -2.0, 3.0])
    dy = np.array([0.5, 2.0, -1.5])
    assert name_slip(want * dy, want * dy, {DOUT_LEFT_OUT: want}) is None
    assert name_slip(want, want * dy, {DOUT_LEFT_OUT: want}) == DOUT_LEFT_OUT
    # with dy = 1 the slip computes the answer: a wrong answer gets its pattern instead
    assert name_slip(-want, want, {DOUT_LEFT_OUT: want}).startswith("the sign is flipped")
    with pytest.raises(AssertionError, match="^dx: dout, the gradient arriving"):
        expect_gradient(want, want * dy, "dx", slips={DOUT_LEFT_OUT: want})


def test_expect_returns_names_the_placeholder_and_a_wrong_count():
    with pytest.raises(AssertionError, match="replace the ... with your answer"):
        expect_returns(None, ["dx", "dw"], "f")
    with pytest.raises(AssertionError, match="expected 3 results \\(dx, dw, db\\), got 2"):
        expect_returns((1, 2), ["dx", "dw", "db"], "f")
    assert expect_returns((1, 2), ["a", "b"], "f") == [1, 2]


def test_a_constants_only_gradient_is_dy_left_out_not_a_dtype():
    tv.register_kernel(
        "SlipsLeaky", "numpy", lambda i, a: np.where(i["x"] > 0, i["x"], 0.1 * i["x"])
    )
    tv.register_gradient("SlipsLeaky", lambda dy, saved, attrs: {
        "x": lambda: tv.where(saved[0] > 0, 1.0, 0.1)}, inputs_to_save=["x"])  # fmt: skip
    try:
        op = lambda x: tv.run_kernel("SlipsLeaky", {"x": x})
        with pytest.raises(AssertionError) as e:
            answer("the gradient", derivative, op, np.array([1.0, -2.0]))
    finally:
        tv.unregister_gradient("SlipsLeaky")
        tv.unregister_kernel("SlipsLeaky", "numpy")
    assert "is dy, the gradient arriving, multiplied in?" in str(e.value)
    assert "'x'" in str(e.value) and "expected dtype" not in str(e.value)


def test_an_unsummed_broadcast_is_named_by_its_shapes_without_the_fix():
    @tv.custom_grad
    def scale(x, g, save):
        save([x])

        def grad_func(dy, saved):
            return [dy * g, dy * saved[0]]  # g's gradient left (N, D)

        return {"value": x * g, "grad_func": grad_func}

    loss = lambda x, g: tv.sum(scale(x, g))
    with pytest.raises(AssertionError) as e:
        answer("scale", tv.grads(loss), tv.tensor(np.ones((4, 3))), tv.tensor(np.ones(3)))
    message = str(e.value)
    assert "the gradient of g has shape (4, 3), but g has shape (3,)" in message
    assert "sum_to" not in message and "tv." not in message


def test_other_errors_keep_their_first_line():
    with pytest.raises(AssertionError, match=r"^f: ZeroDivisionError: division by zero$"):
        answer("f", lambda: 1 / 0)
