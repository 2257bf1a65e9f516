"""Wolfram's CompiledLayer (seed 002): compiled forward, three gradient modes, batches,
shape inference, bounds checks, the info report and the one tape node it records."""

from __future__ import annotations

import time

import numba
import numpy as np
import pytest
from numba.core import event as numba_event

import tapeviz.core as core
from tapeviz.core import CompiledLayer
from tapeviz.core.autodiff.backward import GradientError
from tapeviz.core.custom.wolfram.compiled_layer import AutoDiffError

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def bounds_checked():
    """Tests run with bounds checks on (the default; a test may turn it off)."""
    old = core.settings.boundscheck
    core.settings.boundscheck = True
    yield
    core.settings.boundscheck = old


def srelu(x):
    return np.where(x <= -0.5, -0.5 + 0.1 * (x + 0.5), np.where(x >= 0.5, 0.5 + 0.2 * (x - 0.5), x))


def srelu_grad(x, dy):
    return dy * np.where(x <= -0.5, 0.1, np.where(x >= 0.5, 0.2, 1.0))


def tanh_grad(x, dy, y):
    return dy * (1 - y * y)


# --- the seed's examples -----------------------------------------------------------------


def test_rank3_machine_precision_layer_differentiates_automatically():
    layer = CompiledLayer(lambda x: np.sin(x) * x + x.sum(), name="rank3")
    x = RNG.standard_normal((2, 3, 4))
    y = layer(core.tensor(x))
    assert y.dtype == np.float64 and y.shape == (2, 3, 4)
    np.testing.assert_allclose(y.numpy(), np.sin(x) * x + x.sum(), rtol=1e-12)
    assert core.check_grads(layer, x).passed
    assert core.check_grads(layer, x, order=2).passed  # auto gradients are ops


def test_rank2_float32_layer_keeps_float32_and_gives_input_gradients():
    layer = CompiledLayer(lambda x: x * np.float64(2.0) + np.exp(-x))  # numba promotes
    x = core.tensor(RNG.standard_normal((3, 4)).astype(np.float32))
    y = layer(x)
    assert y.dtype == np.float32
    g = core.grad(lambda t: core.sum(layer(t)))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), 2 - np.exp(-x.numpy()), rtol=1e-5)


def test_explicit_gradient_x_dy():
    layer = CompiledLayer(srelu, gradient=srelu_grad)
    x = np.linspace(-2, 2, 11) + 0.013
    np.testing.assert_allclose(layer(core.tensor(x)).numpy(), srelu(x))
    assert core.check_grads(layer, x).passed
    assert layer.info().gradient == "explicit (x, dy)"


def test_explicit_gradient_reuses_the_output():
    layer = CompiledLayer(np.tanh, gradient=tanh_grad)
    x = core.tensor(RNG.standard_normal((4, 3)))
    with core.Tape() as tape:
        tape.watch(x)
        y = layer(x)
    (node,) = tape.nodes
    assert [(s.role, s.name) for s in node.saved] == [("input", "x"), ("output", 0)]
    assert node.saved[1].tensor is y  # the forward's output, not a recomputation
    assert core.check_grads(layer, x.numpy()).passed


def test_gradient_none_is_a_clear_error_naming_the_layer():
    layer = CompiledLayer(srelu, gradient=None, name="frozen")
    x = core.tensor([0.1, 0.9])
    assert layer(x).shape == (2,)
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(layer(x))
    assert tape.nodes[0].saved == []
    with pytest.raises(GradientError, match="'frozen'.*gradient=None"):
        tape.gradient(y, x)


@pytest.mark.parametrize(
    "func, construct",
    [
        (lambda x: np.cumsum(x), "np.cumsum"),
        (lambda x: np.sort(x) * 2, "np.sort"),
        (lambda x: x * 2 if x[0] > 0 else x, "control flow"),
    ],
)
def test_automatic_differentiation_names_what_it_cannot_do(func, construct):
    layer = CompiledLayer(func, name="bad")
    x = core.tensor([0.5, -0.2, 0.3])
    assert layer(x).shape == (3,)  # the forward runs; differentiating it cannot
    with pytest.raises(AutoDiffError, match=f"(?s)'bad'.*{construct}.*gradient="):
        core.grad(lambda t: core.sum(layer(t)))(x)


def test_element_loops_and_in_place_writes_are_named():
    def running_max(x):
        out = np.empty_like(x)
        m = -np.inf
        for i in range(x.shape[0]):
            m = max(m, x[i])
            out[i] = m
        return out

    layer = CompiledLayer(running_max)
    x = core.tensor([0.1, 0.5, 0.2])
    np.testing.assert_allclose(layer(x).numpy(), [0.1, 0.5, 0.5])
    with pytest.raises(AutoDiffError, match="np.empty_like"):
        core.grad(lambda t: core.sum(layer(t)))(x)

    def loop(x):
        s = 0.0
        for v in x:
            s += v
        return x * s

    with pytest.raises(AutoDiffError, match="loop over the elements"):
        core.grad(lambda t: core.sum(CompiledLayer(loop)(t)))(x)


def test_reversing_a_batch_as_the_seed_shows():
    def reverse(x):
        return x[::-1]

    layer = CompiledLayer(reverse, input_rank=1, batch=True)
    vector = core.tensor([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(layer(vector).numpy(), [1.0, 2.0, 3.0, 4.0])  # unchanged
    batch = core.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(layer(batch).numpy(), [[5.0, 6.0], [3.0, 4.0], [1.0, 2.0]])
    assert core.check_grads(layer, batch.numpy().astype(np.float64)).passed


def test_a_typed_rank2_function_with_rank1_input_is_batch_level():
    typed = numba.njit("float64[:, :](float64[:, :])")(lambda x: x[::-1].copy())
    layer = CompiledLayer(typed, input_rank=1, gradient=None)
    assert layer.batch
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(layer(core.tensor(x)).numpy(), x[::-1])


def test_per_example_function_is_mapped_over_the_batch():
    def normalize(x):
        return x / np.sqrt((x * x).sum()) + np.tanh(x).max()

    layer = CompiledLayer(normalize, input_rank=1)
    x = RNG.standard_normal((5, 4))
    y = layer(core.tensor(x))
    want = x / np.sqrt((x * x).sum(1, keepdims=True)) + np.tanh(x).max(1, keepdims=True)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(layer(core.tensor(x[2])).numpy(), want[2], rtol=1e-12)
    assert core.check_grads(layer, x).passed  # traced per example (vmap-style)
    explicit = CompiledLayer(np.tanh, gradient=tanh_grad, input_rank=1)
    assert core.check_grads(explicit, x).passed  # the gradient is mapped too


def test_batch_level_function_must_keep_the_batch_dimension():
    layer = CompiledLayer(lambda x: x.sum(axis=0), input_rank=1, batch=True, name="collapse")
    with pytest.raises(ValueError, match="'collapse'.*keep the batch dimension"):
        layer(core.tensor(np.ones((3, 2))))


def test_input_rank_is_checked():
    layer = CompiledLayer(lambda x: x * 2, input_rank=2, name="r2")
    with pytest.raises(ValueError, match="'r2'.*rank 2.*or 3.*got rank 1"):
        layer(core.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="float32 or float64"):
        layer(core.tensor(np.ones((2, 2), np.int32)))


def test_output_shape_is_inferred_and_value_dependence_is_an_error():
    def positives(x):
        n = 0
        for v in x:
            if v > 0:
                n += 1
        return x[:n] * 1.0

    layer = CompiledLayer(positives, gradient=None, name="positives")
    test = np.random.default_rng(0).standard_normal(6)  # the layer's test input
    expected = int((test > 0).sum())
    same = np.where(np.arange(6) < expected, 1.0, -1.0)
    assert layer(core.tensor(same)).shape == (expected,)  # matches: it works
    other = np.where(np.arange(6) < expected + 1, 1.0, -1.0)
    with pytest.raises(ValueError, match="'positives'.*depends on the input's values"):
        layer(core.tensor(other))


def test_boundscheck_gives_an_index_error_naming_the_layer():
    def past_the_end(x):
        return x + x[x.shape[0]]

    layer = CompiledLayer(past_the_end, gradient=None, boundscheck=True, name="oob")
    with pytest.raises(IndexError, match="'oob'.*out of bounds"):
        layer(core.tensor([1.0, 2.0]))
    follows = CompiledLayer(past_the_end, gradient=None)  # the global debug setting is on
    with pytest.raises(IndexError, match="out of bounds"):
        follows(core.tensor([1.0, 2.0]))
    assert CompiledLayer(past_the_end, boundscheck=False).info().boundscheck == "off"


def _top_level_seconds(buffer) -> float:
    """Seconds inside outermost ``numba:compile`` events (nested compiles counted once)."""
    total, depth, began = 0.0, 0, 0.0
    for stamp, ev in buffer:
        if ev.is_start:
            depth, began = depth + 1, began if depth else stamp
        else:
            depth -= 1
            total += 0.0 if depth else stamp - began
    assert total > 0, "numba compiled nothing: the check below would be empty"
    return total


def test_bounds_are_checked_by_default_and_unchecked_is_the_opt_in():
    """Issue 12 (9): an out-of-range index in a default layer is an IndexError, not a
    crashed process; the unchecked mode is asked for explicitly."""
    assert type(core.settings).boundscheck is True  # the shipped default

    def past_the_end(x):
        return x + x[x.shape[0]]

    layer = CompiledLayer(past_the_end, gradient=None, name="oob")
    assert layer.info().boundscheck == "follows core.settings.boundscheck"
    with pytest.raises(IndexError, match="'oob'.*out of bounds"):
        layer(core.tensor([1.0, 2.0]))
    assert CompiledLayer(past_the_end, gradient=None, boundscheck=False)._checked() is False


def test_info_reports_shapes_gradient_signatures_and_compile_time():
    layer = CompiledLayer(srelu, gradient=srelu_grad, input_rank=1, name="srelu")
    x = core.tensor(np.ones((3, 5), np.float32))
    start = time.perf_counter()
    with numba_event.install_recorder("numba:compile") as rec:
        layer(x)
    wall = time.perf_counter() - start
    info = layer.info()
    assert info.name == "srelu" and info.input_rank == 1 and not info.batch
    assert info.shapes == [((5,), (5,), "float32")]
    assert any("float32" in s for s in info.signatures)
    # numba's own compile events, timed independently, fit inside it; the call holds both
    assert _top_level_seconds(rec.buffer) <= info.compile_s <= wall
    layer(x)  # compiled once: a second call adds no compile time
    assert layer.info().compile_s == info.compile_s
    text = str(info)
    assert "explicit (x, dy) srelu_grad" in text and "compile time" in text
    assert "<table>" in info._repr_html_()


def test_one_tape_node_saving_only_what_the_gradient_needs():
    layer = CompiledLayer(srelu, name="srelu_auto")
    x = core.tensor(RNG.standard_normal(6))
    with core.Tape() as tape:
        tape.watch(x)
        y = layer(x)
    (node,) = tape.nodes
    assert node.style == "CompiledLayer" and node.label == "srelu_auto"
    assert [(s.role, s.name) for s in node.saved] == [("input", "x")]
    assert node.outputs[0] is y
    assert layer.parameters() == []


def test_fits_in_a_sequential():
    layer = CompiledLayer(srelu, gradient=srelu_grad)
    model = core.nn.Sequential([core.nn.Dense(4), layer])
    x = core.tensor(np.ones((2, 3), np.float32))
    assert model(x).shape == (2, 4)


def test_wrong_gradients_are_clear_errors():
    with pytest.raises(TypeError, match=r"\(x, dy\) or \(x, dy, y\)"):
        CompiledLayer(srelu, gradient=lambda x: x)
    bad = CompiledLayer(srelu, gradient=lambda x, dy: dy[:1], name="short")
    x = core.tensor(np.ones(3))
    with pytest.raises(GradientError, match="'short'.*shape \\(1,\\).*\\(3,\\)"):
        core.grad(lambda t: core.sum(bad(t)))(x)
    with pytest.raises(TypeError, match="Python function or a numba"):
        CompiledLayer(42)


def test_a_numba_only_construct_is_an_autodiff_error():
    def uses_prange(x):
        out = x * 0.0
        for i in numba.prange(x.shape[0]):
            out[i] = x[i] * 2.0
        return out

    layer = CompiledLayer(uses_prange, name="par")
    x = core.tensor([1.0, 2.0])
    np.testing.assert_allclose(layer(x).numpy(), [2.0, 4.0])
    with pytest.raises(AutoDiffError, match="'par'.*in-place write"):
        core.grad(lambda t: core.sum(layer(t)))(x)


def test_the_tracer_reads_numpys_ufuncs_from_the_one_table():
    # numba's tracer had its own table that made expm1 exp(x) - 1 (every digit lost near 0,
    # refused by the consistency check); it now takes numpy dispatch's ops
    layer = CompiledLayer(lambda x: np.expm1(x) * 2.0)
    x = core.tensor(np.array([1e-10, 1e-5, 0.5]))
    with core.Tape() as tape:
        tape.watch(x)
        loss = core.sum(layer(x))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), 2 * np.exp(x.numpy()), rtol=1e-15)
