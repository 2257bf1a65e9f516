"""Time tapeviz.graph on 1,000-op tapes: extract, DOT, SVG with the system dot and with wasm.

Run: .venv/bin/python bench/bench_graph.py [--full]
``--full`` also times the uncollapsed drawing (every op and tensor: slow by design).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import tapeviz as tv
from tapeviz.graph import available_engines, extract, render_svg, to_dot


def scoped_tape(blocks: int = 50, ops_per_block: int = 20):
    """An MLP-ish tape: ``blocks`` name scopes of ``ops_per_block`` ops, then backward."""
    rng = np.random.default_rng(0)
    x = tv.tensor(rng.normal(size=(4, 8)).astype(np.float32), name="x")
    ws = [
        tv.variable(rng.normal(size=(8, 8)).astype(np.float32) * 0.3, name=f"w{i}")
        for i in range(blocks)
    ]
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for i, w in enumerate(ws):
            with tv.name_scope(f"block{i}"):
                for _ in range(ops_per_block // 4):
                    h = tv.tanh(h @ w) * 0.5 + h
        loss = tv.sum(h * h)
    tape.gradient(loss, [x] + ws)
    return tape


def chain_tape(n: int = 1000):
    x = tv.tensor([0.5, -0.25, 1.0], name="x")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for i in range(n - 1):
            h = tv.sin(h) if i % 2 else h * 1.01
        y = tv.sum(h)
    tape.gradient(y, x)
    return tape


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench(name: str, tape, full: bool) -> None:
    data = extract(tape)
    print(f"{name}: {data.meta['n_ops']} ops, {data.meta['n_backward_ops']} backward ops")
    print(f"  extract            {best_of(lambda: extract(tape)) * 1e3:8.1f} ms")
    print(f"  to_dot (collapsed) {best_of(lambda: to_dot(data)) * 1e3:8.1f} ms")
    engines = available_engines()
    if "wasm" in engines:
        render_svg("digraph { a -> b }", engine="wasm")  # compile the module once
    for engine in engines:
        for mode in ("forward", "backward"):
            t = best_of(lambda: render_svg(data, engine=engine, mode=mode))
            print(f"  svg {mode:8s} collapsed, {engine:6s} {t * 1e3:8.1f} ms")
    if full:
        for engine in engines:
            try:
                t = best_of(lambda: render_svg(data, engine=engine, collapse=False), repeat=1)
                print(f"  svg forward  FULL, {engine:6s}      {t * 1e3:8.1f} ms")
            except RuntimeError as e:
                print(f"  svg forward  FULL, {engine:6s}      failed: {str(e)[:90]}")


if __name__ == "__main__":
    full = "--full" in sys.argv
    bench("scoped (50 blocks)", scoped_tape(), full)
    bench("chain (no scopes)", chain_tape(), full)
