"""Assignment A's hidden tests: the gradients the notebook registers, called through the
engine in the submission's process on fresh random inputs, with the engine's own reverse
mode refused inside them (the notebook says so), compared here with the derivatives."""

from __future__ import annotations

import numpy as np
from checks import Failed, close, test

QUESTIONS = {"q1": 5, "q2": 4, "q3": 4, "q4": 3}

PROBES = r'''
import numpy as np
import tapeviz as tv

RULE = "assignment A is graded: derive each gradient and write it yourself"


def kernel_vjp(ns, kernel, x, dy, attrs):
    """dy * d kernel(x)/dx, through the gradient the notebook registered for the kernel."""
    with tv.refuse_reverse_mode(RULE):
        t = tv.tensor(x)
        with tv.Tape() as tape:
            tape.watch(t)
            y = tv.run_kernel(kernel, {"x": t}, attrs)
        tv.allow_next_pass()
        (g,) = tape.gradient(y, [t], output_gradients=tv.tensor(dy), unconnected_gradients="zero")
    return np.asarray(g.numpy(), float)


def kernel_second(ns, kernel, x, attrs):
    """d2 kernel(x)/dx2: the engine differentiating the notebook's gradient."""
    with tv.refuse_reverse_mode(RULE):
        t = tv.tensor(x)
        with tv.Tape() as outer:
            outer.watch(t)
            with tv.Tape() as inner:
                inner.watch(t)
                y = tv.run_kernel(kernel, {"x": t}, attrs)
            tv.allow_next_pass()
            (g,) = inner.gradient(y, [t], output_gradients=tv.tensor(np.ones(np.shape(x))),
                                  unconnected_gradients="zero")
        tv.allow_next_pass()
        (h,) = outer.gradient(g, [t], output_gradients=tv.tensor(np.ones(np.shape(x))),
                              unconnected_gradients="zero")
    return np.asarray(h.numpy(), float)


def custom_vjp(ns, name, args, dy):
    """The gradients of the notebook's custom_grad function ``name`` for upstream dy."""
    fn = ns[name]
    with tv.refuse_reverse_mode(RULE):
        ts = [tv.tensor(a) for a in args]
        with tv.Tape() as tape:
            for t in ts:
                tape.watch(t)
            y = fn(*ts)
        tv.allow_next_pass()
        gs = tape.gradient(y, ts, output_gradients=tv.tensor(dy), unconnected_gradients="zero")
    return [np.asarray(g.numpy(), float) for g in gs]
'''


def _softsign_vjp(sub, x, dy):
    return sub.call("kernel_vjp", kernel="Softsign", x=x, dy=dy, attrs={})


@test("q1", 3)
def softsign_points_and_dy(sub, rng):
    x = np.concatenate([rng.normal(0, 3, 20), [0.0, 1e-9, -1e-9, 40.0, -40.0]])
    dy = rng.uniform(-2.0, 2.0, x.shape)
    want = dy / (1 + np.abs(x)) ** 2
    got = _softsign_vjp(sub, x, dy)
    g = np.asarray(got, float) if np.shape(got) == x.shape else None
    if g is not None and np.allclose(g, want * (1 + np.abs(x)), rtol=1e-5):
        raise Failed("softsign'(x): the square on (1 + |x|) is missing")
    if g is not None and np.allclose(g, want / dy, rtol=1e-5):
        raise Failed("softsign'(x): dy, the gradient arriving, is not multiplied in")
    close(got, want, "softsign'(x)", where={"x < 0": x < 0})


@test("q1", 1)
def softsign_shapes(sub, rng):
    for x in (np.array(rng.normal()), rng.normal(0, 2, (2, 3))):
        dy = rng.uniform(-2.0, 2.0, x.shape)
        close(_softsign_vjp(sub, x, dy), dy / (1 + np.abs(x)) ** 2, f"softsign' on {x.shape}")


@test("q1", 1)
def softsign_second_derivative(sub, rng):
    x = rng.uniform(0.2, 4.0, 8) * rng.choice([-1.0, 1.0], 8)
    got = sub.call("kernel_second", kernel="Softsign", x=x, attrs={})
    if np.shape(got) == x.shape and not np.asarray(got, float).any():
        raise Failed("softsign'': 0 everywhere: is the gradient computed with numpy "
                     "(x.numpy()) rather than tv ops?")  # fmt: skip
    close(got, -2 * np.sign(x) / (1 + np.abs(x)) ** 3, "softsign''(x)", where={"x < 0": x < 0})


def _leaky_vjp(sub, x, dy, alpha):
    return sub.call("kernel_vjp", kernel="StudentLeakyRelu", x=x, dy=dy, attrs={"alpha": alpha})


@test("q2", 2)
def leaky_relu_other_alpha_and_dy(sub, rng):
    x = rng.normal(0, 2, (4, 5))
    dy = rng.uniform(-2.0, 2.0, x.shape)
    for alpha in (float(rng.uniform(0.2, 0.5)), float(rng.uniform(0.001, 0.05))):
        close(_leaky_vjp(sub, x, dy, alpha), dy * np.where(x > 0, 1.0, alpha),
              f"leaky_relu'(x) with alpha={alpha:.3g}", where={"x < 0": x < 0}, rtol=1e-6)  # fmt: skip


@test("q2", 1)
def leaky_relu_at_the_kink(sub, rng):
    alpha = float(rng.uniform(0.1, 0.4))
    x = np.array([0.0, 0.0, -0.0])
    got = _leaky_vjp(sub, x, np.ones(3), alpha)
    close(got, np.full(3, alpha), "leaky_relu'(0): the slope on the left, alpha", rtol=1e-6)


@test("q2", 1)
def leaky_relu_scalar(sub, rng):
    for x in (abs(rng.normal()) + 0.1, -abs(rng.normal()) - 0.1):
        dy = float(rng.uniform(-2.0, 2.0))
        close(_leaky_vjp(sub, np.array(x), np.array(dy), 0.1),
              dy * (1.0 if x > 0 else 0.1), f"leaky_relu'({x:.3g})", rtol=1e-6)  # fmt: skip


def _scale_shift(sub, rng, n, d, what):
    x, g, b = rng.normal(size=(n, d)), rng.normal(size=d), rng.normal(size=d)
    dy = rng.normal(size=(n, d))
    got = sub.call("custom_vjp", name="scale_shift", args=[x, g, b], dy=dy)
    if not isinstance(got, list) or len(got) != 3:
        raise Failed(f"{what}: expected a gradient for each of x, g and b")
    for name, gv, wv in zip("xgb", got, [dy * g, (dy * x).sum(0), dy.sum(0)]):
        close(gv, wv, f"the gradient of {name}, shape ({n}, {d})")


@test("q3", 3)
def scale_shift_other_shapes(sub, rng):
    for n, d in ((1, int(rng.integers(2, 6))), (int(rng.integers(5, 9)), 2)):
        _scale_shift(sub, rng, n, d, "scale_shift")


@test("q3", 1)
def scale_shift_square(sub, rng):
    _scale_shift(sub, rng, 3, 3, "scale_shift (3, 3)")


@test("q4", 1)
def log_cosh_first(sub, rng):
    x = np.concatenate([rng.uniform(-4, 4, 15), [0.0, 30.0, -30.0]])
    dy = rng.uniform(-1.5, 1.5, x.shape)
    got = sub.call("kernel_vjp", kernel="LogCosh", x=x, dy=dy, attrs={})
    close(got, dy * np.tanh(x), "log_cosh'(x)")


@test("q4", 2)
def log_cosh_second(sub, rng):
    x = np.concatenate([rng.uniform(-4, 4, 15), [0.0, 30.0]])
    got = sub.call("kernel_second", kernel="LogCosh", x=x, attrs={})
    if np.shape(got) == x.shape and not np.asarray(got, float).any():
        raise Failed("log_cosh'': 0 everywhere: is the gradient computed with numpy "
                     "(x.numpy()) rather than tv ops?")  # fmt: skip
    close(got, 1 - np.tanh(x) ** 2, "log_cosh''(x)", atol=1e-9)
