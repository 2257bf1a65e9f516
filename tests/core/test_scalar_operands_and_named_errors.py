"""Issue 22, crashes and misleading messages: each against HIPS autograd, or a named error."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as core

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("base", [2.0, 3, 0.5, True, 0.0, 1.0])
@pytest.mark.parametrize("side", ["base", "exponent"])
def test_a_python_number_on_either_side_of_pow(base, side):
    y = np.array([-1.5, 0.0, 2.0])
    if side == "base":
        tv_f, ag_f = (lambda t: core.sum(base**t)), (lambda t: anp.sum(base**t))
    else:
        y = np.array([0.5, 1.5, 2.0])
        tv_f, ag_f = (lambda t: core.sum(t**base)), (lambda t: anp.sum(t**base))
    got = core.grad(tv_f)(core.tensor(y)).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        want = autograd.grad(ag_f)(y)
    if side == "base" and base == 0.0:  # d/dy 0^y = 0^y log 0: PyTorch's 0 where y >= 0;
        got, want = got[y >= 0], np.zeros(int(np.sum(y >= 0)))  # y < 0 is a pole (0^y = inf)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow"])
@pytest.mark.parametrize("left", [True, False])
def test_every_binary_op_with_a_python_number_on_either_side(op, left):
    x = np.array([0.5, 1.5, 2.0])
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "pow": lambda a, b: a**b}[op]  # fmt: skip
    c = 1.75
    tv_f = (lambda t: core.sum(fn(c, t))) if left else (lambda t: core.sum(fn(t, c)))
    ag_f = (lambda t: anp.sum(fn(c, t))) if left else (lambda t: anp.sum(fn(t, c)))
    np.testing.assert_allclose(core.grad(tv_f)(core.tensor(x)).numpy(), autograd.grad(ag_f)(x))
    h = core.hessian(tv_f)(core.tensor(x)).numpy()
    np.testing.assert_allclose(h, autograd.hessian(ag_f)(x), atol=1e-12)


EINSUM_CASES = [
    ("...ij,jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(1, 3, 4), (2, 4, 5)]),
    ("...i,...i->...", [(3, 1, 4), (2, 4)]),
    ("...i,...i", [(1, 4), (3, 4)]),
    ("...,...->...", [(2, 1), (3,)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 5, 1)]),
    ("a...b,b...c->a...c", [(2, 1, 4), (4, 3, 5)]),
    ("...j,j...->...", [(2, 3), (3, 2)]),
    ("...i,i->...", [(2, 3, 4), (4,)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES)
def test_einsum_with_broadcast_ellipsis_dimensions(spec, shapes):
    xs = [RNG.standard_normal(s) for s in shapes]
    w = RNG.standard_normal(np.einsum(spec, *xs).shape)
    ts = [core.tensor(x) for x in xs]
    np.testing.assert_allclose(core.einsum(spec, *ts).numpy(), np.einsum(spec, *xs))
    gs = core.grads(lambda *t: core.sum(core.einsum(spec, *t) * w))(*ts)
    for i, g in enumerate(gs):
        want = autograd.grad(lambda *a: anp.sum(anp.einsum(spec, *a) * w), i)(*xs)
        assert g.shape == xs[i].shape
        np.testing.assert_allclose(g.numpy(), want, atol=1e-12)
    assert core.check_grads(lambda *t: core.einsum(spec, *t), *xs, order=2).passed


def test_watching_an_int_tensor_is_a_named_error():
    xi = core.tensor([1, 2])
    with core.Tape() as tape:
        with pytest.raises(TypeError, match="Tape.watch: tensor .* is int32; only floating"):
            tape.watch(xi)
        y = core.sum(xi * 2.0)
    with pytest.raises(TypeError, match="Tape.gradient: source .* is int32"):
        tape.gradient(y, xi)


def test_jvp_of_a_function_returning_a_tuple_or_list():
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, -2.0])
    f = lambda x: (core.sin(x) * 2, core.sum(x**3), core.argmax(x))  # noqa: E731
    (y1, y2, y3), (j1, j2, j3) = core.jvp(f, [core.tensor(x)], [core.tensor(t)])
    np.testing.assert_allclose(j1.numpy(), autograd.jacobian(lambda v: anp.sin(v) * 2)(x) @ t)
    np.testing.assert_allclose(j2.numpy(), autograd.grad(lambda v: anp.sum(v**3))(x) @ t)
    assert j3.dtype == y3.dtype and j3.item() == 0  # an integer output does not move
    ys, js = core.jvp(lambda x: [x * x], [core.tensor(x)], [core.tensor(t)])
    assert isinstance(js, list) and np.allclose(js[0].numpy(), 2 * x * t)
    with pytest.raises(TypeError, match="jvp.*must return a Tensor or a tuple/list"):
        core.jvp(lambda x: {"a": x}, [core.tensor(x)], [core.tensor(t)])


def test_one_rule_for_leaving_the_tape():
    """Explicit requests for the value are constants; implicit conversions raise."""
    x = core.tensor([2.0])
    with core.Tape() as tape:
        tape.watch(x)
        explicit = [float(core.sum(x)), core.sum(x).item(), x.numpy()[0], x.tolist()[0]]
        with pytest.raises(TypeError, match="would silently cut its gradient.*x.item\\(\\)"):
            np.asarray(x)
        with pytest.raises(TypeError, match="silently cut"):
            np.array(x)
        y = core.sum(x * explicit[0])
    assert explicit == [2.0, 2.0, 2.0, 2.0]
    assert tape.gradient(y, x).numpy().tolist() == [2.0]  # the constant carries no gradient
    assert "one rule" in _tensor_doc()


def _tensor_doc() -> str:
    import sys

    return sys.modules["tapeviz.core.tensors.tensor"].__doc__.lower()


W = np.arange(6.0).reshape(3, 2) / 4
MATMUL_FORMS = {
    "x @ W": lambda x: x @ W,
    "W.T @ x": lambda x: W.T @ x,
    "np.dot(x, W)": lambda x: np.dot(x, W),
    "x @ x (vector)": lambda x: np.tanh(x) * (x @ x),
}


@pytest.mark.parametrize("form", list(MATMUL_FORMS))
@pytest.mark.parametrize("input_rank", [None, 1])
def test_compiled_layer_auto_differentiates_a_per_example_matmul(form, input_rank):
    f = MATMUL_FORMS[form]
    layer = core.CompiledLayer(f, input_rank=input_rank)
    x = RNG.standard_normal((4, 3) if input_rank else (3,))
    got = core.grad(lambda t: core.sum(layer(t) ** 2))(core.tensor(x)).numpy()
    rows = x if input_rank else x[None]
    want = autograd.grad(lambda a: sum(anp.sum(f(a[i]) ** 2) for i in range(len(a))))(rows)
    np.testing.assert_allclose(got, want if input_rank else want[0], rtol=1e-10)


@pytest.mark.parametrize("input_rank", [None, 1])
def test_compiled_layer_integer_gradient_is_an_error_in_every_mode(input_rank):
    def g(x, dy):
        return (dy * 3.7).astype(np.int64)

    layer = core.CompiledLayer(lambda x: x * 3.7, gradient=g, input_rank=input_rank)
    with pytest.raises(core.GradientError, match="gradient function g returned dtype int64"):
        core.grad(lambda t: core.sum(layer(t)))(core.tensor(np.ones((2, 3))))
