"""tv.DifferentiableFunction (MATLAB): the seed's SReLU in both forms, several outputs and
memory values, compute_gradients, what the node saves, second order, and the error paths."""

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.autodiff.backward import GradientError

RNG = np.random.default_rng(0)
X = RNG.uniform(-2, 2, (4, 3))
# per-channel thresholds and slopes: tl < tr, no X within 0.05 of a threshold (kinks)
TL, AL, TR, AR = [-0.5, -0.2, 0.1], [0.1, 0.3, 0.2], [0.6, 0.9, 1.2], [0.5, 0.25, 0.4]
X[np.abs(X - np.array(TL)) < 0.05] += 0.1
X[np.abs(X - np.array(TR)) < 0.05] += 0.1


def srelu_ops(x, tl, al, tr, ar):
    """The seed's SReLU composed of ops: differentiated automatically."""
    left = tl + al * (x - tl)
    right = tr + ar * (x - tr)
    return tv.where(x <= tl, left, tv.where(x < tr, x, right))


class SReLU(tv.DifferentiableFunction):
    """SReLU with a hand-written backward; the masks are memory values."""

    def __init__(self):
        super().__init__(num_outputs=1, save_inputs_for_backward=True, num_memory_values=2)
        self.flags = []

    def forward(self, x, tl, al, tr, ar):
        lo, hi = x <= tl, x >= tr
        y = np.where(lo, tl + al * (x - tl), np.where(hi, tr + ar * (x - tr), x))
        return y, lo, hi

    def backward(self, dy, compute_gradients, x, tl, al, tr, ar, lo, hi):
        self.flags.append(compute_gradients)
        mid = ~(lo | hi)
        dx = dy * (lo * al + mid + hi * ar)
        grads = [
            dx,
            (dy * lo * (1 - al)).sum(axis=0),
            (dy * lo * (x - tl)).sum(axis=0),
            (dy * hi * (1 - ar)).sum(axis=0),
            (dy * hi * (x - tr)).sum(axis=0),
        ]
        return tuple(g.astype(x.dtype) if c else None for g, c in zip(grads, compute_gradients))


def _args(dtype="float32"):
    return [tv.tensor(np.asarray(a, dtype)) for a in (X, TL, AL, TR, AR)]


def test_srelu_both_forms_agree_on_value_and_all_five_gradients():
    srelu = SReLU()
    args = _args()
    np.testing.assert_allclose(srelu(*args).numpy(), srelu_ops(*args).numpy(), rtol=1e-6)
    dy = tv.tensor(RNG.standard_normal((4, 3)).astype(np.float32))
    g_df = tv.grads(lambda *a: (srelu(*a) * dy).sum())(*args)
    g_ops = tv.grads(lambda *a: (srelu_ops(*a) * dy).sum())(*args)
    assert len(g_df) == 5
    for a, b in zip(g_df, g_ops):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert srelu.flags == [(True, True, True, True, True)]  # one backward call for five inputs
    assert tv.check_grads(srelu, X, TL, AL, TR, AR).passed
    assert tv.check_grads(srelu_ops, X, TL, AL, TR, AR).passed


def test_srelu_records_one_node_with_inputs_and_memory():
    srelu = SReLU()
    args = _args()
    with tv.Tape() as tape:
        tape.watch(args)
        y = srelu(*args)
    (node,) = tape.nodes
    assert (node.style, node.label, node.kernel) == (
        "DifferentiableFunction",
        "SReLU",
        "DifferentiableFunction",
    )
    assert list(node.inputs) == ["X1", "X2", "X3", "X4", "X5"] and node.outputs == (y,)
    roles = [(s.role, s.name) for s in node.saved]
    assert roles == [("input", f"X{i}") for i in range(1, 6)] + [
        ("memory", "memory1"),
        ("memory", "memory2"),
    ]
    assert node.saved[5].dtype == np.bool_ and node.saved[5].nbytes == X.size
    assert node.attrs["num_memory_values"] == 2


def test_compute_gradients_flags_only_what_is_needed():
    srelu = SReLU()
    x, tl, al, tr, ar = _args()
    g = tv.grad(lambda x: srelu(x, tl, al, tr, ar).sum())(x)
    assert srelu.flags == [(True, False, False, False, False)]
    with tv.Tape() as tape:
        tape.watch([al, ar])
        loss = srelu(x, tl, al, tr, ar).sum()
    gal, gar = tape.gradient(loss, [al, ar])
    assert srelu.flags[-1] == (False, False, True, False, True)
    np.testing.assert_allclose(
        g.numpy(), tv.grad(lambda x: srelu_ops(x, tl, al, tr, ar).sum())(x).numpy()
    )
    assert gal.shape == (3,) and gar.shape == (3,)


def test_srelu_learns_its_thresholds_and_slopes_end_to_end():
    """A few SGD steps on all four parameters: the two forms follow the same trajectory."""
    target = tv.tensor(np.where(X > 0, X, 0.3 * X).astype(np.float32))
    x = tv.tensor(X.astype(np.float32))

    def train(fn):
        params = [tv.variable(np.asarray(p, np.float32)) for p in (TL, AL, TR, AR)]
        losses = []
        for _ in range(20):
            with tv.Tape() as tape:
                loss = ((fn(x, *params) - target) ** 2).mean()
            for p, g in zip(params, tape.gradient(loss, params)):
                p.assign(p - g * 0.2)
            losses.append(loss.item())
        return params, losses

    p_df, l_df = train(SReLU())
    p_ops, l_ops = train(srelu_ops)
    np.testing.assert_allclose(l_df, l_ops, rtol=1e-4)
    for a, b in zip(p_df, p_ops):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)
    assert l_df[-1] < 0.5 * l_df[0]


class PolarToCart(tv.DifferentiableFunction):
    """Two inputs, two outputs, two memory values: (r, theta) -> (r cos, r sin)."""

    def __init__(self, save_inputs=True):
        super().__init__(num_outputs=2, save_inputs_for_backward=save_inputs, num_memory_values=2)
        self.calls = 0

    def forward(self, r, theta):
        c, s = np.cos(theta), np.sin(theta)
        return r * c, r * s, c, s

    def backward(self, dx, dy, compute_gradients, r, theta, c, s):
        self.calls += 1
        return dx * c + dy * s, r * (dy * c - dx * s)


def test_several_outputs_and_memory_values():
    fn = PolarToCart()
    r, th = tv.tensor([1.0, 2.0, 0.5]), tv.tensor([0.3, -1.2, 2.5])
    x, y = fn(r, th)
    np.testing.assert_allclose(x.numpy(), r.numpy() * np.cos(th.numpy()), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), r.numpy() * np.sin(th.numpy()), rtol=1e-6)
    assert tv.check_grads(lambda r, t: tv.stack(fn(r, t)), [1.0, 2.0, 0.5], [0.3, -1.2, 2.5]).passed
    # only one output used: its sibling's dLdY is zeros
    gr, gt = tv.grads(lambda r, t: fn(r, t)[1].sum())(r, th)
    np.testing.assert_allclose(gr.numpy(), np.sin(th.numpy()), rtol=1e-6)
    np.testing.assert_allclose(gt.numpy(), r.numpy() * np.cos(th.numpy()), rtol=1e-6)


class Exp(tv.DifferentiableFunction):
    def __init__(self, save_inputs, save_outputs):
        super().__init__(
            save_inputs_for_backward=save_inputs, save_outputs_for_backward=save_outputs
        )

    def forward(self, x):
        return np.exp(x)

    def backward(self, dy, compute_gradients, *saved):
        return dy * saved[-1] if self.save_outputs_for_backward else dy * np.exp(saved[0])


@pytest.mark.parametrize("save_inputs, save_outputs", [(True, False), (False, True), (True, True)])
def test_saved_values_follow_the_options(save_inputs, save_outputs):
    fn = Exp(save_inputs, save_outputs)
    x = tv.tensor(np.linspace(-1, 1, 8, dtype=np.float32))
    with tv.Tape() as tape:
        tape.watch(x)
        y = fn(x)
    roles = [s.role for s in tape.nodes[0].saved]
    assert roles == ["input"] * save_inputs + ["output"] * save_outputs
    assert tape.saved_nbytes == 32 * (save_inputs + save_outputs)
    g = tape.gradient(y, x, output_gradients=tv.ones_like(y))
    np.testing.assert_allclose(g.numpy(), np.exp(x.numpy()), rtol=1e-6)


def test_custom_and_builtin_exp_give_the_same_gradients():
    x = tv.tensor([0.5, -1.0, 2.0])
    g_df = tv.grad(lambda x: (Exp(False, True)(x) * x).sum())(x)
    g_op = tv.grad(lambda x: (tv.exp(x) * x).sum())(x)
    np.testing.assert_allclose(g_df.numpy(), g_op.numpy(), rtol=1e-6)


def test_second_order_is_an_error_naming_the_class():
    fn = Exp(True, False)
    x = tv.tensor([0.5, -1.0])
    with pytest.raises(
        GradientError, match=r"Exp: cannot differentiate its gradient again: .* numpy"
    ):
        tv.grad(lambda x: tv.grad(lambda x: fn(x).sum())(x).sum())(x)
    with pytest.raises(tv.GradientCheckError, match="Exp: cannot differentiate"):
        tv.check_grads(fn, [0.5, -1.0], order=2)
    assert tv.check_grads(fn, [0.5, -1.0]).passed  # first order (and forward mode) fine


def test_jvp_differentiates_backward_with_respect_to_dy():
    """core.jvp (a double VJP) works: J·u by differences of forward, ~1e-10 relative."""
    fn = PolarToCart()
    r, th = tv.tensor([1.0, 2.0]), tv.tensor([0.3, -1.2])
    tr, tt = tv.tensor([0.5, -1.0]), tv.tensor([2.0, 1.0])
    _, out = tv.jvp(lambda r, t: tv.stack(fn(r, t)), [r, th], [tr, tt])
    c, s = np.cos(th.numpy()), np.sin(th.numpy())
    expected = [
        c * tr.numpy() - r.numpy() * s * tt.numpy(),
        s * tr.numpy() + r.numpy() * c * tt.numpy(),
    ]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


def test_fits_with_ops_tidy_and_no_tape():
    fn = PolarToCart(save_inputs=True)
    r, th = tv.tensor([1.0]), tv.tensor([0.0])
    x, y = fn(r, th)  # no tape: nothing recorded, just values
    assert x.item() == 1.0 and y.item() == 0.0
    g = tv.tidy(lambda: tv.grad(lambda r: tv.tanh(fn(r, th)[0] * 2).sum())(r))
    assert g.item() == pytest.approx(2 * (1 - np.tanh(2.0) ** 2), rel=1e-5)


# --- validation ---------------------------------------------------------------------------------


class Configurable(tv.DifferentiableFunction):
    def __init__(self, forward, backward, **options):
        super().__init__(**options)
        self._f, self._b = forward, backward

    def forward(self, *x):
        return self._f(*x)

    def backward(self, *args):
        return self._b(*args)


def _ident_back(dy, flags, *rest):
    return dy


@pytest.mark.parametrize(
    "forward, options, error, message",
    [
        (
            lambda x: 1.0,
            {},
            TypeError,
            r"Configurable.forward: Y1 must be a numpy array, got float",
        ),
        (lambda x: tv.tensor(x), {}, TypeError, r"got Tensor \(return .numpy\(\)\)"),
        (lambda x: (x, x), {}, ValueError, r"returned 2 values, expected 1"),
        (
            lambda x: x,
            {"num_memory_values": 1},
            ValueError,
            r"returned one value, expected 2 \(num_outputs=1 outputs, then num_memory_values=1",
        ),
        (lambda x: (x, [0]), {"num_memory_values": 1}, TypeError, r"memory1 must be a numpy array"),
        (lambda x: 1 / 0, {}, ZeroDivisionError, r"division by zero"),
    ],
)
def test_bad_forwards_name_the_class_and_record_nothing(forward, options, error, message):
    fn = Configurable(forward, _ident_back, **options)
    x = tv.tensor([1.0, 2.0])
    with tv.Tape() as tape:
        tape.watch(x)
        with pytest.raises(error, match=message):
            fn(x)
    assert tape.nodes == []


@pytest.mark.parametrize(
    "backward, message",
    [
        (lambda dy, f: (dy, dy), r"returned 2 gradients, expected 1"),
        (
            lambda dy, f: dy[:1],
            r"dLdX1 \(the gradient of input X1\): expected shape \(2,\) \(X1's\), got \(1,\)",
        ),
        (
            lambda dy, f: dy.astype(np.float64),
            r"dLdX1 .*expected dtype float32 \(X1's\), got float64",
        ),
        (lambda dy, f: 1.0, r"dLdX1 .*must be a numpy array, got float"),
        (lambda dy, f: None, r"returned None for dLdX1, whose gradient is needed"),
        (lambda dy, f: 1 / 0, r"backward raised ZeroDivisionError: division by zero"),
    ],
)
def test_bad_backwards_name_the_class_and_the_input(backward, message):
    fn = Configurable(lambda x: x * 2, backward)
    with pytest.raises(GradientError, match=r"Configurable.*" + message):
        tv.grad(lambda x: fn(x).sum())(tv.tensor([1.0, 2.0]))


def test_wrong_gradient_count_with_several_inputs():
    fn = Configurable(lambda a, b: a * b, lambda dy, f: dy)
    with pytest.raises(GradientError, match=r"returned one value, expected 2 \(dLdX1…dLdX2"):
        tv.grads(lambda a, b: fn(a, b).sum())(tv.tensor([1.0]), tv.tensor([2.0]))


def test_forgetting_super_init_and_bad_options():
    class NoInit(tv.DifferentiableFunction):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match=r"NoInit: call super\(\).__init__"):
        NoInit()(tv.tensor([1.0]))
    with pytest.raises(ValueError, match="num_outputs must be an int >= 1"):
        Configurable(None, None, num_outputs=0)
    with pytest.raises(ValueError, match="num_memory_values must be an int >= 0"):
        Configurable(None, None, num_memory_values=-1)


def test_backward_expecting_inputs_that_were_not_saved_names_the_flag():
    class Product(tv.DifferentiableFunction):  # forgot save_inputs_for_backward=True
        def forward(self, x, y):
            return x * y

        def backward(self, dy, compute_gradients, x, y):
            return dy * y, dy * x

    a, b = tv.tensor([1.0, 2.0]), tv.tensor([3.0, 4.0])
    with pytest.raises(GradientError) as info:
        tv.grads(lambda a, b: tv.sum(Product()(a, b)))(a, b)
    msg = str(info.value)
    assert "Product.backward(dy, compute_gradients, x, y) cannot take the 2 arguments" in msg
    assert "(dLdY1, compute_gradients)" in msg and "save_inputs_for_backward=True" in msg

    class Saved(Product):
        def __init__(self):
            super().__init__(save_inputs_for_backward=True)

    ga, gb = tv.grads(lambda a, b: tv.sum(Saved()(a, b)))(a, b)
    np.testing.assert_array_equal(ga.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 2.0])
