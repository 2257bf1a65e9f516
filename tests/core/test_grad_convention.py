"""JAX's calling convention for every transform of a function (issue 37, item 6): every
positional argument goes to ``f``, ``argnums=`` chooses what is differentiated, an output
gradient is the keyword ``dy=``; the old ``(x, dy)`` form is refused by name. Values are
compared with PyTorch's autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapeviz as tv

W = np.array([0.5, -1.5, 2.0])
X = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])
Y = np.array([1.0, -2.0])


def _loss(w, x, y):
    return tv.sum(tv.square(x @ w - y))


def _torch_grads(*arrays, wrt):
    ts = [
        torch.tensor(a, dtype=torch.float64, requires_grad=i in wrt) for i, a in enumerate(arrays)
    ]
    w, x, y = ts
    ((x @ w - y) ** 2).sum().backward()
    return [ts[i].grad.numpy() for i in wrt]


def _t(a):
    return tv.tensor(a, dtype="float64")


def test_extra_positional_arguments_go_to_f():
    g = tv.grad(_loss)(_t(W), _t(X), _t(Y))
    np.testing.assert_allclose(g.numpy(), _torch_grads(W, X, Y, wrt=(0,))[0], rtol=1e-13)


@pytest.mark.parametrize("argnums", [1, 2, -1, (0, 2), (2, 0), (0, 1, 2)])
def test_argnums_chooses_what_is_differentiated(argnums):
    got = tv.grad(_loss, argnums=argnums)(_t(W), _t(X), _t(Y))
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    want = _torch_grads(W, X, Y, wrt=tuple(sorted({i % 3 for i in nums})))
    by_pos = dict(zip(sorted({i % 3 for i in nums}), want))
    if isinstance(argnums, tuple):
        assert isinstance(got, tuple) and len(got) == len(argnums)
        for g, i in zip(got, argnums):
            np.testing.assert_allclose(g.numpy(), by_pos[i % 3], rtol=1e-13)
    else:
        np.testing.assert_allclose(got.numpy(), by_pos[argnums % 3], rtol=1e-13)


def test_value_and_grad_and_grads_follow_the_same_convention():
    value, g = tv.value_and_grad(_loss, argnums=1)(_t(W), _t(X), _t(Y))
    np.testing.assert_allclose(value.item(), float(np.sum((X @ W - Y) ** 2)), rtol=1e-13)
    np.testing.assert_allclose(g.numpy(), _torch_grads(W, X, Y, wrt=(1,))[0], rtol=1e-13)
    gs = tv.grads(_loss)(_t(W), _t(X), _t(Y))
    for a, b in zip(gs, _torch_grads(W, X, Y, wrt=(0, 1, 2))):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-13)
    gw, gy = tv.grads(_loss, argnums=(0, 2))(_t(W), _t(X), _t(Y))
    tw, ty = _torch_grads(W, X, Y, wrt=(0, 2))
    np.testing.assert_allclose(gw.numpy(), tw, rtol=1e-13)
    np.testing.assert_allclose(gy.numpy(), ty, rtol=1e-13)


def test_a_default_argument_is_never_taken_for_an_output_gradient():
    """Before: ``tv.grad(f)(w, 3.0)`` used 3.0 as dy and f's default scale; the gradient
    was silently 3/2 times the right one."""

    def scaled(w, scale=2.0):
        return tv.sum(w * w) * scale

    g = tv.grad(scaled)(_t(W), 3.0)
    w = torch.tensor(W, requires_grad=True)
    ((w * w).sum() * 3.0).backward()
    np.testing.assert_allclose(g.numpy(), w.grad.numpy(), rtol=1e-13)


def test_arguments_not_differentiated_reach_f_untouched():
    seen = {}

    def f(w, labels, name, fn):
        seen.update(labels=labels, name=name, fn=fn)
        return tv.sum(fn(w)) * len(labels)

    g = tv.grad(f)(_t(W), [1, 2], "hostile\x00name", tv.exp)
    assert seen == {"labels": [1, 2], "name": "hostile\x00name", "fn": tv.exp}
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(W), rtol=1e-13)


def test_dy_is_keyword_only_and_checked():
    f = lambda x: x * x  # noqa: E731
    x = _t(W)
    dy = _t(np.array([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(tv.grad(f)(x, dy=dy).numpy(), 2 * W * dy.numpy(), rtol=1e-13)
    with pytest.raises(ValueError, match="dy"):
        tv.grad(f)(x, dy=_t(np.ones(2)))


@pytest.mark.parametrize("api", ["grad", "value_and_grad", "grads", "value_and_grads"])
def test_the_old_x_dy_form_is_refused_by_name(api):
    f = lambda x: x * x  # noqa: E731
    with pytest.raises(TypeError, match=r"JAX's convention.*dy=") as e:
        getattr(tv, api)(f)(_t(W), _t(np.ones(3)))
    assert f"tv.{api}" in str(e.value)


def test_a_function_given_too_many_arguments_by_more_than_one_gets_its_own_error():
    with pytest.raises(TypeError, match="positional argument") as e:
        tv.grad(lambda x: x)(_t(W), 1.0, 2.0)
    assert "JAX's convention" not in str(e.value)


@pytest.mark.parametrize(
    "argnums, error, match",
    [(3, ValueError, "argument 3"), (-4, ValueError, "argument -4"), (True, TypeError, "int"),
     ("0", TypeError, "int"), ((0, 0), ValueError, "twice")],
)  # fmt: skip
def test_bad_argnums_are_named(argnums, error, match):
    with pytest.raises(error, match=match):
        tv.grad(_loss, argnums=argnums)(_t(W), _t(X), _t(Y))


def test_jacobian_and_hessian_take_argnums_and_extra_arguments():
    def f(x, w):
        return tv.tanh(w * x) * x

    x, w = np.array([0.3, -0.7]), np.array([1.5, 2.0])
    J = tv.jacobian(f, argnums=1)(_t(x), _t(w))
    tJ = torch.autograd.functional.jacobian(
        lambda tw: torch.tanh(tw * torch.tensor(x)) * torch.tensor(x), torch.tensor(w)
    )
    np.testing.assert_allclose(J.numpy(), tJ.numpy(), rtol=1e-12)
    H = tv.hessian(lambda x, w: tv.sum(f(x, w)))(_t(x), _t(w))
    tH = torch.autograd.functional.hessian(
        lambda tx: (torch.tanh(torch.tensor(w) * tx) * tx).sum(), torch.tensor(x)
    )
    np.testing.assert_allclose(H.numpy(), tH.numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match="one int"):
        tv.hessian(f, argnums=(0, 1))


def test_jit_of_grad_passes_extra_arguments_each_call():
    step = tv.jit(tv.grad(_loss))
    for scale in (1.0, 2.0):
        g = step(_t(W), _t(X * scale), _t(Y))
        np.testing.assert_allclose(
            g.numpy(), _torch_grads(W, X * scale, Y, wrt=(0,))[0], rtol=1e-12
        )
