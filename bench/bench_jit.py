"""tv.jit against eager tapeviz, numpy by hand, HIPS autograd and PyTorch, in one run.

Run: ``.venv/bin/python bench/bench_jit.py [--quick]``. Four figures (issue 26), every ratio
from this run (CPU time, best of several rounds; the machine is shared and noisy):

1. per-op cost: a 100-op chain (mul, add, tanh, exp repeating) on 16 float64, forward and
   backward: ``jit(grad(f))`` against PyTorch eager, numpy by hand and HIPS autograd;
2. an MLP step, 784-256-256-10, batch 128, float32: ``jit(grads(loss))`` + SGD by hand
   against the same step in numpy by hand (wall time, interleaved rounds: min and median);
3. a 10-op chain on 4M float32 (bench_engine's), forward and backward, against numpy by hand,
   and the peak memory of one call, jitted against eager (tracemalloc: numpy reports its
   allocations to it);
4. the first call of the 100-op chain (trace + code generation + the run), and a retrace
   (the same function on a new shape).
"""

from __future__ import annotations

import gc
import os
import pathlib
import sys
import time
import tracemalloc

# one BLAS thread for every system (numpy, PyTorch): on a shared two-core machine a second
# BLAS thread makes wall times a lottery; per-thread cost is what the figures compare
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from bench_engine import BIG_OPS, best_time, big_core, big_numpy, mixed_runs  # noqa: E402

import tapeviz.core as tv  # noqa: E402

QUICK = "--quick" in sys.argv
MIXED = 25  # mul, add, tanh, exp x 25 = 100 ops (+ sum)


def chain(y):
    for _ in range(MIXED):
        y = tv.exp(tv.tanh(y * 0.5 + 0.1))
    return tv.sum(y)


def per_op_rows():
    runs = mixed_runs()  # tapeviz eager, numpy by hand, autograd, torch (bench_engine's)
    x = tv.tensor(np.linspace(-1, 1, 16))
    jitted = tv.jit(tv.grad(chain))
    np.testing.assert_array_equal(jitted(x).numpy(), runs["tapeviz"]().numpy())
    runs = {"tapeviz jit(grad(f))": lambda: jitted(x), **runs}
    runs["tapeviz (eager)"] = runs.pop("tapeviz")
    n_ops = 4 * MIXED + 1
    times = {k: best_time(fn, number=50 if k.startswith("tapeviz jit") else 10) / n_ops * 1e6
             for k, fn in runs.items()}  # fmt: skip
    ours = times["tapeviz jit(grad(f))"]
    rows = []
    for k, t in times.items():
        what = k if k.startswith("tapeviz jit") else f"{k}  (jit / it = {ours / t:.2f}x)"
        rows.append(("100-op chain, 16 float64, fwd+bwd" if not rows else "", what, t, "us/op"))
    return rows


def mlp_rows():
    import bench_train as bt

    ws, (x, y) = bt._weights(), bt._batch()
    params, xt = [tv.tensor(w) for w in ws], tv.tensor(x)

    def loss(w1, b1, w2, b2, w3, b3):
        h = tv.relu(xt @ w1 + b1)
        h = tv.relu(h @ w2 + b2)
        return tv.losses.softmax_cross_entropy(y, h @ w3 + b3)

    grads = tv.jit(tv.grads(loss))
    eager = tv.grads(loss)

    def step(g):
        def run():
            for i, d in enumerate(g(*params)):
                params[i] = tv.Tensor(params[i]._array - bt.LR * d._array)

        return run

    hand = bt.numpy_step_fn()
    cands = {"numpy by hand": hand, "tapeviz jit(grads(loss)) + SGD": step(grads),
             "tapeviz eager grads(loss) + SGD": step(eager)}  # fmt: skip
    torch_step = bt.torch_step_fn()
    if torch_step is not None:
        import torch

        torch.set_num_threads(1)
        cands["PyTorch CPU eager"] = torch_step
    times = {k: [] for k in cands}
    for _ in range(5 if QUICK else 15):  # interleaved rounds: load hits all alike
        for k, fn in cands.items():
            fn()
            start = time.perf_counter()
            for _ in range(5):
                fn()
            times[k].append((time.perf_counter() - start) / 5)
    lo, mid = min(times["numpy by hand"]), np.median(times["numpy by hand"])
    rows = []
    for k, ts in times.items():
        label = "MLP 784-256-256-10 step, batch 128 f32" if not rows else ""
        ratio = f"{min(ts) / lo:.2f}x numpy (min), {np.median(ts) / mid:.2f}x (median)"
        rows.append((label, f"{k}  ({ratio})", min(ts) * 1e3, "ms"))
    return rows


def _peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def big_rows():
    n = 1 << 20 if QUICK else 1 << 22
    data = np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32)
    x = tv.tensor(data)

    def f(t):
        for _, op, _, _ in BIG_OPS:
            t = op(t)
        return tv.sum(t)

    jitted = tv.jit(tv.grad(f))
    eager = big_core(x)
    np.testing.assert_array_equal(jitted(x).numpy(), eager().numpy())
    hand = big_numpy(data)
    t_jit = best_time(lambda: jitted(x), repeat=5, number=2)
    t_hand = best_time(hand, repeat=5, number=2)
    t_eager = best_time(eager, repeat=5, number=2)
    p_jit, p_eager, p_hand = _peak(lambda: jitted(x)), _peak(eager), _peak(hand)
    mb = 1 << 20
    label = f"10-op chain, {n >> 20}M float32, fwd+bwd"
    return [
        (label, f"tapeviz jit(grad(f))  ({t_jit / t_hand:.2f}x numpy)", t_jit * 1e3, "ms"),
        ("", f"tapeviz eager  ({t_eager / t_hand:.2f}x numpy)", t_eager * 1e3, "ms"),
        ("", "numpy by hand", t_hand * 1e3, "ms"),
        (
            "peak memory of one call (tracemalloc)",
            f"jit  ({p_jit / p_eager:.2f}x eager)",
            p_jit / mb,
            "MiB",
        ),  # fmt: skip
        ("", f"eager  ({p_eager / p_hand:.2f}x numpy by hand)", p_eager / mb, "MiB"),
        ("", "numpy by hand", p_hand / mb, "MiB"),
    ]


def trace_rows():
    rows, firsts, retraces = [], [], []
    for _ in range(3 if QUICK else 7):
        jitted = tv.jit(tv.grad(chain))
        x16, x32 = tv.tensor(np.linspace(-1, 1, 16)), tv.tensor(np.linspace(-1, 1, 32))
        start = time.process_time()
        jitted(x16)
        firsts.append(time.process_time() - start)
        start = time.process_time()
        jitted(x32)  # a new shape: traced again
        retraces.append(time.process_time() - start)
        assert jitted.traces == 2
    cached = best_time(lambda: jitted(x32), number=50)
    eager = best_time(lambda: tv.grad(chain)(x32), number=10)
    rows.append(("first call, 100-op chain (trace+codegen+run)", "tapeviz jit",
                 np.median(firsts) * 1e3, "ms"))  # fmt: skip
    rows.append(("", "a retrace (a new shape)", np.median(retraces) * 1e3, "ms"))
    rows.append(("", "a cached call", cached * 1e3, "ms"))
    rows.append(("", f"eager call (trace = {np.median(firsts) / eager:.1f} eager calls)",
                 eager * 1e3, "ms"))  # fmt: skip
    return rows


def main():
    rows = per_op_rows() + mlp_rows() + big_rows() + trace_rows()
    width = max(len(r[0]) for r in rows) + 2
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    print(f"tv.jit against peers; BLAS threads {threads}; CPU time unless said (MLP: wall)")
    print(f"{'benchmark':<{width}}{'system':<62}{'value':>10}  unit")
    print("-" * (width + 80))
    for bench, system, value, unit in rows:
        print(f"{bench:<{width}}{system:<62}{value:10.3f}  {unit}")


if __name__ == "__main__":
    main()
