"""Engine overhead against peers: per-op cost, large-array throughput, tape memory.

Run: ``.venv/bin/python bench/bench_engine.py [--quick]``. Prints one table; every ratio
comes from this one run. Peers (HIPS autograd, PyTorch CPU) are measured when importable.

1. per-op overhead: a 100-op chain (50 x tanh, mul by 0.9) on 16 float32, forward+backward.
2. throughput: a 10-op elementwise chain on 4M float32, forward+backward, against the same
   chain written by hand in numpy.
3. memory: saved-for-backward bytes per op (1,000-op chain on 1,024 float64) against what
   the gradients need, and tape metadata bytes per node (tracemalloc).
"""

from __future__ import annotations

import gc
import pathlib
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import tapeviz.core as core  # noqa: E402

QUICK = "--quick" in sys.argv


def best_time(fn, repeat=7, number=20) -> float:
    """Best mean CPU seconds per call over ``repeat`` rounds (robust on a busy machine)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - start) / number)
    return min(times)


# --- 1. per-op overhead -------------------------------------------------------------------
CHAIN = 50  # pairs: tanh then mul -> 100 ops (+1 sum)


def chain_core(x0, w=0.9):
    """tanh then mul by ``w`` (a number; or a numpy array or variable, which Mul saves)."""

    def run():
        with core.Tape() as tape:
            tape.watch(x0)
            y = x0
            for _ in range(CHAIN):
                y = core.tanh(y) * w
            s = core.sum(y)
        return tape.gradient(s, x0)

    return run


def chain_autograd():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None

    def f(x):
        for _ in range(CHAIN):
            x = anp.tanh(x) * 0.9
        return anp.sum(x)

    g = autograd.grad(f)
    x = np.linspace(-1, 1, 16).astype(np.float32)
    return lambda: g(x)


def chain_torch(size=16):
    try:
        import torch
    except ImportError:
        return None
    x = torch.linspace(-1, 1, size, dtype=torch.float32, requires_grad=True)

    def run():
        y = x
        for _ in range(CHAIN):
            y = torch.tanh(y) * 0.9
        (g,) = torch.autograd.grad(y.sum(), x)
        return g

    return run


def per_op_rows():
    n_ops = 2 * CHAIN + 1
    x0 = core.tensor(np.linspace(-1, 1, 16).astype(np.float32))
    rows = []
    core.settings.record_source = True
    ours = best_time(chain_core(x0)) / n_ops * 1e6
    rows.append(("per-op, 100-op chain, 16 float32", "tapeviz (source lines on)", ours, "us/op"))
    core.settings.record_source = False
    off = best_time(chain_core(x0)) / n_ops * 1e6
    core.settings.record_source = True
    rows.append(("", "tapeviz (source lines off)", off, "us/op"))
    w_np, w_var = np.full(16, 0.9, np.float32), core.variable(np.full(16, 0.9, np.float32))
    for what, w in (("a numpy operand", w_np), ("a variable operand", w_var)):
        t = best_time(chain_core(x0, w)) / n_ops * 1e6
        rows.append(("", f"tapeviz, mul by {what} (saved, versioned)", t, "us/op"))
    for name, make in (("HIPS autograd", chain_autograd), ("PyTorch CPU", chain_torch)):
        run = make()
        if run is None:
            rows.append(("", f"{name} (not installed)", None, ""))
        else:
            peer = best_time(run) / n_ops * 1e6
            rows.append(("", f"{name}  (tapeviz / peer = {ours / peer:.1f}x)", peer, "us/op"))
    return rows


# the chain: mul, add, tanh, exp repeating, 100 ops (+1 sum) on 16 float64
MIXED = 25


def mixed_runs(size=16):
    """{system: fwd+bwd of the mixed chain} for every system importable here."""
    x0 = np.linspace(-1, 1, size)
    xt = core.tensor(x0)

    def tapeviz_run():
        with core.Tape() as tape:
            tape.watch(xt)
            y = xt
            for _ in range(MIXED):
                y = core.exp(core.tanh(y * 0.5 + 0.1))
            s = core.sum(y)
        return tape.gradient(s, xt)

    def numpy_run():  # forward keeping what backward reads, then backward, by hand
        y, kept = x0, []
        for _ in range(MIXED):
            t = np.tanh(y * 0.5 + 0.1)
            y = np.exp(t)
            kept.append((t, y))
        g = np.ones_like(y)
        for t, e in reversed(kept):
            g = (g * e) * (1 - t * t) * 0.5
        return g

    runs = {"tapeviz": tapeviz_run, "numpy by hand": numpy_run}
    try:
        import autograd
        import autograd.numpy as anp

        def f(x):
            for _ in range(MIXED):
                x = anp.exp(anp.tanh(x * 0.5 + 0.1))
            return anp.sum(x)

        g = autograd.grad(f)
        runs["HIPS autograd"] = lambda: g(x0)
    except ImportError:
        pass
    try:
        import torch

        xp = torch.tensor(x0, requires_grad=True)

        def torch_run():
            y = xp
            for _ in range(MIXED):
                y = torch.exp(torch.tanh(y * 0.5 + 0.1))
            return torch.autograd.grad(y.sum(), xp)[0]

        runs["PyTorch CPU eager"] = torch_run
    except ImportError:
        pass
    return runs


def mixed_rows():
    n_ops = 4 * MIXED + 1
    runs = mixed_runs()
    times = {k: best_time(fn) / n_ops * 1e6 for k, fn in runs.items()}
    ours = times["tapeviz"]
    rows = []
    for k, t in times.items():
        what = k if k == "tapeviz" else f"{k}  (tapeviz / it = {ours / t:.2f}x)"
        rows.append(("per-op, mul-add-tanh-exp chain, 16 float64" if not rows else "", what, t,
                     "us/op"))  # fmt: skip
    return rows


# --- 2. throughput on 4M float32 ----------------------------------------------------------
# (op, forward, derivative from (x, y)); the chain alternates unary math and scalar ops
BIG_OPS = [
    ("tanh", core.tanh, np.tanh, lambda x, y: 1 - y * y),
    ("mul", lambda t: t * 1.5, lambda a: a * np.float32(1.5), None),
    ("sin", core.sin, np.sin, lambda x, y: np.cos(x)),
    ("add", lambda t: t + 0.25, lambda a: a + np.float32(0.25), None),
    ("sigmoid", core.sigmoid, lambda a: 1 / (1 + np.exp(-a)), lambda x, y: y * (1 - y)),
    ("mul", lambda t: t * 0.5, lambda a: a * np.float32(0.5), None),
    ("cos", core.cos, np.cos, lambda x, y: -np.sin(x)),
    ("add", lambda t: t + 0.1, lambda a: a + np.float32(0.1), None),
    ("tanh", core.tanh, np.tanh, lambda x, y: 1 - y * y),
    ("exp", core.exp, np.exp, lambda x, y: y),
]
SCALE = {1: np.float32(1.5), 5: np.float32(0.5)}


def big_core(x):
    def run():
        with core.Tape() as tape:
            tape.watch(x)
            y = x
            for _, op, _, _ in BIG_OPS:
                y = op(y)
            s = core.sum(y)
        return tape.gradient(s, x)

    return run


def big_numpy(x):
    """The same chain by hand: forward keeps what backward needs, backward applies dy."""

    def run():
        xs, y = [], x
        for _, _, fwd, _ in BIG_OPS:
            xs.append(y)
            y = fwd(y)
            xs.append(y)
        g = np.ones_like(y)
        for i in reversed(range(len(BIG_OPS))):
            deriv = BIG_OPS[i][3]
            if deriv is not None:
                g = g * deriv(xs[2 * i], xs[2 * i + 1])
            elif i in SCALE:
                g = g * SCALE[i]
        return g

    return run


def throughput_rows():
    n = 1 << 20 if QUICK else 1 << 22
    data = np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32)
    x = core.tensor(data)
    ref = big_numpy(data)()
    np.testing.assert_allclose(big_core(x)().numpy(), ref, rtol=2e-4, atol=1e-6)
    ours = best_time(big_core(x), repeat=5, number=2)
    hand = best_time(big_numpy(data), repeat=5, number=2)
    label = f"10-op chain, {n >> 20}M float32, fwd+bwd"
    return [
        (label, "tapeviz", ours * 1e3, "ms"),
        ("", f"numpy by hand  (tapeviz / numpy = {ours / hand:.2f}x)", hand * 1e3, "ms"),
    ]


# --- 3. memory ----------------------------------------------------------------------------
UNARY_SAVING_ONE = [core.tanh, core.sin, core.exp, core.sigmoid]
# what each derivative reads: tanh/exp/sigmoid their output, sin its input, x*c only c
NEEDS = {"Tanh": "out", "Exp": "out", "Sigmoid": "out", "Sin": "in", "Mul": "b"}


def saved_bytes_rows():
    x = core.tensor(np.random.default_rng(1).uniform(-0.5, 0.5, 1024))  # float64
    with core.Tape() as tape:
        tape.watch(x)
        y = x
        for i in range(1000):
            y = UNARY_SAVING_ONE[i % 4](y)
            y = y * 0.5 if i % 2 else y
    needed = {}
    for n in tape.nodes:
        kind = NEEDS[n.kernel]
        t = n.outputs[0] if kind == "out" else n.inputs["x" if kind == "in" else "b"]
        needed[t.id] = t.nbytes
    ops, need = len(tape.nodes), sum(needed.values())
    label = "saved for backward, 1,500-op chain, 1,024 float64"
    return operand_rows() + [
        (
            label,
            f"tapeviz (saves {tape.saved_nbytes / need:.3f}x the minimum)",
            tape.saved_nbytes / ops,
            "B/op",
        ),  # fmt: skip
        ("", "minimum the derivative formulas read", need / ops, "B/op"),
    ]


def operand_rows():
    """Bytes a tape holds for a 1,000-op chain ``y = tanh(y) * w`` (1,024 float64) with
    ``w`` a numpy array the user owns: saved bytes, and all memory the tape keeps alive
    (tracemalloc; an owning copy of a saved numpy operand shows here)."""
    rng = np.random.default_rng(2)
    x, w = core.tensor(rng.uniform(-0.5, 0.5, 1024)), rng.uniform(0.5, 1.0, 1024)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    with core.Tape() as tape:
        tape.watch(x)
        y = x
        for _ in range(500):
            y = core.tanh(y) * w
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    ops = len(tape.nodes)
    label = "numpy operand chain, 1,000 ops, 1,024 float64"
    return [
        (label, "tapeviz saved_nbytes", tape.saved_nbytes / ops, "B/op"),
        ("", "tapeviz memory held by the tape (tracemalloc)", held / ops, "B/op"),
    ]


def metadata_rows():
    x = core.tensor(np.ones(4, np.float32))
    n_ops = 2000

    def build(record):
        keep = []
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        if record:
            tape = core.Tape()
            tape.__enter__()
        y = x
        for _ in range(n_ops // 2):
            y = core.tanh(y) * 0.9
            keep.append(y)
        if record:
            tape.__exit__(None, None, None)
            keep.append(tape)
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        return used

    with_tape, without = build(True), build(False)
    per_node = (with_tape - without) / n_ops
    return [("tape metadata per node (tracemalloc)", "tapeviz", per_node, "B/node")]


def main():
    rows = per_op_rows() + mixed_rows() + throughput_rows() + saved_bytes_rows() + metadata_rows()
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'benchmark':<{width}}{'system':<48}{'value':>10}  unit")
    print("-" * (width + 66))
    for bench, system, value, unit in rows:
        shown = "-" if value is None else f"{value:10.2f}"
        print(f"{bench:<{width}}{system:<48}{shown:>10}  {unit}")


if __name__ == "__main__":
    main()
