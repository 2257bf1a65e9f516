"""tidy (function, decorator, context), keep, dispose, DisposedError and memory() counts."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tapeviz.core as core


def _count():
    gc.collect()
    return core.memory()["num_tensors"]


def test_tidy_function_disposes_intermediates_keeps_result():
    x = core.tensor([1.0, 2.0])
    inner = []

    def f():
        y = x * 2
        inner.append(y)
        return core.sum(y)

    out = core.tidy(f)
    assert out.item() == 6.0 and not out.is_disposed and not x.is_disposed
    assert inner[0].is_disposed


def test_tidy_with_arguments_and_as_decorators():
    @core.tidy
    def scale(t, k):
        return t * k

    @core.tidy()
    def zero_args():
        return core.tensor([1.0]) + 1

    x = core.tensor([1.0, 2.0])
    assert scale(x, 3).numpy().tolist() == [3.0, 6.0]
    assert zero_args().item() == 2.0 and zero_args.__name__ == "zero_args"
    assert core.tidy(lambda a: a + 1, x).numpy().tolist() == [2.0, 3.0]


def test_tidy_returns_nested_structures_and_disposes_the_rest():
    made = []

    def f():
        a, b, c = core.tensor([1.0]), core.tensor([2.0]), core.tensor([3.0])
        made.extend([a, b, c])
        return {"a": a, "pair": [b]}

    out = core.tidy(f)
    assert not out["a"].is_disposed and not out["pair"][0].is_disposed
    assert made[2].is_disposed


def test_tidy_context_disposes_everything_but_kept_and_variables():
    with core.tidy():
        a = core.tensor([1.0])
        b = core.keep(core.tensor([2.0]))
        v = core.variable([3.0])
    assert a.is_disposed and not b.is_disposed and not v.is_disposed


def test_nested_tidy_hands_the_result_to_the_outer_scope():
    with core.tidy():
        inner = core.tidy(lambda: core.tensor([1.0]) * 2)
        assert not inner.is_disposed
    assert inner.is_disposed


def test_tidy_disposes_on_exception():
    made = []

    def f():
        made.append(core.tensor([1.0]))
        raise KeyError("boom")

    with pytest.raises(KeyError):
        core.tidy(f)
    assert made[0].is_disposed
    with pytest.raises(TypeError, match="tidy: expected a function, got int"):
        core.tidy(3)


def test_tidy_keeps_values_a_tape_saved_for_backward():
    x = core.tensor([0.5, 1.0])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.tidy(lambda: core.sum(core.exp(x * 2)))
    g = tape.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_dispose_and_disposed_error_message():
    t = core.tensor([1.0, 2.0], name="weights")
    u = core.tensor([3.0])
    core.dispose([t, {"u": u}])
    assert t.is_disposed and u.is_disposed and "disposed" in repr(t)
    with pytest.raises(core.DisposedError, match=r"tensor 'weights' \(id \d+\) was disposed"):
        t.numpy()
    with pytest.raises(core.DisposedError, match=r"tensor 'weights' \(id \d+\) was disposed"):
        t * 2
    t.dispose()  # disposing twice is harmless


@pytest.fixture
def no_collector():
    """Exact counts of tv.memory() (global: every live tensor and tape) hold only while no
    earlier test's garbage is collected in between: collect it first, then hold the
    collector off."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_memory_counts_tensors_bytes_and_saved_bytes(no_collector):
    base = core.memory()
    a = core.tensor(np.zeros(100, np.float32))
    now = core.memory()
    assert now["num_tensors"] == base["num_tensors"] + 1
    assert now["num_bytes"] == base["num_bytes"] + 400
    a.dispose()
    assert core.memory()["num_bytes"] == base["num_bytes"]
    x = core.tensor(np.ones(10, np.float64))
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.exp(x))  # saves exp's output: 80 bytes
    assert core.memory()["saved_bytes"] - base["saved_bytes"] == 80
    assert core.memory()["num_tapes"] >= 1
    tape.gradient(y, x)
    assert core.memory()["saved_bytes"] == base["saved_bytes"]


def test_dropped_tensors_leave_the_count():
    before = _count()
    for _ in range(10):
        core.exp(core.tensor(np.ones(4)))
    assert _count() == before


def test_keep_rejects_non_tensors():
    with pytest.raises(TypeError, match="keep: expected a Tensor, got list"):
        core.keep([1.0])
