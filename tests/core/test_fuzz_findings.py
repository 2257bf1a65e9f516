"""Classes the differential fuzzer (tests/fuzz) found that issue 22 did not list, each
checked here as a class against numpy or PyTorch 2.13, on both backends."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapeviz.core as tv

BACKENDS = ("numpy", "numba")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -2.5])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_is_zero_off_the_diagonal_even_at_inf_and_nan(backend, k):
    """A select, not v * eye: numpy's diag has exact zeros off the diagonal."""
    with tv.backend(backend):
        got = tv.diag(tv.tensor(SPECIAL), k).numpy()
        w = np.arange(got.size, dtype=float).reshape(got.shape)
        g = tv.grad(lambda v: tv.sum(tv.diag(v, k) * tv.tensor(w)))(tv.tensor(SPECIAL)).numpy()
    np.testing.assert_array_equal(got, np.diag(SPECIAL, k))
    np.testing.assert_array_equal(g, np.diagonal(w, k))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize(("n", "ddof"), [(2, 3), (2, 2), (1, 1), (0, 1), (3, 5), (4, 1)])
def test_var_and_std_divide_by_n_minus_ddof_clipped_at_zero(backend, op, n, ddof):
    """numpy and PyTorch divide by max(n - ddof, 0): inf or NaN, never a negative number."""
    x = np.linspace(-1.0, 2.0, n)
    with tv.backend(backend):
        got = getattr(tv, op)(tv.tensor(x), ddof=ddof).item()
    want = getattr(np, op)(x, ddof=ddof)
    np.testing.assert_array_equal(got, want)
    t = getattr(torch, op)(torch.tensor(x), correction=ddof).item()
    np.testing.assert_array_equal(got, t)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["fmax", "fmin"])
def test_fmax_fmin_give_a_the_gradient_at_ties_as_documented_and_pytorch(backend, op):
    a = np.array([0.5, 1.0, np.nan, 2.0, -1.0, np.nan])
    b = np.array([0.5, np.nan, 1.0, 3.0, -1.0, np.nan])
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    with tv.backend(backend):
        ga, gb = tv.grads(lambda a, b: tv.sum(getattr(tv, op)(a, b) * tv.tensor(w)))(
            tv.tensor(a), tv.tensor(b))  # fmt: skip
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    want = torch.autograd.grad((getattr(torch, op)(ta, tb) * torch.tensor(w)).sum(), [ta, tb])
    np.testing.assert_array_equal(ga.numpy(), want[0].numpy())
    np.testing.assert_array_equal(gb.numpy(), want[1].numpy())


FLOAT16_UNARY = ["sigmoid", "softplus", "tanh", "gelu", "selu", "elu", "erf", "relu", "sinc",
                 "exp", "log1p", "softmax", "log_softmax"]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", FLOAT16_UNARY)
def test_float16_stays_float16_in_value_and_gradient(backend, op):
    """A unary float op keeps its input's dtype (scipy computes float16 in float32)."""
    x = tv.tensor(np.array([0.5, -1.0, 2.0], np.float16))
    with tv.backend(backend):
        y = getattr(tv, op)(x)
        g = tv.grad(lambda x: tv.sum(getattr(tv, op)(x)))(x)
    assert (y.dtype, g.dtype) == (np.float16, np.float16)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["selu", "elu"])
def test_forward_mode_and_hvp_are_finite_where_the_gradient_is(backend, op):
    """The branch a VJP does not take must be finite too: at x = +inf the gradient is
    finite (scale, 1), and so must be jvp and the Hessian-vector product (PyTorch). (Not at
    0, a kink of the derivative, where PyTorch and tapeviz pick different one-sided values.)"""
    x = np.array([np.inf, 1.5, -0.5, 0.25, -np.inf])
    f = getattr(tv, op)
    with tv.backend(backend):
        g = tv.grad(lambda x: tv.sum(f(x)))(tv.tensor(x)).numpy()
        jv = tv.jvp(f, [tv.tensor(x)], [tv.tensor(np.ones(5))])[1].numpy()
        with tv.Tape() as outer:
            xt = tv.tensor(x)
            outer.watch(xt)
            total = tv.sum(tv.grad(lambda x: tv.sum(f(x)))(xt))
        h = outer.gradient(total, xt).numpy()
    tx = torch.tensor(x, requires_grad=True)
    tf = {"selu": torch.nn.functional.selu, "elu": torch.nn.functional.elu}[op]
    (tg,) = torch.autograd.grad(tf(tx).sum(), tx, create_graph=True)
    (th,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(g, tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(jv, tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h, th.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", ["logsumexp", "stop_gradient"])
def test_audit_does_not_call_a_builtin_stop_gradient_wrong(fn):
    """logsumexp subtracts a stop_gradient'ed max: its gradient is 0 by definition, so the
    audit skips that node (naming why) instead of reporting the built-in WRONG."""
    x = tv.tensor(np.array([[0.3, -1.2, 2.0], [1.0, 1.0, -0.5]]))
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        y = tv.sum(getattr(tv, fn)(x) * 1.5)
    report = tv.audit(tape)
    assert report.passed, report.summary()
    assert any("stop_gradient" in s["reason"] for s in report.skipped)
    assert y.shape == ()


def _others(x, axis):
    """prod_{j != i} x_j along ``axis``, by brute force (no division)."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty_like(x)
    for i in range(x.shape[-1]):
        out[..., i] = np.prod(np.delete(x, i, -1), -1)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "x",
    [
        [[np.inf], [2.0]],  # a size-1 axis: prod is x itself, dx = dy (was inf / inf = NaN)
        [[np.inf, 2.0, 3.0], [1.0, -np.inf, 0.5]],
        [[np.nan, 2.0, 3.0], [1.0, np.inf, 0.0]],  # inf * 0 among the others: NaN, rightly
        [[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]],
    ],
)
def test_prod_and_cumprod_gradients_are_the_product_of_the_others_at_inf(backend, x):
    """Fuzzer, long profile (seeds 100504, 101073, 94): prod(x) / x_i is inf / inf where x_i
    is infinite, though the product of the others is a number. PyTorch gives NaN there (its
    formula divides); the exact answer is the brute-force product."""
    x = np.array(x)
    axis = 1
    with tv.backend(backend):
        g = tv.grad(lambda v: tv.sum(tv.prod(v, axis)))(tv.tensor(x)).numpy()
        w = np.arange(1.0, x.size + 1).reshape(x.shape)
        gc = tv.grad(lambda v: tv.sum(tv.cumprod(v, axis) * tv.tensor(w)))(tv.tensor(x)).numpy()
    np.testing.assert_array_equal(g, _others(x, axis))
    want = np.zeros_like(x)  # dx_i = sum_{j >= i} w_j prod_{k <= j, k != i} x_k
    for i in range(x.shape[1]):
        for j in range(i, x.shape[1]):
            want[:, i] += w[:, j] * _others(x[:, : j + 1], 1)[:, i]
    np.testing.assert_array_equal(gc, want)
