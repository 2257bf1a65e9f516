"""Issue 22, silently wrong classes 3-13: each family against HIPS autograd (or, where
autograd itself is wrong or silent, the closed form), with the example the issue gives."""

import math
import threading

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as core

RNG = np.random.default_rng(22)


# --- class 3: binary cross-entropy from logits, at 0 and everywhere --------------------------
def _bce_ag(z, y):
    return anp.mean(anp.maximum(z, 0) - z * y + anp.log1p(anp.exp(-anp.abs(z))))


@pytest.mark.parametrize("z", [[0.0, 0.0, 0.0], [0.0, -3.0, 40.0], [-1e4, 1e4, 0.5]])
def test_bce_from_logits_gradient_and_hessian(z):
    z, y = np.array(z), np.array([1.0, 0.0, 0.3])
    sig = 0.5 * (1 + np.tanh(z / 2))  # the logistic function, without overflow
    loss = lambda t: core.losses.binary_cross_entropy(y, t, from_logits=True)  # noqa: E731
    np.testing.assert_allclose(core.grad(loss)(core.tensor(z)).numpy(), (sig - y) / 3, atol=1e-15)
    h = core.hessian(loss)(core.tensor(z)).numpy()
    np.testing.assert_allclose(h, np.diag(sig * (1 - sig) / 3), atol=1e-15)
    np.testing.assert_allclose(loss(core.tensor(z)).item(), _bce_ag(z, y), rtol=1e-12)
    # autograd, away from the kink where its formula's pieces agree
    if not np.any(z == 0):
        np.testing.assert_allclose(
            core.grad(loss)(core.tensor(z)).numpy(), autograd.grad(_bce_ag)(z, y), atol=1e-15
        )


def test_bce_from_logits_reaches_soft_labels():
    z, y = np.array([0.0, 2.0]), np.array([0.25, 0.75])
    g = core.grads(lambda z, y: core.losses.binary_cross_entropy(y, z, from_logits=True))
    _, gy = g(core.tensor(z), core.tensor(y))
    np.testing.assert_allclose(gy.numpy(), -z / 2)  # d/dy (softplus(z) - z y) = -z


# --- class 4: forward mode through eigen- and singular vectors -------------------------------
def _sym(n):
    b = RNG.standard_normal((n, n))
    return b + b.T


FORWARD_CASES = {
    "eigh vectors": (lambda a: core.linalg.eigh(a)[1], lambda a: anp.linalg.eigh(a)[1]),
    "svd u": (lambda a: core.linalg.svd(a)[0], lambda a: anp.linalg.svd(a, False)[0]),
    "svd vh": (lambda a: core.linalg.svd(a)[2], lambda a: anp.linalg.svd(a, False)[2]),
    "hvp nuclear norm": (
        core.grad(lambda a: core.linalg.norm(a, "nuc")),
        autograd.grad(lambda a: anp.sum(anp.linalg.svd(a, False)[1])),
    ),
    "hvp spectral norm": (
        core.grad(lambda a: core.linalg.norm(a, 2)),
        autograd.grad(lambda a: anp.linalg.svd(a, False)[1][0]),
    ),
    "hvp eigvalsh": (
        core.grad(lambda a: core.sum(core.linalg.eigvalsh(a) ** 3)),
        autograd.grad(lambda a: anp.sum(anp.linalg.eigh(a)[0] ** 3)),
    ),
}


@pytest.mark.parametrize("case", list(FORWARD_CASES))
def test_jvp_through_eigenvectors_and_singular_vectors(case):
    tv_f, ag_f = FORWARD_CASES[case]
    a, da = _sym(3), _sym(3)
    _, jv = core.jvp(tv_f, [core.tensor(a)], [core.tensor(da)])
    want = np.tensordot(autograd.jacobian(ag_f)(a), da, axes=2)
    assert np.abs(want).max() > 1e-3  # the answer is not zero
    np.testing.assert_allclose(jv.numpy(), want, atol=1e-9)


# --- class 5: a tensor used inside a custom forward without being an input -------------------
def test_custom_grad_using_a_variable_not_passed_is_a_named_error():
    w = core.variable([2.0], name="w")

    @core.custom_grad
    def scale(x, save):
        return x * w, lambda dy, saved: dy * w

    with pytest.raises(ValueError, match=r"custom_grad\(scale\).*'w'.*Pass it as an input"):
        core.variable_grads(lambda: core.sum(scale(core.tensor([3.0]))), [w])
    assert scale(core.tensor([3.0])).numpy().tolist() == [6.0]  # no tape: nothing is lost

    @core.custom_grad
    def scale2(x, w, save):
        return x * w, lambda dy, saved: [dy * w, dy * x]

    _, g = core.variable_grads(lambda: core.sum(scale2(core.tensor([3.0]), w)), [w])
    assert g["w"].numpy().tolist() == [3.0]


def test_a_tracked_value_captured_by_a_custom_forward_is_a_named_error():
    def f(x):
        z = x * 3  # depends on x: its gradient must not vanish

        @core.custom_grad
        def k(a, save):
            return a * z, lambda dy, saved: dy * z

        return core.sum(k(x))

    with pytest.raises(ValueError, match=r"custom_grad\(k\).*without taking it as an input"):
        core.grad(f)(core.tensor([1.0, 2.0]))


@pytest.mark.parametrize("read", ["numpy", "asarray", "item", "op"])
def test_differentiable_function_reading_a_variable_is_a_named_error(read):
    w = core.variable([2.0], name="w")
    how = {
        "numpy": lambda: w.numpy(),
        "asarray": lambda: np.asarray(w),
        "item": lambda: w.item(),
        "op": lambda: (w * 1.0).numpy(),
    }[read]

    class Scale(core.DifferentiableFunction):
        def forward(self, x):
            return x * how()

        def backward(self, dy, compute_gradients):
            return dy * 2.0

    with pytest.raises(ValueError, match=r"Scale.forward uses variable.*'w'"):
        core.variable_grads(lambda: core.sum(Scale()(core.tensor([3.0]))), [w])


# --- class 6: a tensor slope is learnable -----------------------------------------------------
def _leaky_ag(x, a):
    return anp.where(x > 0, x, a * x)


def _elu_ag(x, a):
    return anp.where(x > 0, x, a * (anp.exp(anp.minimum(x, 0)) - 1))


@pytest.mark.parametrize("op,ag", [(core.leaky_relu, _leaky_ag), (core.elu, _elu_ag)])
@pytest.mark.parametrize("shape", [(), (4,)])
def test_leaky_relu_and_elu_with_a_tensor_alpha(op, ag, shape):
    x = np.array([-1.5, 0.0, 2.0, -0.3])
    a = np.full(shape, 0.3) if shape == () else np.array([0.1, 0.2, 0.3, 0.4])
    alpha = core.variable(a, name="alpha")
    with core.Tape() as tape:
        y = core.sum(op(core.tensor(x), alpha) ** 2)
    g = tape.gradient(y, alpha)
    want = autograd.grad(lambda a: anp.sum(ag(x, a) ** 2))(a)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(op(core.tensor(x), alpha).numpy(), ag(x, a))
    gx = core.grad(lambda t: core.sum(op(t, alpha) ** 2))(core.tensor(x))
    np.testing.assert_allclose(gx.numpy(), autograd.grad(lambda t: anp.sum(ag(t, a) ** 2))(x))


# --- class 7: gradient_override is context-local ----------------------------------------------
def test_gradient_override_does_not_reach_another_thread():
    started, release, seen = threading.Event(), threading.Event(), {}

    def other():
        x = core.tensor([-1.0, 2.0])
        started.set()
        release.wait()
        seen["other"] = core.grad(lambda x: core.sum(core.relu(x) * 3.0))(x).numpy().tolist()

    t = threading.Thread(target=other)
    t.start()
    started.wait()
    with core.gradient_override("Relu", lambda dy, saved, attrs: {"x": lambda: dy * 0}):
        release.set()
        t.join()
        inside = core.grad(lambda x: core.sum(core.relu(x)))(core.tensor([1.0])).numpy()
        assert core.get_gradient("Relu").grad_fn(None, (), {})["x"] is not None
    assert seen["other"] == [0.0, 3.0] and inside.tolist() == [0.0]
    assert core.grad(lambda x: core.sum(core.relu(x)))(core.tensor([1.0])).numpy().tolist() == [1]


# --- class 8: a gradient computed inside its own tape's block is recorded ---------------------
def test_gradient_inside_the_same_tapes_block_differentiates_again():
    x = core.tensor(np.array([3.0]))
    with core.Tape(persistent=True) as tape:
        tape.watch(x)
        y = core.sum(x**4)
        g1 = tape.gradient(y, x)  # 4 x^3
        g2 = tape.gradient(core.sum(g1), x)  # 12 x^2
        s2 = core.sum(g2)
    g3 = tape.gradient(s2, x)  # 24 x
    f = lambda t: anp.sum(t**4)  # noqa: E731
    d1 = autograd.grad(f)
    d2 = autograd.grad(lambda t: anp.sum(d1(t)))
    d3 = autograd.grad(lambda t: anp.sum(d2(t)))
    for got, want in ((g1, d1), (g2, d2), (g3, d3)):
        np.testing.assert_allclose(got.numpy(), want(x.numpy()))


# --- class 9: variable_grads never merges two variables -------------------------------------
def test_variable_grads_keeps_variables_that_share_a_name():
    v1, v2 = core.variable([1.0], name="w"), core.variable([2.0], name="w")
    _, g = core.variable_grads(lambda: core.sum(v1 * 3 + v2 * 5))
    assert len(g) == 2
    assert g[v1].numpy().tolist() == [3.0] and g[v2].numpy().tolist() == [5.0]
    _, g = core.variable_grads(lambda: core.sum(v1 * 3), [v1])
    assert g["w"].numpy().tolist() == [3.0]


# --- class 10: special points and precision ---------------------------------------------------
def _sinc_derivatives(x):
    """sinc', sinc'' and sinc''' from the Taylor series (|pi x| small) or the closed form."""
    z = math.pi * x
    if abs(z) < 1e-2:
        c = [(-1) ** k / math.factorial(2 * k + 1) for k in range(8)]  # sinc = sum c_k z^2k
        d1 = sum(c[k] * 2 * k * z ** (2 * k - 1) for k in range(1, 8)) * math.pi
        d2 = sum(c[k] * 2 * k * (2 * k - 1) * z ** (2 * k - 2) for k in range(1, 8)) * math.pi**2
        d3 = (
            sum(c[k] * 2 * k * (2 * k - 1) * (2 * k - 2) * z ** (2 * k - 3) for k in range(2, 8))
            * math.pi**3
        )
        return d1, d2, d3
    g1 = autograd.grad(lambda t: anp.sinc(t))
    g2 = autograd.grad(g1)
    return g1(x), g2(x), autograd.grad(g2)(x)


@pytest.mark.parametrize("x", [0.0, 1e-12, 1e-6, 1e-3, 0.1, 0.159, 0.16, 0.7, -2.5])
def test_sinc_derivatives_of_three_orders(x):
    f = lambda t: core.sum(core.sinc(t))  # noqa: E731
    t = core.tensor(np.array([x]))
    got = [core.grad(f), core.grad(core.grad(f)), core.grad(core.grad(core.grad(f)))]
    for g, want in zip(got, _sinc_derivatives(x)):
        np.testing.assert_allclose(g(t).numpy()[0], want, rtol=1e-9, atol=1e-12)
    if x == 0.0:
        assert core.grad(core.grad(f))(t).numpy()[0] == pytest.approx(-(math.pi**2) / 3)


@pytest.mark.parametrize(
    "op,ag", [(core.logaddexp, np.logaddexp), (core.logaddexp2, np.logaddexp2)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_gradients_keep_their_precision(op, ag, dtype):
    a = np.array([-2e7, -2e7, 0.0, 30.0, -np.inf, np.inf], dtype)
    b = np.array([-2e7, -2e7 + 4, 0.0, -30.0, 1.0, 1.0], dtype)
    ga, gb = core.grads(lambda a, b: core.sum(op(a, b)))(core.tensor(a), core.tensor(b))
    fa = autograd.grad(lambda a, b: anp.sum(getattr(anp, ag.__name__)(a, b)), 0)
    fb = autograd.grad(lambda a, b: anp.sum(getattr(anp, ag.__name__)(a, b)), 1)
    # float32: e^-60 has a relative error ~60 eps32 (the argument's rounding, amplified)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    a64, b64 = a[2:4].astype(float), b[2:4].astype(float)
    np.testing.assert_allclose(ga.numpy()[2:4], fa(a64, b64), rtol=rtol)
    np.testing.assert_allclose(gb.numpy()[2:4], fb(a64, b64), rtol=rtol)
    assert ga.numpy()[0] == gb.numpy()[0] == 0.5  # -2e7 in float32 too
    base = math.e if op is core.logaddexp else 2.0
    d = 4.0  # the exact weights e^a / (e^a + e^b) at a distance 4 apart
    np.testing.assert_allclose(ga.numpy()[1], 1 / (1 + base**d), rtol=1e-6)
    assert ga.numpy()[4:].tolist() == [0.0, 1.0] and gb.numpy()[4:].tolist() == [1.0, 0.0]


# --- class 11: index arrays changed after the forward pass ------------------------------------
@pytest.mark.parametrize("how", ["getitem", "gather", "tensor index", "bool mask"])
def test_changing_an_index_array_after_the_forward_pass_cannot_move_the_gradient(how):
    x = core.tensor(np.array([1.0, 2.0, 3.0]))
    idx = np.array([0, 0])
    with core.Tape() as tape:
        tape.watch(x)
        if how == "getitem":
            y = core.sum(x[idx])
        elif how == "gather":
            y = core.sum(core.gather(x, idx))
        elif how == "tensor index":
            y = core.sum(x[core.tensor(idx)])
        else:
            mask = np.array([True, False, False])
            y = core.sum(x[mask] * 2.0)
            mask[:] = [False, False, True]
    idx[:] = 2
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 0.0, 0.0]


# --- class 12: dtype rules --------------------------------------------------------------------
def test_mean_of_float16_sums_in_float32_as_numpy():
    x = np.full(10000, 30.0, np.float16)
    for mean in (core.mean, np.mean):
        m = mean(core.tensor(x))
        assert m.dtype == np.float16 and m.item() == np.mean(x) == 30.0
    g = core.grad(lambda t: core.mean(t))(core.tensor(x)).numpy()
    assert g.dtype == np.float16 and np.all(g == np.float16(1e-4))


@pytest.mark.parametrize(
    "x,lo,hi",
    [
        ([0, 1, 3], 0.5, 2.5),
        ([0, 1, 3], 1, 2),
        (np.array([0, 1, 3], np.int8), 0.5, 2.5),
        ([0.0, 1.0, 2.0], 2.0, 1.0),  # lo > hi: numpy gives hi
        ([0, 5, 9], None, 5),
        ([0.0, 1.5, 3.0], np.array([1.0, 2.0, 0.0]), np.array([2.0, 1.0, 4.0])),
        (np.array([0.0, 1.5, 3.0], np.float32), np.float64(0.5), 2.0),
    ],
)
@pytest.mark.parametrize("fn", ["tv.clip", "np.clip", "method"])
def test_clip_follows_numpy_values_and_dtypes(x, lo, hi, fn):
    arr = np.asarray(x)
    want = np.clip(arr, lo, hi)
    t = core.tensor(arr)
    got = {"tv.clip": lambda: core.clip(t, lo, hi), "np.clip": lambda: np.clip(t, lo, hi),
           "method": lambda: t.clip(lo, hi)}[fn]()  # fmt: skip
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_clip_with_tensor_bounds_has_pytorchs_gradients():
    x = np.array([0.0, 1.0, 2.0, 3.0, 1.5, 0.5, np.nan])
    lo = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 0.0])
    hi = np.array([2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    gs = core.grads(lambda x, lo, hi: core.sum(core.clip(x, lo, hi)))(
        core.tensor(x), core.tensor(lo), core.tensor(hi)
    )
    # torch.clamp(x, lo, hi) backward (torch 2.13): x where lo <= x <= hi (not NaN); lo where
    # x < lo <= hi; hi where x > hi or lo > hi
    assert gs[0].numpy().tolist() == [0, 1, 1, 0, 0, 0, 0]
    assert gs[1].numpy().tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert gs[2].numpy().tolist() == [0, 0, 0, 1, 1, 1, 0]
    with core.Tape() as tape:  # a scalar tensor bound broadcasts and sums its gradient
        lo_t = core.tensor(0.5)
        tape.watch(lo_t)
        y = core.sum(core.clip(core.tensor([0.0, 0.2, 1.0]), lo_t, 2.0))
    assert tape.gradient(y, lo_t).item() == 2.0


# --- class 13: repeated eigenvalues: a documented subgradient ---------------------------------
def test_eigenvalue_gradient_at_a_repeated_eigenvalue_is_a_subgradient():
    eye = core.tensor(np.eye(3))
    g = core.grad(lambda m: core.linalg.eigvalsh(m)[-1])(eye).numpy()
    # an element of the subdifferential of the convex lambda_max at I: {Z psd, trace 1}
    assert np.allclose(g, g.T) and np.linalg.eigvalsh(g).min() > -1e-12
    assert np.isclose(np.trace(g), 1.0)
    # the limit of the true gradients at I + t V diag(0, 1, 2) V^T, t -> 0+
    _, v = np.linalg.eigh(np.eye(3))
    near = np.eye(3) + 1e-8 * v @ np.diag([0.0, 1.0, 2.0]) @ v.T
    g_near = autograd.grad(lambda m: anp.linalg.eigh(m)[0][-1])(near)
    np.testing.assert_allclose(g, g_near, atol=1e-6)
    # a function treating the tied eigenvalues alike gets its true gradient
    g_sum = core.grad(lambda m: core.sum(core.linalg.eigvalsh(m) ** 2))(eye).numpy()
    np.testing.assert_allclose(g_sum, np.tril(2 * np.eye(3) * 2) / 2 + 0 * np.eye(3), atol=1e-12)
    assert "subdifferential" in core.linalg.eigh.__doc__


def test_eigenvector_gradient_at_a_repeated_eigenvalue_raises_and_says_why():
    with pytest.raises(ValueError, match="vectors does not exist.*not differentiable there"):
        core.grad(lambda m: core.sum(core.linalg.eigh(m)[1] ** 3))(core.tensor(np.eye(3)))
