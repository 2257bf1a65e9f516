"""tv.custom_grad (TensorFlow.js tf.customGrad): the seed's examples, composition, higher
order, the saved-intermediate hazard, and the error paths."""

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.autodiff.backward import GradientError

X = [1.5, -0.7, 0.3]


# --- the seed's five examples ----------------------------------------------------------------


@tv.custom_grad
def square(x, save):
    save([x])
    value = x.square()

    def grad_func(dy, saved):
        (x,) = saved
        return dy * (x * 2)

    return {"value": value, "grad_func": grad_func}


@tv.custom_grad
def custom_add(a, b, save):
    save([a, b])
    return {"value": a + b, "grad_func": lambda dy, saved: [dy, dy]}


@tv.custom_grad
def custom_exp(x, save):
    y = x.exp()
    save([y])
    return {"value": y, "grad_func": lambda dy, saved: dy * saved[0]}


@tv.custom_grad
def custom_clip(x, save):
    y = x.relu()
    save([x])
    return {"value": y, "grad_func": lambda dy, saved: dy * tv.cast(saved[0] > 0, "float32")}


@tv.custom_grad
def scaled_grad(x, save):
    y = x.square()
    save([x])
    return {"value": y, "grad_func": lambda dy, saved: dy * (saved[0] * 2 * 0.5)}


def test_square_value_gradient_and_one_node():
    x = tv.tensor(X)
    with tv.Tape() as tape:
        tape.watch(x)
        y = square(x)
    assert [n.label for n in tape.nodes] == ["square"]  # Square and Mul inside are not recorded
    node = tape.nodes[0]
    assert node.style == "custom_grad" and list(node.inputs) == ["x"]
    assert [(s.role, s.name) for s in node.saved] == [("input", "x")]
    assert node.saved[0].tensor is x and node.saved_nbytes == x.nbytes
    np.testing.assert_allclose(y.numpy(), np.square(X), rtol=1e-6)
    g = tape.gradient(y, x, output_gradients=tv.ones_like(y))
    np.testing.assert_allclose(g.numpy(), 2 * np.array(X, np.float32), rtol=1e-6)
    assert tv.check_grads(square, X, order=2).passed


def test_add_gives_dy_to_both_inputs():
    a, b = tv.tensor([1.0, 2.0]), tv.tensor([3.0, 4.0])
    ga, gb = tv.grads(lambda a, b: (custom_add(a, b) * tv.tensor([2.0, 5.0])).sum())(a, b)
    np.testing.assert_allclose(ga.numpy(), [2.0, 5.0])
    np.testing.assert_allclose(gb.numpy(), [2.0, 5.0])
    assert tv.check_grads(custom_add, [1.0, 2.0], [3.0, 4.0], order=2).passed


def test_exp_saves_its_output_and_differentiates_twice():
    x = tv.tensor(X)
    with tv.Tape() as tape:
        tape.watch(x)
        y = custom_exp(x)
    node = tape.nodes[0]
    assert [(s.role, s.name) for s in node.saved] == [("output", 0)]
    assert node.saved[0].tensor is y
    assert tv.check_grads(custom_exp, X, order=2).passed
    h = tv.hessian(lambda x: custom_exp(x).sum())(tv.tensor(X))
    np.testing.assert_allclose(h.numpy(), np.diag(np.exp(X)), rtol=1e-5)


def test_relu_style_clip_matches_the_builtin_relu():
    x = tv.tensor([-2.0, -0.5, 0.5, 3.0])
    dy = tv.tensor([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(custom_clip(x).numpy(), tv.relu(x).numpy())
    g_custom = tv.grad(custom_clip)(x, dy=dy)
    g_builtin = tv.grad(tv.relu)(x, dy=dy)
    np.testing.assert_array_equal(g_custom.numpy(), g_builtin.numpy())
    np.testing.assert_array_equal(g_custom.numpy(), [0.0, 0.0, 3.0, 4.0])
    assert tv.check_grads(custom_clip, [-2.0, -0.5, 0.5, 3.0]).passed


def test_scaled_gradient_is_what_was_written_and_the_checker_catches_it():
    x = tv.tensor(X)
    g = tv.grad(lambda x: scaled_grad(x).sum())(x)
    np.testing.assert_allclose(g.numpy(), X, rtol=1e-6)  # 0.5 * 2x, not 2x
    with pytest.raises(tv.GradientCheckError, match="scaled_grad"):
        tv.check_grads(scaled_grad, X)


# --- forms, composition, tidy, training ------------------------------------------------------


def test_pair_return_and_call_form_and_value_and_grad():
    def cube(x, save):
        save([x])
        return x * x * x, lambda dy, saved: dy * 3 * saved[0] * saved[0]

    op = tv.custom_grad(cube)
    assert op.__name__ == "cube"
    value, g = tv.value_and_grad(lambda x: op(x).sum())(tv.tensor([2.0, -1.0]))
    assert value.item() == pytest.approx(7.0)
    np.testing.assert_allclose(g.numpy(), [12.0, 3.0])


def test_composes_with_ordinary_ops_like_the_builtin():
    rng = np.random.default_rng(1)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))

    def custom_net(w, x):
        return tv.tanh(square(x @ w) + custom_exp(x @ w)).sum(axis=1)

    def builtin_net(w, x):
        return tv.tanh(tv.square(x @ w) + tv.exp(x @ w)).sum(axis=1)

    gc = tv.grads(lambda w, x: custom_net(w, x).sum())(tv.tensor(w), tv.tensor(x))
    gb = tv.grads(lambda w, x: builtin_net(w, x).sum())(tv.tensor(w), tv.tensor(x))
    for a, b in zip(gc, gb):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert tv.check_grads(custom_net, w, x).passed


def test_runs_inside_tidy_and_keeps_only_the_result():
    x = tv.tensor(X)
    before = tv.memory()["num_tensors"]

    def step():
        with tv.Tape() as tape:
            tape.watch(x)
            loss = custom_exp(x * 2).sum()
        return tape.gradient(loss, x)

    g = tv.tidy(step)
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(2 * np.array(X, np.float32)), rtol=1e-5)
    assert tv.memory()["num_tensors"] <= before + 1


def test_sgd_loop_with_variable_tape_and_assign():
    w = tv.variable([3.0, -2.0, 0.5], name="w")
    target = tv.tensor([1.0, 1.0, 1.0])
    losses = []
    for _ in range(100):
        with tv.Tape() as tape:
            loss = square(w - target).sum()
        (g,) = tape.gradient(loss, [w])
        w.assign(w - g * 0.1)
        losses.append(loss.item())
    np.testing.assert_allclose(w.numpy(), [1.0, 1.0, 1.0], atol=1e-5)
    assert losses[-1] < 1e-8 < losses[0]


def test_several_outputs_get_a_list_of_dy():
    calls = []

    @tv.custom_grad
    def sincos(x, save):
        save([x])

        def grad_func(dy, saved):
            calls.append(len(dy))
            return dy[0] * tv.cos(saved[0]) - dy[1] * tv.sin(saved[0])

        return [tv.sin(x), tv.cos(x)], grad_func

    x = tv.tensor(X)
    s, c = sincos(x)
    np.testing.assert_allclose(s.numpy(), np.sin(np.float32(X)), rtol=1e-6)
    assert tv.check_grads(lambda x: tv.stack(sincos(x)), X, order=2).passed
    g = tv.grad(lambda x: sincos(x)[1].sum())(x)  # the unused output's dy is zeros
    np.testing.assert_allclose(g.numpy(), -np.sin(np.float32(X)), rtol=1e-6)
    assert set(calls) == {2}


def test_grad_func_runs_once_for_several_inputs():
    calls = []

    @tv.custom_grad
    def mul3(a, b, c, save):
        save([a, b, c])

        def grad_func(dy, saved):
            calls.append(1)
            a, b, c = saved
            return [dy * b * c, dy * a * c, dy * a * b]

        return a * b * c, grad_func

    args = [tv.tensor([2.0]), tv.tensor([3.0]), tv.tensor([5.0])]
    gs = tv.grads(lambda a, b, c: mul3(a, b, c).sum())(*args)
    assert [g.item() for g in gs] == [15.0, 10.0, 6.0]
    assert calls == [1]
    assert tv.check_grads(mul3, [2.0], [3.0], [5.0], order=2).passed


def test_identity_output_is_a_fresh_tensor():
    @tv.custom_grad
    def ident(x, save):
        return x, lambda dy, saved: dy * 3

    x = tv.tensor([1.0])
    with tv.Tape() as tape:
        tape.watch(x)
        y = ident(x)
    assert y is not x and tape.producer(x) is None
    assert tape.gradient(y, x).item() == 3.0


# --- higher order and the saved-intermediate hazard ------------------------------------------


@tv.custom_grad
def exp_times_two(x, save):
    e = x.exp()  # an intermediate: neither an input nor an output
    save([e])
    return e * 2, lambda dy, saved: dy * saved[0] * 2


def test_second_order_of_a_gradient_written_with_ops():
    g2 = tv.grad(lambda x: tv.grad(lambda x: square(x).sum())(x).sum())(tv.tensor(X))
    np.testing.assert_allclose(g2.numpy(), [2.0, 2.0, 2.0])


def test_saved_intermediate_is_memory_and_first_order_works():
    x = tv.tensor(X)
    with tv.Tape() as tape:
        tape.watch(x)
        y = exp_times_two(x)
    assert [(s.role, s.name) for s in tape.nodes[0].saved] == [("memory", "saved0")]
    assert tape.nodes[0].attrs["intermediates"] == 1
    g = tape.gradient(y, x, output_gradients=tv.ones_like(y))
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(np.float32(X)), rtol=1e-6)
    assert tv.check_grads(exp_times_two, X).passed


def test_second_order_through_a_saved_intermediate_raises():
    with pytest.raises(GradientError, match=r"custom_grad\(exp_times_two\).*intermediate"):
        tv.grad(lambda x: tv.grad(lambda x: exp_times_two(x).sum())(x).sum())(tv.tensor(X))
    with pytest.raises(GradientError, match="save only the inputs or the outputs"):
        tv.hessian(lambda x: exp_times_two(x).sum())(tv.tensor(X))


def test_jvp_through_a_saved_intermediate_is_fine():
    # the double-VJP differentiates with respect to dy only: the intermediate is a constant
    x, t = tv.tensor(X), tv.tensor([1.0, 2.0, -1.0])
    _, out = tv.jvp(exp_times_two, [x], [t])
    np.testing.assert_allclose(out.numpy(), 2 * np.exp(np.float32(X)) * t.numpy(), rtol=1e-5)


def test_saved_tensor_made_outside_is_not_an_intermediate():
    scale = tv.tensor([3.0])

    @tv.custom_grad
    def scaled(x, save):
        save([x, scale])
        return x * scale, lambda dy, saved: dy * saved[1]

    assert tv.check_grads(scaled, X, order=2).passed


# --- validation --------------------------------------------------------------------------------


def _op(grad_result, n_inputs=1):
    def bad_grad(*xs):
        save = xs[-1]
        save(list(xs[:-1]))
        return xs[0] * 1.0, lambda dy, saved: grad_result(dy)

    bad_grad.__name__ = "bad_grad"
    return tv.custom_grad(bad_grad)


@pytest.mark.parametrize(
    "grad_result, n, message",
    [
        (lambda dy: [dy, dy], 1, r"returned 2 gradients, expected 1"),
        (lambda dy: dy, 2, r"returned one Tensor, expected a list of 2"),
        (lambda dy: tv.ones([5]), 1, r"input 0 \('x0'\): expected shape \(3,\), got \(5,\)"),
        (lambda dy: tv.cast(dy, "float64"), 1, r"input 0 .*expected dtype float32, got float64"),
        (lambda dy: [dy, "oops"], 2, r"input 1 \('x1'\): expected a Tensor, got str"),
        (lambda dy: [dy, None], 2, r"returned None for input 1 \('x1'\)"),
        (lambda dy: 1 / 0, 1, r"grad_func raised ZeroDivisionError"),
    ],
)
def test_bad_gradients_name_the_function_and_the_input(grad_result, n, message):
    op = _op(grad_result, n)
    xs = [tv.tensor([1.0, 2.0, 3.0]) for _ in range(n)]
    with pytest.raises(GradientError, match=r"custom_grad\(bad_grad\).*" + message):
        tv.grads(lambda *xs: op(*xs).sum())(*xs)


@pytest.mark.parametrize(
    "body, error, message",
    [
        (lambda x, save: save([x.numpy()]), TypeError, r"save\(\) takes Tensors, got ndarray"),
        (lambda x, save: save("x"), TypeError, r"save\(\) takes a list of Tensors"),
        (lambda x, save: x.numpy(), TypeError, r"broken must return .*got ndarray"),
        (lambda x, save: (x.numpy(), lambda dy, s: dy), TypeError, r"the value must be a Tensor"),
        (
            lambda x, save: {"value": x},
            ValueError,
            r"broken must return .*dict with keys \['value'\]",
        ),
        (lambda x, save: (x, "not callable"), TypeError, r"grad_func must be callable"),
    ],
)
def test_bad_forwards_record_nothing(body, error, message):
    def broken(x, save):
        return body(x, save)  # the save() cases raise before returning

    broken.__name__ = "broken"
    op = tv.custom_grad(broken)
    x = tv.tensor(X)
    with tv.Tape() as tape:
        tape.watch(x)
        with pytest.raises(error, match=r"custom_grad\(broken\): " + message):
            op(x)
    assert tape.nodes == []


def test_integer_inputs_never_need_a_gradient():
    @tv.custom_grad
    def repeat_scale(x, k, save):
        save([k])
        scale = tv.cast(k, "float32")
        return x * scale, lambda dy, saved: [dy * tv.cast(saved[0], "float32"), "ignored"]

    x, k = tv.tensor([1.0, 2.0]), tv.tensor([3], dtype="int32")
    gx, gk = tv.grads(lambda x, k: repeat_scale(x, k).sum())(x, k)
    np.testing.assert_array_equal(gx.numpy(), [3.0, 3.0])
    assert gk.dtype == np.int32 and gk.numpy().tolist() == [0]  # unconnected: zeros
