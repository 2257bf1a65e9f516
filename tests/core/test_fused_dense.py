"""The fused kernels of a training step: ``_FusedMatMul`` (act(op(a) @ op(b) + bias)) and
``SoftmaxCrossEntropyWithLogits`` / ``SoftmaxCrossEntropyGrad``: forward against numpy,
gradients by ``check_grads`` (first and second order), on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.ops.matrix import FUSED_ACTIVATIONS, fused_matmul
from tapeviz.core.ops.nn import softmax_cross_entropy_grad, softmax_cross_entropy_with_logits
from tapeviz.core.registry import kernel_names as K

RNG = np.random.default_rng(3)
BACKENDS = core.list_backends()
TRANSPOSES = [(False, False), (False, True), (True, False), (True, True)]


def _act(name, z):
    return {
        "linear": lambda: z,
        "relu": lambda: np.maximum(z, 0),
        "tanh": lambda: np.tanh(z),
        "sigmoid": lambda: 1 / (1 + np.exp(-z)),
    }[name]()


def _operands(ta, tb, dtype=np.float64):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
    a, b = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    return a.astype(dtype), b.astype(dtype), RNG.standard_normal(5).astype(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ta,tb", TRANSPOSES)
@pytest.mark.parametrize("act", FUSED_ACTIVATIONS)
def test_fused_matmul_forward_matches_numpy(act, ta, tb, backend):
    a, b, bias = _operands(ta, tb, np.float32)
    with core.backend(backend):
        y = fused_matmul(core.tensor(a), core.tensor(b), core.tensor(bias), act, ta, tb)
    expected = _act(act, (a.T if ta else a) @ (b.T if tb else b) + bias)
    assert y.dtype == np.float32 and y.shape == (3, 5)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_fused_matmul_gives_the_unfused_bits():
    a, b, bias = _operands(False, False, np.float32)
    ta, tb, tc = core.tensor(a), core.tensor(b), core.tensor(bias)
    for act, op in (("relu", core.relu), ("tanh", core.tanh), ("sigmoid", core.sigmoid)):
        unfused = op(ta @ tb + tc).numpy()
        np.testing.assert_array_equal(fused_matmul(ta, tb, tc, act).numpy(), unfused)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ta,tb", TRANSPOSES)
@pytest.mark.parametrize("act", ["linear", "tanh", "sigmoid"])
def test_fused_matmul_gradients_first_and_second_order(act, ta, tb, backend):
    a, b, bias = _operands(ta, tb)
    with core.backend(backend):
        core.check_grads(lambda x, w, c: fused_matmul(x, w, c, act, ta, tb), a, b, bias, order=2)
        core.check_grads(lambda x, w: fused_matmul(x, w, None, act, ta, tb), a, b, order=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_matmul_relu_gradients_away_from_the_kink(backend):
    a, b, bias = _operands(False, False)
    z = a @ b + bias
    bias = bias + np.where(np.abs(z) < 0.2, 0.5, 0.0).max(axis=0)  # no pre-activation near 0
    with core.backend(backend):
        core.check_grads(lambda x, w, c: fused_matmul(x, w, c, "relu"), a, b, bias, order=2)


def test_fused_matmul_errors_name_the_op():
    x = core.ones((2, 3))
    with pytest.raises(ValueError, match="fused_matmul: inner dimensions"):
        fused_matmul(x, core.ones((4, 2)))
    with pytest.raises(ValueError, match="fused_matmul: activation must be one of"):
        fused_matmul(x, core.ones((3, 2)), activation="elu")
    with pytest.raises(ValueError, match=r"fused_matmul: bias must have shape \(2,\)"):
        fused_matmul(x, core.ones((3, 2)), core.ones(3))
    with pytest.raises(ValueError, match="fused_matmul: expected rank-2"):
        fused_matmul(core.ones((2, 2, 3)), core.ones((3, 2)))


def test_dense_records_one_fused_node_and_trains_like_the_unfused_ops():
    layer = core.nn.Dense(4, activation="tanh", seed=0)
    x = core.tensor(RNG.standard_normal((5, 3)).astype(np.float32))
    with core.Tape() as tape:
        y = layer(x)
        assert [n.kernel for n in tape.nodes] == [K.FUSED_MATMUL]
        loss = core.sum(y * y)
    assert [(s.role, s.name) for s in tape.nodes[0].saved] == [
        ("input", "a"), ("input", "b"), ("output", 0)
    ]  # fmt: skip
    dk, db = tape.gradient(loss, [layer.kernel, layer.bias])
    with core.Tape() as ref:
        y2 = core.tanh(x @ layer.kernel + layer.bias)
        loss2 = core.sum(y2 * y2)
    rk, rb = ref.gradient(loss2, [layer.kernel, layer.bias])
    np.testing.assert_array_equal(y.numpy(), y2.numpy())
    np.testing.assert_allclose(dk.numpy(), rk.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(db.numpy(), rb.numpy(), rtol=1e-5, atol=1e-6)


def _ce_inputs(shape=(6, 4), dtype=np.float64):
    z = (RNG.standard_normal(shape) * 3).astype(dtype)
    t = np.eye(shape[-1], dtype=dtype)[RNG.integers(0, shape[-1], shape[:-1])]
    return z, t


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(4,), (6, 4), (2, 3, 5)], ids=str)
def test_softmax_cross_entropy_forward_matches_numpy(shape, backend):
    z, t = _ce_inputs(shape, np.float32)
    with core.backend(backend):
        loss = softmax_cross_entropy_with_logits(core.tensor(t), core.tensor(z))
    m = z.max(-1, keepdims=True)
    log_p = z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))
    expected = -(t * log_p).sum() / (z.size // shape[-1])
    assert loss.shape == () and loss.dtype == np.float32
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-5)


def test_softmax_cross_entropy_is_stable_for_huge_logits():
    z = core.tensor([[1000.0, 0.0], [0.0, 1000.0], [-1000.0, 1000.0]])
    loss = core.losses.softmax_cross_entropy([0, 0, 1], z)
    assert loss.item() == pytest.approx(1000 / 3)
    with core.Tape() as tape:
        tape.watch(z)
        loss = core.losses.softmax_cross_entropy([0, 0, 1], z)
    g = tape.gradient(loss, z).numpy()
    np.testing.assert_allclose(g, [[0, 0], [-1 / 3, 1 / 3], [0, 0]], atol=1e-7)  # (p - t) / n
    assert [n.kernel for n in tape.nodes] == [K.SOFTMAX_CROSS_ENTROPY]
    assert [n.kernel for n in tape.backward_nodes] == [K.SOFTMAX_CROSS_ENTROPY_GRAD]


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_cross_entropy_gradients_first_and_second_order(backend):
    z, t = _ce_inputs()
    soft = RNG.dirichlet(np.ones(4), 6)  # soft labels: their gradient is checked too
    with core.backend(backend):
        core.check_grads(lambda x: softmax_cross_entropy_with_logits(t, x), z, order=2)
        core.check_grads(lambda x, s: softmax_cross_entropy_with_logits(s, x), z, soft, order=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_cross_entropy_grad_kernel(backend):
    z, t = _ce_inputs()
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    with core.backend(backend):
        g = softmax_cross_entropy_grad(core.tensor(np.array(0.5)), core.tensor(z), core.tensor(t))
        np.testing.assert_allclose(g.numpy(), (p - t) * 0.5 / 6, rtol=1e-12)
        core.check_grads(softmax_cross_entropy_grad, np.array(0.7), z, t, order=2)


def test_softmax_cross_entropy_errors_name_the_op():
    with pytest.raises(ValueError, match="softmax_cross_entropy_with_logits: expected logits"):
        softmax_cross_entropy_with_logits(core.ones((2, 3)), core.ones((2, 4)))
    with pytest.raises(ValueError, match="softmax_cross_entropy_grad: dy must be a scalar"):
        softmax_cross_entropy_grad(core.ones((2,)), core.ones((2, 3)), core.ones((2, 3)))


def test_check_grads_replays_a_dense_model_batched():
    model = core.nn.Sequential([core.nn.Dense(5, "tanh", seed=0), core.nn.Dense(3, seed=1)])
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    model(x)
    report = core.check_grads(lambda v: core.losses.softmax_cross_entropy([0, 1, 2, 0], model(v)),
                              x.astype(np.float32), eps=1e-3, atol=1e-3, rtol=1e-2)  # fmt: skip
    assert report.passed and report.checks[0].strategy == "batched replay"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sa,sb", [((3, 4), (4,)), ((4,), (4, 5))], ids=str)
def test_matrix_vector_matmul_is_one_node_with_gradients(sa, sb, backend):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    with core.backend(backend), core.Tape() as tape:
        y = core.tensor(a) @ core.tensor(b)
    assert [n.kernel for n in tape.nodes] == [K.MATMUL]
    np.testing.assert_allclose(y.numpy(), a @ b, rtol=1e-12)
    with core.backend(backend):
        report = core.check_grads(lambda p, q: core.tanh(p @ q), a, b, order=2)
    assert {c.strategy for c in report.checks if c.kind == "reverse"} == {"batched replay"}
    with pytest.raises(ValueError, match="matmul: inner dimensions differ"):
        core.tensor(a) @ core.tensor(np.ones(7))
