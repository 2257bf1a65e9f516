"""tv.jit: results equal eager mode's bit for bit, on the traced arguments and on new ones;
what is read at call time (variables), what is drawn fresh (random ops), what traces again
(new shapes, static values, rebound names, re-registered kernels) and what falls back to
eager mode (a recording tape, detect_anomaly)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as tv


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def chain(x):
    y = x
    for _ in range(5):
        y = tv.exp(tv.tanh(y * 0.5 + 0.1))
    return tv.sum(y)


@pytest.fixture
def xs():
    rng = np.random.default_rng(0)
    return [tv.tensor(rng.uniform(-1, 1, 7)) for _ in range(3)]


@pytest.mark.parametrize("wrap", [tv.grad, tv.value_and_grad, tv.hessian, lambda f: f])
def test_compiled_equals_eager_bitwise_on_new_values(wrap, xs):
    jf = tv.jit(wrap(chain))
    first = jf(xs[0])  # traces (an eager run)
    assert jf.traces == 1
    for x in xs:
        got, want = jf(x), wrap(chain)(x)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert all(same_bits(g.numpy(), w.numpy()) for g, w in zip(got, want))
    assert jf.traces == 1
    assert isinstance(first, tuple) == isinstance(jf(xs[1]), tuple)


def test_grads_of_two_arguments_and_numpy_arguments(xs):
    f = tv.grads(lambda a, b: tv.sum(a * b + tv.sin(a) * tv.cos(b)))
    jf = tv.jit(f)
    a, b = xs[0].numpy(), xs[1].numpy()
    jf(a, b)
    for a, b in ((xs[1], xs[2]), (xs[2].numpy(), xs[0].numpy())):
        got, want = jf(a, b), f(a, b)
        assert all(same_bits(g.numpy(), w.numpy()) for g, w in zip(got, want))
    assert jf.traces == 1


def test_gradient_agrees_with_hips_autograd(xs):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def ref(x):
        y = x
        for _ in range(5):
            y = anp.exp(anp.tanh(y * 0.5 + 0.1))
        return anp.sum(y)

    jf = tv.jit(tv.grad(chain))
    for x in xs:
        np.testing.assert_allclose(jf(x).numpy(), autograd.grad(ref)(x.numpy()), rtol=1e-12)


def test_variables_are_read_when_the_program_runs():
    w = tv.variable([1.0, 2.0], name="w")
    f = tv.jit(lambda x: tv.sum(w * x))
    x = tv.tensor([1.0, 1.0])
    assert f(x).item() == 3.0
    w.assign([10.0, 20.0])
    assert f(x).item() == 30.0  # not the traced value 3
    assert f.traces == 1


def test_assign_inside_runs_on_every_call():
    w = tv.variable([1.0, 2.0], name="w")

    def step(x):
        loss = tv.sum(w * x)
        w.assign(w * 0.5)
        return loss, tv.sum(w)  # reads the new value

    f = tv.jit(step)
    x = tv.tensor([1.0, 1.0])
    seen = [tuple(t.item() for t in f(x)) for _ in range(3)]
    assert seen == [(3.0, 1.5), (1.5, 0.75), (0.75, 0.375)]
    assert np.allclose(w.numpy(), [0.125, 0.25]) and w._version == 3


def test_variable_arguments_and_assign_to_an_argument():
    f = tv.jit(lambda v, x: v.assign(v + x))
    a, b = tv.variable([1.0]), tv.variable([5.0])
    x = tv.tensor([1.0])
    assert f(a, x) is a and f(b, x) is b  # the argument itself is returned, as eagerly
    assert a.item() == 2.0 and b.item() == 6.0
    assert f.traces == 2  # a Variable argument is guarded by identity (issue 33, class 1)
    assert f(a, x) is a and a.item() == 3.0 and f.traces == 2


def test_a_variable_made_and_assigned_inside_is_refused():
    def f(x):
        v = tv.variable([0.0])
        v.assign(x)
        return v

    with pytest.raises(tv.JitError, match="created and assigned inside"):
        tv.jit(f)(tv.tensor([1.0]))


def test_random_values_are_fresh_on_every_call():
    f = tv.jit(lambda x: x + tv.random_normal((1000,), dtype="float64"))
    x = tv.tensor(np.zeros(1000))
    draws = [f(x).numpy() for _ in range(3)]
    assert not np.array_equal(draws[1], draws[2])
    assert abs(draws[2].mean()) < 0.2 and 0.8 < draws[2].std() < 1.2
    seeded = tv.jit(lambda x: x + tv.random_uniform((5,), seed=3, dtype="float64"))
    assert same_bits(seeded(x[:5]).numpy(), seeded(x[:5]).numpy())  # a seed: the same draw


def test_dropout_masks_are_fresh_and_follow_the_layer_seed():
    tv.nn.set_seed(1)
    layer = tv.nn.Dropout(0.5, seed=7)
    f = tv.jit(lambda x: layer(x))
    x = tv.tensor(np.ones(400, np.float32))
    masks = [f(x).numpy() != 0 for _ in range(3)]
    assert not np.array_equal(masks[1], masks[2])
    eager = tv.nn.Dropout(0.5, seed=7)
    eager_masks = [eager(x).numpy() != 0 for _ in range(3)]
    assert all(np.array_equal(m, e) for m, e in zip(masks, eager_masks))  # the same stream


def test_closure_and_global_rebinding_traces_again():
    scale = tv.tensor([2.0])
    f = tv.jit(lambda x: x * scale)
    x = tv.tensor([3.0])
    assert f(x).item() == 6.0
    scale = tv.tensor([10.0])  # noqa: F841 - rebinds the closure cell
    assert f(x).item() == 30.0
    assert f.traces == 2


GLOBAL_SHIFT = 1.0


def _shifted(x):
    return x + GLOBAL_SHIFT


def test_a_rebound_global_traces_again():
    global GLOBAL_SHIFT
    f = tv.jit(_shifted)
    x = tv.tensor([1.0])
    assert f(x).item() == 2.0
    GLOBAL_SHIFT = 5.0
    try:
        assert f(x).item() == 6.0
    finally:
        GLOBAL_SHIFT = 1.0
    assert f.traces == 2


def test_static_arguments_and_python_numbers_are_part_of_the_signature():
    f = tv.jit(lambda x, n, scale: tv.sum(x**n) * scale, static_argnums=(1,))
    x = tv.tensor([1.0, 2.0])
    assert f(x, 2, 1.0).item() == 5.0
    assert f(x, 3, 1.0).item() == 9.0
    assert f(x, 3, 2.0).item() == 18.0
    assert f(tv.tensor([1.0, 2.0, 3.0]), 3, 2.0).item() == 72.0
    assert f.traces == 4
    assert f(x, 2, 1.0).item() == 5.0 and f.traces == 4  # cached


def test_a_re_registered_gradient_traces_again():
    f = tv.jit(tv.grad(lambda x: tv.sum(tv.relu(x))))
    x = tv.tensor([-1.0, 2.0])
    assert f(x).numpy().tolist() == [0.0, 1.0]

    def guided(dy, saved, attrs):
        return {"x": lambda: dy * 7.0}

    with tv.gradient_override("Relu", guided):
        assert f(x).numpy().tolist() == [7.0, 7.0]
    assert f(x).numpy().tolist() == [0.0, 1.0]


def test_under_a_recording_tape_it_runs_eagerly_so_gradients_flow():
    f = tv.jit(lambda x: tv.sin(x) * 2)
    x = tv.tensor([0.3])
    f(x)
    g = tv.grad(lambda x: tv.sum(f(x)))(x)
    assert np.allclose(g.numpy(), 2 * np.cos(0.3))
    with tv.detect_anomaly():
        assert np.allclose(f(x).numpy(), 2 * np.sin(0.3))


def test_nested_jit_inlines():
    inner = tv.jit(lambda x: tv.tanh(x) * 3)
    outer = tv.jit(lambda x: inner(x) + 1)
    x = tv.tensor([0.2, 0.4])
    outer(x)
    assert same_bits(outer(x).numpy(), (tv.tanh(x) * 3 + 1).numpy())
    assert inner.traces == 0 and outer.traces == 1


def test_pytrees_in_and_out():
    def f(p, x, scale=1.0):
        h = tv.tanh(x @ p["w"] + p["b"])
        return {"out": h * scale, "parts": (h, tv.sum(h)), "n": 3}

    rng = np.random.default_rng(1)
    p = {"w": tv.tensor(rng.normal(size=(3, 2))), "b": tv.tensor(rng.normal(size=2))}
    x = tv.tensor(rng.normal(size=(4, 3)))
    jf = tv.jit(f)
    jf(p, x, scale=2.0)
    got, want = jf(p, x, scale=2.0), f(p, x, scale=2.0)
    assert got["n"] == 3 and set(got) == {"out", "parts", "n"}
    assert same_bits(got["out"].numpy(), want["out"].numpy())
    assert got["parts"][0] is not got["out"] and same_bits(got["parts"][1], want["parts"][1])


def test_aliased_arguments_are_part_of_the_signature():
    f = tv.jit(lambda a, b: a * 2 + b)
    x, y = tv.tensor([1.0]), tv.tensor([10.0])
    assert f(x, x).item() == 3.0
    assert f(x, y).item() == 12.0  # not the aliased program
    assert f.traces == 2


def test_an_input_returned_as_is_and_names_kept():
    def f(x):
        y = tv.exp(x)
        y.name = "y"
        return x, y

    jf = tv.jit(f)
    x = tv.tensor([0.0], name="x")
    jf(x)
    a, b = jf(x)
    assert a is x and b.name == "y" and b.item() == 1.0


def test_a_disposed_argument_is_named():
    f = tv.jit(lambda x: x * 2)
    x = tv.tensor([1.0])
    f(x)
    x.dispose()
    with pytest.raises(tv.DisposedError):
        f(x)


def test_minimize_with_jit_matches_eager_training_bitwise():
    def run(jit):
        w, b = tv.variable(0.0, name="w"), tv.variable(0.0, name="b")
        xs, ys = tv.data.regression_1d(n_samples=50, seed=0)
        opt = tv.optim.Adam(0.1)
        costs = []
        for _ in range(20):
            loss = lambda: tv.losses.mean_squared_error(ys, w * xs + b)  # noqa: E731
            costs.append(opt.minimize(loss, return_cost=True, jit=jit).item())
        return costs, w.numpy(), opt

    eager, jitted = run(False), run(True)
    assert eager[0] == jitted[0] and same_bits(eager[1], jitted[1])
    (jf,) = jitted[2]._jit_steps.values()
    assert jf.traces == 1  # a fresh lambda each step runs the same program


def test_fit_with_jit_matches_eager_fit_bitwise():
    x, y = tv.data.spirals(n_samples=150, n_classes=3, seed=0)

    def run(jit):
        tv.nn.set_seed(0)
        model = tv.nn.Sequential([tv.nn.Dense(16, "relu"), tv.nn.Dropout(0.1), tv.nn.Dense(3)])
        h = model.fit(x, y, "softmax_cross_entropy", "adam", epochs=3, batch_size=32,
                      verbose=0, seed=0, jit=jit)  # fmt: skip
        return h, [p.numpy() for p in model.parameters()]

    (h1, p1), (h2, p2) = run(False), run(True)
    assert h1["loss"] == h2["loss"] and h1["accuracy"] == h2["accuracy"]
    assert all(same_bits(a, b) for a, b in zip(p1, p2))


def test_fit_with_jit_checks_labels_on_every_call():
    x, y = tv.data.spirals(n_samples=64, n_classes=3, seed=0)
    model = tv.nn.Sequential([tv.nn.Dense(3)])
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=1, batch_size=32, verbose=0, jit=True)
    bad = y.copy()
    bad[40] = 7  # in the second batch: the compiled program's OneHot refuses it
    with pytest.raises(IndexError, match=r"one_hot: indices must be in \[0, 3\)"):
        model.fit(x, bad, "softmax_cross_entropy", "sgd", epochs=1, batch_size=32,
                  verbose=0, shuffle=False, jit=True)  # fmt: skip
    f = tv.jit(lambda y, p: tv.losses.binary_cross_entropy(y, p, True))
    p = tv.tensor([0.5, -0.5])
    f(tv.tensor([1.0, 0.0]), p)
    with pytest.raises(ValueError, match=r"labels must be numbers in \[0, 1\]"):
        f(tv.tensor([1.0, 2.0]), p)


def test_retracing_warns_and_says_why():
    f = tv.jit(lambda x, k: x * k)
    x = tv.tensor([1.0])
    with pytest.warns(UserWarning, match="traced 9 times"):
        for k in range(9):
            f(x, float(k))


def test_custom_grad_traces_its_ops_forward_and_backward(xs):
    @tv.custom_grad
    def softsign(x, save):
        save([x])
        return x / (1 + tv.abs(x)), lambda dy, saved: dy / tv.square(1 + tv.abs(saved[0]))

    f = tv.grad(lambda x: tv.sum(softsign(x) * x))
    jf = tv.jit(f)
    jf(xs[0])
    for x in xs[1:]:
        assert same_bits(jf(x).numpy(), f(x).numpy())


def test_assert_jit_matches_catches_a_stale_program_and_counts_refusals():
    from tapeviz.core.jit.testing import assert_jit_matches

    x, y = tv.tensor([1.0, 2.0]), tv.tensor([-3.0, 0.5])
    assert assert_jit_matches(tv.grad(chain), x, reruns=[(y,)]) is None
    refused = assert_jit_matches(lambda x: x if tv.sum(x) > 0 else -x, x)
    assert isinstance(refused, tv.ConcretizationError)
    state = {"k": 1.0}  # read through an object: the trace cannot see it change

    def impure(x):
        state["k"] += 1.0
        return x * state["k"]

    with pytest.raises(AssertionError, match="differs from eager mode"):
        assert_jit_matches(impure, x, reruns=[(y,)])


def test_a_copy_inside_is_an_op_not_a_constant():
    f = tv.jit(tv.grad(lambda x: tv.sum(tv.tensor(x) * x)))
    f(tv.tensor([1.0, 2.0]))
    assert f(tv.tensor([3.0, 4.0])).numpy().tolist() == [6.0, 8.0]
