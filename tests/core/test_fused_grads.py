"""Fused gradient kernels (TanhGrad, SigmoidGrad, ...): the same bits as the unfused ops,
one backward node per step, and their own gradients (second and third order)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.ops import elementwise as E
from tapeviz.core.registry import kernel_names as K

RNG = np.random.default_rng(0)
SHAPES = [(), (5,), (3, 4)]


def _unfused(name, dy, v):
    """What the unfused gradient ops computed, in their order (numpy float32 arithmetic)."""
    one, two = np.float32(1), np.float32(2)
    return {
        K.TANH_GRAD: lambda: dy * (one - v * v),
        K.SIGMOID_GRAD: lambda: dy * (v * (one - v)),
        K.RELU_GRAD: lambda: dy * (v > 0).astype(v.dtype),
        K.SQRT_GRAD: lambda: dy / (v * two),
        K.RSQRT_GRAD: lambda: dy * (v * v * v) * np.float32(-0.5),
        K.SIN_GRAD: lambda: dy * np.cos(v),
        K.COS_GRAD: lambda: -(dy * np.sin(v)),
    }[name]()


FUSED = [
    (K.TANH_GRAD, E.tanh_grad, "y"),
    (K.SIGMOID_GRAD, E.sigmoid_grad, "y"),
    (K.RELU_GRAD, E.relu_grad, "x"),
    (K.SQRT_GRAD, E.sqrt_grad, "y"),
    (K.RSQRT_GRAD, E.rsqrt_grad, "y"),
    (K.SIN_GRAD, E.sin_grad, "x"),
    (K.COS_GRAD, E.cos_grad, "x"),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,op,second", FUSED, ids=[f[0] for f in FUSED])
def test_kernel_gives_the_unfused_bits(name, op, second, shape):
    dy = RNG.standard_normal(shape).astype(np.float32)
    v = RNG.uniform(0.2, 0.9, shape).astype(np.float32)
    if name == K.RELU_GRAD:
        v = v - np.float32(0.5)
    out = op(core.tensor(dy), core.tensor(v)).numpy()
    expected = np.asarray(_unfused(name, dy, v))
    assert out.dtype == np.float32 and out.shape == shape
    np.testing.assert_array_equal(out, expected)
    for backend in core.list_backends():  # numba delegates to numpy's kernel
        fn = core.get_kernel(name, backend).fn
        np.testing.assert_array_equal(np.asarray(fn({"dy": dy, second: v}, {})), expected)


@pytest.mark.parametrize("name,op,second", FUSED, ids=[f[0] for f in FUSED])
def test_fused_kernels_own_gradients(name, op, second):
    dy = RNG.standard_normal((2, 3))
    v = RNG.uniform(0.3, 0.8, (2, 3))
    if name == K.RELU_GRAD:  # away from the kink; only dy is differentiable
        v = v - 0.55 + 0.2 * np.sign(v - 0.55)
        core.check_grads(lambda d: op(d, core.tensor(v)), dy, order=2)
        return
    core.check_grads(op, dy, v, order=2)


@pytest.mark.parametrize(
    "fn,kernel",
    [
        (core.tanh, K.TANH_GRAD),
        (core.sigmoid, K.SIGMOID_GRAD),
        (core.relu, K.RELU_GRAD),
        (core.sqrt, K.SQRT_GRAD),
        (core.rsqrt, K.RSQRT_GRAD),
        (core.sin, K.SIN_GRAD),
        (core.cos, K.COS_GRAD),
    ],
)
def test_one_backward_node_per_step_and_third_order(fn, kernel):
    x = core.tensor(np.array([0.3, 0.7, 1.2]))
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(fn(x))
    tape.gradient(y, x)
    step = [s for s in tape.backward_steps if tape.node(s.node_id).kernel != K.SUM][0]
    assert [tape.node(i).kernel for i in step.backward_node_ids] == [kernel]
    core.check_grads(lambda v: core.sum(core.grad(lambda u: core.sum(fn(u)))(v)), x, order=2)


def test_broadcast_and_zero_d_operands():
    dy = core.tensor(np.float32(2.0))
    y = core.tensor(np.array([0.5, -0.25], np.float32))
    np.testing.assert_array_equal(E.tanh_grad(dy, y).numpy(), 2 * (1 - y.numpy() ** 2))
    np.testing.assert_array_equal(E.tanh_grad(y, dy).numpy(), y.numpy() * np.float32(-3))
