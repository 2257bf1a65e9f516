"""How fast the widgets respond: the time from a slider change or a click to the new picture.

Run: .venv/bin/python bench/bench_widgets.py

Each figure is the median of several updates, in wall-clock and CPU milliseconds (CPU time
is the fairer figure on a shared machine). "Fast enough to drag" means well under ~300 ms
per update: a browser sends slider changes about that often when throttled, and the widget
swaps a PNG in place (no flicker) each time.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapeviz as tv  # noqa: E402


def measure(label, actions, repeats=7):
    wall, cpu = [], []
    for i in range(repeats):
        action = actions[i % len(actions)]
        t0, c0 = time.perf_counter(), time.process_time()
        action()
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    print(f"{label:<52} wall {statistics.median(wall):7.1f} ms   cpu "
          f"{statistics.median(cpu):7.1f} ms")  # fmt: skip


def bench_gradcheck():
    w = tv.GradCheckWidget(lambda x: tv.tanh(x) * x, [0.5])
    values = np.linspace(-2, 2, 9)
    measure("GradCheckWidget 1-D: move x (4 plots)",
            [lambda v=v: setattr(w.point, "value", float(v)) for v in values])  # fmt: skip
    measure("GradCheckWidget 1-D: change eps (4 plots + curve)",
            [lambda e=e: setattr(w.eps, "value", float(e)) for e in (1e-3, 1e-5, 1e-7)])  # fmt: skip
    rng = np.random.default_rng(0)
    m = tv.GradCheckWidget(lambda a: tv.sum(tv.tanh(a) ** 2), rng.standard_normal((8, 8)))
    measure("GradCheckWidget 8x8 matrix: move offset (3 plots)",
            [lambda v=v: setattr(m.point, "value", float(v)) for v in values])  # fmt: skip


def _mlp_tape():
    rng = np.random.default_rng(0)
    x = tv.tensor(rng.standard_normal((32, 16)).astype(np.float32))
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for _ in range(3):
            h = tv.tanh(h @ tv.tensor(rng.standard_normal((16, 16)).astype(np.float32)))
        y = tv.sum(h * h)
    tape.gradient(y, x)
    return tape


def bench_memory_and_stepper():
    tape = _mlp_tape()
    t0 = time.perf_counter()
    insp = tv.MemoryInspector(tape)
    print(f"{'MemoryInspector: build (' + str(len(tape.nodes)) + ' nodes)':<52} wall "
          f"{(time.perf_counter() - t0) * 1e3:7.1f} ms")  # fmt: skip
    n = len(insp.rows)
    measure("MemoryInspector: select a row (chart, stats, graph)",
            [lambda i=i: insp.select(i % n) for i in range(1, 8)])  # fmt: skip
    measure("MemoryInspector: re-sort the table",
            [lambda k=k: setattr(insp.sort_by, "value", k) for k in ("bytes", "kernel", "node")])  # fmt: skip
    s = tv.BackpropStepper(tape)
    measure("BackpropStepper: next step (panel + graph)",
            [lambda: s.next() if s.index < s.count - 1 else s.first()])  # fmt: skip


def bench_training():
    plot = tv.TrainingPlot(total_steps=1000, min_interval=0.0)
    for step in range(1, 500):
        plot.history["step"].append(step)
        plot.history.setdefault("loss", []).append(1.0 / step)
        plot.history.setdefault("accuracy", []).append(1 - 1.0 / step)
    measure("TrainingPlot: redraw with 500 points, 2 series", [plot.draw])
    quiet = tv.TrainingPlot(min_interval=0.25)
    t0 = time.perf_counter()
    for step in range(1, 2001):
        quiet.update(step, loss=1.0 / step)
    per = (time.perf_counter() - t0) / 2000 * 1e6
    print(f"{'TrainingPlot.update, throttled (mean over 2000)':<52} wall {per:7.1f} us "
          f"({quiet.draw_count} redraws)")  # fmt: skip


if __name__ == "__main__":
    bench_gradcheck()
    bench_memory_and_stepper()
    bench_training()
