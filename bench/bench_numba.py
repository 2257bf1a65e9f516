"""Benchmark: the numba backend against numpy, and a CompiledLayer SReLU against numpy ops.

Not a test. Run: ``.venv/bin/python bench/bench_numba.py [--quick]``. Compile time (first
call, or a disk-cache load) is measured and reported apart from run time; run times are the
best of several repeats after a warm-up call.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tapeviz.core as core
from tapeviz.core.backends import numba as nb
from tapeviz.core.ops.nn import conv_pads
from tapeviz.core.registry import kernel_names as K
from tapeviz.core.registry.kernels import get_kernel

SIZES = (1_000, 100_000, 4_000_000)


def best_us(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e6


def _square(n):
    side = int(round(n**0.5))
    return (side, n // side)


def kernel_cases(n, rng):
    """(label, kernel name, inputs, attrs) at about ``n`` elements (float32)."""
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    m = rng.standard_normal(_square(n)).astype(np.float32)
    row = rng.standard_normal(_square(n)[1]).astype(np.float32)
    red = {"keepdims": False}
    return [
        ("add", K.ADD, {"a": x, "b": y}, {}),
        ("mul broadcast row", K.MUL, {"a": m, "b": row}, {}),
        ("maximum", K.MAXIMUM, {"a": x, "b": y}, {}),
        ("relu", K.RELU, {"x": x}, {}),
        ("leaky_relu", K.LEAKY_RELU, {"x": x}, {"alpha": 0.01}),
        ("greater", K.GREATER, {"a": x, "b": y}, {}),
        ("tanh (delegated)", K.TANH, {"x": x}, {}),
        ("sum all", K.SUM, {"x": x}, {**red, "axis": None}),
        ("sum axis 0", K.SUM, {"x": m}, {**red, "axis": (0,)}),
        ("sum axis -1", K.SUM, {"x": m}, {**red, "axis": (1,)}),
        ("max axis -1", K.MAX, {"x": m}, {**red, "axis": (1,)}),
        ("softmax axis -1", K.SOFTMAX, {"x": m}, {"axis": 1}),
        ("log_softmax axis -1", K.LOG_SOFTMAX, {"x": m}, {"axis": 1}),
    ]


def nn_cases(rng):
    x = rng.standard_normal((32, 32, 32, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    conv = {"strides": (1, 1), "pads": conv_pads((32, 32), (3, 3), (1, 1), "same", "conv2d")}
    pool = {"ksize": (2, 2), "strides": (2, 2), "pads": ((0, 0), (0, 0))}
    dy_conv = rng.standard_normal((32, 32, 32, 16)).astype(np.float32)
    dy_pool = rng.standard_normal((32, 16, 16, 8)).astype(np.float32)
    return [
        ("conv2d 32x32x32x8 * 3x3x8x16", K.CONV2D, {"x": x, "filter": w}, conv),
        (
            "conv2d backprop input",
            K.CONV2D_BACKPROP_INPUT,
            {"dy": dy_conv, "filter": w},
            {**conv, "input_shape": x.shape},
        ),
        (
            "conv2d backprop filter",
            K.CONV2D_BACKPROP_FILTER,
            {"x": x, "dy": dy_conv},
            {**conv, "filter_shape": w.shape},
        ),
        ("max_pool 2x2", K.MAX_POOL, {"x": x}, pool),
        ("max_pool grad", K.MAX_POOL_GRAD, {"x": x, "dy": dy_pool}, pool),
        ("avg_pool 2x2", K.AVG_POOL, {"x": x}, pool),
        ("avg_pool grad", K.AVG_POOL_GRAD, {"dy": dy_pool}, {**pool, "input_shape": x.shape}),
    ]


def compare(label, name, inputs, attrs, repeat):
    """Time numpy's kernel and the numba backend's on the same inputs."""
    f_np = get_kernel(name, "numpy").fn
    f_nb = get_kernel(name, "numba").fn
    t0 = time.perf_counter()
    f_nb(inputs, attrs)  # compiles, or loads from numba's cache
    first = (time.perf_counter() - t0) * 1e3
    t_np = best_us(lambda: f_np(inputs, attrs), repeat)
    t_nb = best_us(lambda: f_nb(inputs, attrs), repeat)
    kind = "delegated" if get_kernel(name, "numba").delegates_to else ""
    print(
        f"  {label:<30} numpy {t_np:10.1f} us   numba {t_nb:10.1f} us   x{t_np / t_nb:5.2f}"
        f"   (first call {first:8.1f} ms) {kind}"
    )
    return t_np, t_nb


def srelu_numpy_ops(x, tl, al, tr, ar):
    """SReLU (MATLAB seed) composed from core ops."""
    return core.where(x <= tl, tl + al * (x - tl), core.where(x >= tr, tr + ar * (x - tr), x))


def srelu_layer():
    tl, al, tr, ar = -0.5, 0.1, 0.5, 0.2

    def srelu(x):
        return np.where(x <= tl, tl + al * (x - tl), np.where(x >= tr, tr + ar * (x - tr), x))

    def srelu_grad(x, dy):
        return dy * np.where(x <= tl, al, np.where(x >= tr, ar, 1.0)).astype(x.dtype)

    return core.CompiledLayer(srelu, gradient=srelu_grad, name="srelu"), (tl, al, tr, ar)


def bench_srelu(n, repeat):
    rng = np.random.default_rng(1)
    x = core.tensor(rng.standard_normal(n).astype(np.float32))
    dy = core.tensor(rng.standard_normal(n).astype(np.float32))
    layer, params = srelu_layer()

    def run(f):
        with core.Tape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x, output_gradients=dy)

    t0 = time.perf_counter()
    run(layer)
    first = (time.perf_counter() - t0) * 1e3
    t_ops = best_us(lambda: run(lambda t: srelu_numpy_ops(t, *params)), repeat)
    t_layer = best_us(lambda: run(layer), repeat)
    print(
        f"  SReLU fwd+bwd {n:>9,}: numpy ops {t_ops / 1e3:8.2f} ms   CompiledLayer "
        f"{t_layer / 1e3:8.2f} ms   x{t_ops / t_layer:5.2f}   (first call {first:8.1f} ms)"
    )
    print(f"  {layer.info()}")


def bench_boundscheck(n, repeat):
    """The checked default against the explicit unchecked opt-in, side by side: one
    example (whole input) and a batch of examples (mapped: parallel only when unchecked)."""
    rng = np.random.default_rng(2)

    def shift(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = x[i] - x[(i + 1) % x.shape[0]]
        return out

    cases = (("whole", None, (n,)), ("batch", 1, (n // 1000, 1000)))
    for label, rank, shape in cases:
        x = core.tensor(rng.standard_normal(shape).astype(np.float32))
        times = {}
        for checked in (True, False):
            layer = core.CompiledLayer(shift, gradient=None, input_rank=rank, boundscheck=checked)
            times[checked] = best_us(lambda layer=layer: layer(x), repeat)
        print(
            f"  boundscheck {label} {shape}: checked (default) {times[True] / 1e3:8.2f} ms   "
            f"unchecked {times[False] / 1e3:8.2f} ms   checked/unchecked "
            f"x{times[True] / times[False]:5.2f}"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeat = 5 if args.quick else 20
    rng = np.random.default_rng(0)
    print(f"numba threads: {nb.settings.num_threads or 'numba default'}")
    for n in SIZES:
        print(f"kernels at {n:,} elements (float32), as registered")
        cases = kernel_cases(n, rng)
        reps = repeat if n < 4_000_000 else max(repeat // 2, 3)
        for case in cases:
            compare(*case, repeat=reps)
    print("conv2d / pooling")
    for case in nn_cases(rng):
        compare(*case, repeat=max(repeat // 2, 5))
    print("CompiledLayer")
    bench_srelu(1_000_000, max(repeat // 4, 3))
    bench_boundscheck(1_000_000, max(repeat // 4, 3))
    print(nb.compile_report())


if __name__ == "__main__":
    main()
