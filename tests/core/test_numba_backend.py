"""The numba backend: every kernel against its numpy twin, delegation, lazy compilation."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.backends import numba as nb
from tapeviz.core.backends.numba import compiled_elementwise, compiled_reduce
from tapeviz.core.ops.nn import conv_pads
from tapeviz.core.registry import kernel_names as K
from tapeviz.core.registry.kernels import get_kernel

DTYPES = (np.float32, np.float64)
UNARY_SHAPES = [(), (1,), (7,), (3, 4, 5), (0, 4)]


@pytest.fixture
def compiled():
    """Compiled paths for every size."""
    old = nb.settings.min_size
    nb.settings.min_size = 0
    try:
        yield
    finally:
        nb.settings.min_size = old


def _check(name, inputs, attrs, rtol=None):
    want = np.asarray(get_kernel(name, "numpy").fn(inputs, attrs))
    got = np.asarray(get_kernel(name, "numba").fn(inputs, attrs))
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if rtol is None:
        rtol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=name)


def _rand(rng, shape, dtype, positive=False):
    x = rng.standard_normal(shape).astype(dtype)
    return np.abs(x) + dtype(0.1) if positive else x


# --- registration ------------------------------------------------------------------------


def test_numpy_stays_the_default_and_numba_is_registered():
    assert core.list_backends()[:2] == ["numpy", "numba"]
    assert core.get_backend() == "numpy"


def test_every_numpy_kernel_exists_on_numba():
    numpy_kernels = {c.kernel_name for c in core.kernels_for_backend("numpy")}
    numba_kernels = {c.kernel_name: c for c in core.kernels_for_backend("numba")}
    assert numpy_kernels <= set(numba_kernels), numpy_kernels - set(numba_kernels)
    delegated = nb.delegated_kernels()
    for name, config in numba_kernels.items():
        if config.delegates_to is not None:
            assert config.delegates_to == "numpy"
            assert delegated[name], name  # a stated reason
            assert config.fn is get_kernel(name, "numpy").fn  # exactly numpy's kernel
    compiled = {n for n, c in numba_kernels.items() if c.delegates_to is None}
    assert {K.SUM, K.PROD, K.SOFTMAX, K.LOG_SOFTMAX, K.CONV2D, K.MAX_POOL} <= compiled
    assert {K.TANH, K.EXP, K.MATMUL, K.MAX} <= set(delegated)


def test_only_the_elementwise_kernel_that_wins_is_compiled():
    """bench/numba_elementwise.md: LeakyRelu's one loop beats numpy's three passes; every
    other elementwise kernel is numpy's, with the measured reason."""
    assert get_kernel(K.LEAKY_RELU, "numba").delegates_to is None
    assert K.LEAKY_RELU not in nb.delegated_kernels()
    for name in (K.ADD, K.MUL, K.RELU, K.CLIP, K.GREATER):
        assert get_kernel(name, "numba").delegates_to == "numpy"
        assert "numba_elementwise.md" in nb.delegated_kernels()[name]


def test_importing_core_compiles_nothing():
    code = (
        "import tapeviz.core as core\n"
        "from tapeviz.core.backends import numba as nb\n"
        "ds = nb.dispatchers()\n"
        "assert len(ds) >= 10, ds\n"
        "assert all(not d.signatures for d in ds), [d for d in ds if d.signatures]\n"
        "assert nb.compile_report().total_compile_s == 0\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "ok" in out.stdout


_REPORT_SCRIPT = """
import time

import numpy as np
from numba.core import event

from tapeviz.core import kernel_names as K
from tapeviz.core.backends import numba as nb
from tapeviz.core.registry.kernels import get_kernel

nb.settings.min_size = 0
x = np.ones((5, 6), np.float64)
start = time.perf_counter()
with event.install_recorder("numba:compile") as rec:
    get_kernel(K.SUM, "numba").fn({"x": x}, {"axis": (1,), "keepdims": False})
wall = time.perf_counter() - start
row = next(r for r in nb.compile_report().rows if r["function"].endswith("reduce_rows"))
mine = [t for t, ev in rec.buffer if ev.data["dispatcher"].py_func.__name__ == "reduce_rows"]
print(len(row["signatures"]), row["cache_hits"], row["compile_s"], wall, *mine)
print(nb.compile_report())
"""


def test_compile_report_counts_compile_time_and_cache_hits(run_script, tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}  # an empty cache: a compile
    _, first = run_script(_REPORT_SCRIPT, env)
    assert first.returncode == 0 and first.stderr == "", first.stderr
    sigs, hits, compile_s, wall, began, ended = map(float, first.stdout.split("\n")[0].split())
    assert (sigs, hits) == (1, 0)  # compiled once, for float64, not loaded
    # numba's own start and end of that compile, timed independently, agree with it
    assert compile_s == pytest.approx(ended - began, abs=2e-3) and compile_s <= wall
    assert "reduce_rows" in first.stdout and "0 cache hits" in first.stdout
    _, second = run_script(_REPORT_SCRIPT, env)  # the same cache: loaded, not compiled
    assert second.returncode == 0 and second.stderr == "", second.stderr
    sigs, hits, compile_s, wall = map(float, second.stdout.split("\n")[0].split())
    assert (sigs, hits, compile_s) == (1, 1, 0.0)
    assert "1 cache hits" in second.stdout


def test_tape_records_the_numba_backend():
    x = core.tensor(np.linspace(-1, 1, 12).reshape(3, 4))
    with core.backend("numba"), core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.softmax(x * 2.0, axis=-1) + core.tanh(x))
    assert tape.nodes and all(n.backend == "numba" for n in tape.nodes)
    g = tape.gradient(y, x)
    with core.Tape() as ref:
        ref.watch(x)
        y2 = core.sum(core.softmax(x * 2.0, axis=-1) + core.tanh(x))
    np.testing.assert_allclose(g.numpy(), ref.gradient(y2, x).numpy(), rtol=1e-12)


# --- elementwise -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_leaky_relu_equals_numpy_bit_for_bit(compiled, dtype):
    rng = np.random.default_rng(5)
    kernel = get_kernel(K.LEAKY_RELU, "numba").fn
    for shape in UNARY_SHAPES:
        for alpha in (0.01, 0.3, 1.7):
            x = _rand(rng, shape, dtype)
            want = get_kernel(K.LEAKY_RELU, "numpy").fn({"x": x}, {"alpha": alpha})
            got = kernel({"x": x}, {"alpha": alpha})
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), (shape, alpha)


def test_leaky_relu_nan_signed_zero_and_fallbacks(compiled):
    x = np.array([np.nan, -0.0, 0.0, -np.inf, np.inf, -2.0, 3.0], np.float32)
    _check(K.LEAKY_RELU, {"x": x}, {"alpha": 0.2})
    got = get_kernel(K.LEAKY_RELU, "numba").fn({"x": x}, {"alpha": 0.2})
    assert np.signbit(got[1]) and not np.signbit(got[2])
    ints = np.arange(-3, 3, dtype=np.int32)  # not compiled: numpy's kernel
    _check(K.LEAKY_RELU, {"x": ints}, {"alpha": 0.2})
    view = np.arange(-6.0, 6.0).reshape(3, 4).T  # not contiguous: numpy's kernel
    _check(K.LEAKY_RELU, {"x": view}, {"alpha": 0.2})


def test_pure_elementwise_impl_against_numpy():
    a = np.random.default_rng(3).standard_normal(100)
    out = np.empty(100)
    np.testing.assert_array_equal(
        compiled_elementwise.leaky_relu(a, out, 0.1), np.where(a > 0, a, a * 0.1)
    )


def test_leaky_relu_under_a_tape_on_numba():
    x = core.tensor(np.linspace(-1, 1, 20_000))  # above min_size: the compiled kernel runs
    with core.backend("numba"), core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.leaky_relu(x, 0.1))
    g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(g, np.where(x.numpy() > 0, 1.0, 0.1))
    assert tape.nodes[0].backend == "numba"


# --- reductions and softmax --------------------------------------------------------------

AXES = [None, (0,), (1,), (2,), (0, 2), (1, 2), (0, 1), (0, 1, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [K.SUM, K.PROD, K.MAX, K.MIN])
def test_reductions_match_numpy(compiled, name, dtype):
    rng = np.random.default_rng(7)
    for shape in [(3, 4, 5), (1, 6, 1), (2, 1, 3)]:
        x = _rand(rng, shape, dtype) * dtype(0.7)
        for axis in AXES:
            for keepdims in (False, True):
                attrs = {"axis": axis, "keepdims": keepdims, "input_shape": shape}
                _check(name, {"x": x}, attrs)
    if name in (K.SUM, K.PROD):
        empty = np.zeros((0, 3), dtype)
        _check(name, {"x": empty}, {"axis": (0,), "keepdims": False})
        _check(name, {"x": empty}, {"axis": None, "keepdims": True})
        long = _rand(rng, (2, 70000), dtype) * dtype(0.001) + dtype(1)
        _check(name, {"x": long}, {"axis": None, "keepdims": False}, rtol=1e-4)
        _check(name, {"x": long}, {"axis": (1,), "keepdims": False}, rtol=1e-4)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [K.SOFTMAX, K.LOG_SOFTMAX])
def test_softmax_matches_numpy(compiled, name, dtype):
    rng = np.random.default_rng(11)
    for shape in [(7,), (3, 4, 5), (1, 1), (4, 1)]:
        x = _rand(rng, shape, dtype) * dtype(5)
        for axis in range(len(shape)):
            _check(name, {"x": x}, {"axis": axis})
    _check(name, {"x": np.array([[0.0, np.inf, 1.0]], dtype)}, {"axis": 1})


def test_pure_reduce_impl_against_numpy():
    x = np.random.default_rng(2).standard_normal((4, 100000))
    np.testing.assert_allclose(compiled_reduce.reduce_rows(x, np.empty(4), 0), x.sum(1))
    x3 = x.reshape(4, 100, 1000)
    np.testing.assert_allclose(compiled_reduce.reduce_mid(x3, np.empty((4, 1000)), 0), x3.sum(1))


# --- conv2d and pooling ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_kernels_match_numpy(compiled, dtype):
    rng = np.random.default_rng(5)
    for xs, ws, strides, padding in [
        ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), "valid"),
        ((2, 7, 6, 3), (3, 2, 3, 4), (2, 1), "same"),
        ((1, 5, 5, 1), (1, 1, 1, 2), (2, 2), "same"),
        ((3, 4, 4, 2), (4, 4, 2, 1), (1, 1), "valid"),
    ]:
        x, w = _rand(rng, xs, dtype), _rand(rng, ws, dtype)
        attrs = {"strides": strides, "pads": conv_pads(xs[1:3], ws[:2], strides, padding, "c")}
        y = get_kernel(K.CONV2D, "numpy").fn({"x": x, "filter": w}, attrs)
        _check(K.CONV2D, {"x": x, "filter": w}, attrs)
        dy = _rand(rng, y.shape, dtype)
        _check(K.CONV2D_BACKPROP_INPUT, {"dy": dy, "filter": w}, {**attrs, "input_shape": xs})
        _check(K.CONV2D_BACKPROP_FILTER, {"x": x, "dy": dy}, {**attrs, "filter_shape": ws})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "forward,backward", [(K.MAX_POOL, K.MAX_POOL_GRAD), (K.AVG_POOL, K.AVG_POOL_GRAD)]
)
def test_pooling_kernels_match_numpy(compiled, forward, backward, dtype):
    rng = np.random.default_rng(9)
    for xs, ksize, strides, padding in [
        ((2, 7, 6, 3), (3, 2), (1, 1), "valid"),
        ((2, 7, 6, 3), (2, 2), (2, 2), "same"),
        ((1, 5, 5, 1), (3, 3), (2, 1), "same"),
    ]:
        x = _rand(rng, xs, dtype)
        attrs = {"ksize": ksize, "strides": strides}
        attrs["pads"] = conv_pads(xs[1:3], ksize, strides, padding, "p")
        y = get_kernel(forward, "numpy").fn({"x": x}, attrs)
        _check(forward, {"x": x}, attrs)
        dy = _rand(rng, y.shape, dtype)
        _check(backward, {"x": x, "dy": dy}, {**attrs, "input_shape": xs})


def test_gradients_through_compiled_kernels(compiled):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 6, 2))
    w = rng.standard_normal((3, 3, 2, 3)) * 0.5

    def net(x, w):
        h = core.conv2d(x, w, strides=1, padding="same")
        h = core.max_pool2d(h, 2) + core.avg_pool2d(h, 2)
        return core.log_softmax(core.reshape(h, (2, -1)), axis=-1) * core.sum(h * h)

    with core.backend("numba"):
        report = core.check_grads(net, x, w)
    assert report.passed
