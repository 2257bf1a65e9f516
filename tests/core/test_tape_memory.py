"""What a tape keeps: exactly the bytes its gradients need, under 1 KB of metadata per node,
and large backward values by shape only (so their memory is reused as in plain numpy)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import tapeviz.core as core

# each of these saves exactly one tensor of its input's size (its input or its output)
ONE_SAVED = [core.tanh, core.sin, core.exp, core.sigmoid, core.sqrt, core.log1p]


def test_long_chain_saves_exactly_what_its_gradients_need():
    x = core.tensor(np.random.default_rng(0).uniform(0.1, 0.5, 1024))  # float64: 8 KB
    with core.Tape() as tape:
        tape.watch(x)
        y = x
        for i in range(1000):
            y = core.tanh(y) if i % 2 else core.sin(y)
    with tape:
        total = core.sum(y)
    assert len(tape.nodes) == 1001
    assert all(len(n.saved) == 1 and n.saved[0].nbytes == 8192 for n in tape.nodes[:-1])
    # sin saves its input, tanh its output: each tanh output is saved once for both, so
    # 500 tanh outputs + the first sin's input are all the gradients need
    assert tape.saved_nbytes == 501 * 1024 * 8
    g = tape.gradient(total, x)
    assert g.shape == (1024,) and tape.saved_nbytes == 0
    with core.Tape() as tape:
        tape.watch(x)
        y = x
        for i in range(1000):
            y = ONE_SAVED[i % len(ONE_SAVED)](y) * 0.5 + 0.5  # Mul saves the 8-byte 0.5 too
    # f saves one array; x * 0.5 needs only 0.5 (8 bytes): a, read by the constant's
    # gradient alone, is not kept; Add saves nothing
    assert len(tape.nodes) == 3000 and tape.saved_nbytes == 1000 * (8192 + 8)
    muls = [n for n in tape.nodes if n.kernel == "Mul"]
    assert len(muls) == 1000
    assert all([s.needed for s in n.saved] == [False, True] for n in muls)
    assert all(n.saved[0].tensor is None and n.saved[0].nbytes == 0 for n in muls)
    assert not any(n.saved[0].released for n in muls)
    assert muls[0].saved[0].shape == (1024,)
    with tape:
        total = core.sum(y)
    g = tape.gradient(total, x)
    half = core.tensor(np.float64(0.5))  # a tensor, not a number: Mul keeps both inputs
    with core.Tape() as full:
        full.watch(x)
        y = x
        for i in range(1000):
            y = ONE_SAVED[i % len(ONE_SAVED)](y) * half + 0.5
        total = core.sum(y)
    assert full.saved_nbytes > tape.saved_nbytes == 0
    np.testing.assert_array_equal(full.gradient(total, x).numpy(), g.numpy())


def test_saved_values_are_not_counted_twice():
    x = core.tensor(np.ones(256))
    with core.Tape() as tape:
        tape.watch(x)
        y = core.exp(x)  # saves y
        z = y * y  # saves y twice (a and b)
    assert [len(n.saved) for n in tape.nodes] == [1, 2]
    assert tape.saved_nbytes == 256 * 8
    assert z.shape == (256,)


def test_tape_metadata_is_under_one_kilobyte_per_node():
    x = core.tensor(np.ones(4, np.float32))
    n_ops = 2000

    def traced(record):
        kept = []
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        tape = core.Tape() if record else None
        if tape:
            tape.__enter__()
        y = x
        for _ in range(n_ops // 2):
            y = core.tanh(y) * 0.9
            kept.append(y)
        if tape:
            tape.__exit__(None, None, None)
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        kept.append(tape)
        return used

    per_node = (traced(True) - traced(False)) / n_ops
    assert 100 < per_node < 1024, per_node


def test_large_backward_values_are_recorded_by_shape_only_small_ones_kept():
    x = core.tensor(np.linspace(-1, 1, 50_000).astype(np.float32))  # 200 KB
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.tanh(core.sin(x)))
    g = tape.gradient(y, x)
    expected = np.cos(x.numpy()) * (1 - np.tanh(np.sin(x.numpy())) ** 2)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert not g.is_disposed
    recorded = [t for n in tape.backward_nodes for t in (*n.inputs.values(), *n.outputs)]
    big = [t for t in recorded if t._shape_dtype()[0] == (50_000,)]
    assert big and all(t.is_disposed for t in big)  # shape-only, same id
    assert all(t._shape_dtype() == ((50_000,), np.float32) for t in big)
    assert g.id in {t.id for t in big}  # the drawn graph still links to the gradient
    step_values = [d for s in tape.backward_steps for d in (*s.dy, *s.grads.values())]
    assert all(d.is_disposed == (d.size_hint > 16_384) for d in map(_Sized, step_values))
    assert not x.is_disposed and x.numpy().shape == (50_000,)
    small = core.tensor(np.linspace(-1, 1, 8).astype(np.float32))
    with core.Tape() as tape:
        tape.watch(small)
        y = core.sum(core.tanh(core.sin(small)))
    tape.gradient(y, small)
    assert not any(t.is_disposed for n in tape.backward_nodes for t in n.outputs)


class _Sized:
    def __init__(self, t):
        self.is_disposed = t.is_disposed
        shape = t._shape_dtype()[0]
        self.size_hint = int(np.prod(shape)) if shape else 1


def test_backward_values_kept_when_asked_or_recorded_by_an_outer_tape():
    x = core.tensor(np.linspace(-1, 1, 50_000))
    core.settings.backward_keep_bytes = None
    try:
        with core.Tape() as tape:
            tape.watch(x)
            y = core.sum(core.tanh(x))
        tape.gradient(y, x)
    finally:
        core.settings.backward_keep_bytes = 1 << 16
    assert not any(t.is_disposed for n in tape.backward_nodes for t in n.outputs)
    with core.Tape() as outer:
        outer.watch(x)
        with core.Tape() as inner:
            inner.watch(x)
            y = core.sum(core.tanh(x))
        g = inner.gradient(y, x)
        gg = core.sum(g)
    assert not any(t.is_disposed for n in inner.backward_nodes for t in n.outputs)
    second = outer.gradient(gg, x).numpy()
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(second, -2 * t * (1 - t * t), rtol=1e-6, atol=1e-12)


def test_a_value_the_gradient_function_keeps_stays_usable():
    kept = []

    def grad_fn(dy, saved, attrs):
        def dx():
            t = dy * 3.0
            kept.append(t)  # the user holds it: the engine must not free it
            return t * 1.0

        return {"x": dx}

    x = core.tensor(np.ones(50_000))
    with core.Tape() as tape:
        tape.watch(x)
        with core.gradient_override("Tanh", grad_fn):
            y = core.sum(core.tanh(x))
    tape.gradient(y, x)
    assert not kept[0].is_disposed and kept[0].numpy()[0] == 3.0


def test_gradient_for_a_python_number_constant_is_refused_clearly():
    x = core.tensor([2.0, 3.0])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(x * 0.5)
    constant = tape.nodes[0].inputs["b"]
    assert tape.nodes[0].saved[0].needed is False
    with pytest.raises(core.GradientError, match="'b' is a Python number the op made a constant"):
        tape.gradient(y, constant)
