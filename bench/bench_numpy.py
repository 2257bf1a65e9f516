"""numpy on tensors and linear-algebra gradients, against the plain call and HIPS autograd.

Run: ``.venv/bin/python bench/bench_numpy.py [--quick]``. Prints one table; every ratio comes
from this one run (CPU time, best of several rounds).

1. dispatch overhead: ``np.exp(x)`` / ``np.sum(x)`` on a tensor against ``tv.exp`` /
   ``tv.sum`` (the NEP 13/18 hooks' cost), 100 float64.
2. gradients of linear algebra, forward + backward, tapeviz against autograd: slogdet,
   solve, eigh (values and vectors), svd on 64 x 64 float64.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from bench_engine import best_time  # noqa: E402 - one timing helper for every bench

import tapeviz.core as tv  # noqa: E402

QUICK = "--quick" in sys.argv


def dispatch_rows():
    x = tv.tensor(np.linspace(-1, 1, 100))
    pairs = [("exp", lambda: tv.exp(x), lambda: np.exp(x)),
             ("sum", lambda: tv.sum(x, 0), lambda: np.sum(x, axis=0))]  # fmt: skip
    n = 200 if QUICK else 2000
    for name, direct, via_numpy in pairs:
        a, b = best_time(direct, number=n), best_time(via_numpy, number=n)
        print(f"np.{name}(x) vs tv.{name}(x)   {a * 1e6:8.2f} us {b * 1e6:8.2f} us   x{b / a:.2f}")


def _linalg_cases(n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)) + n * np.eye(n)
    s = a @ a.T
    b = rng.standard_normal((n, 3))
    return [("slogdet", a, lambda m, np_: np_.linalg.slogdet(m)[1]),
            ("solve", a, lambda m, np_: np_.sum(np_.linalg.solve(m, b) ** 2)),
            ("eigh", s, lambda m, np_: np_.sum(np_.linalg.eigh(m)[1][:, -1:] ** 4)),
            ("svd", a, lambda m, np_: np_.sum(np_.linalg.svd(m, full_matrices=False)[1]))]  # fmt: skip


def linalg_rows():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        print("autograd not installed: linear-algebra comparison skipped")
        return
    n = 32 if QUICK else 64
    for name, m, f in _linalg_cases(n):
        t = tv.tensor(m)
        ours = best_time(lambda: tv.grad(lambda x: f(x, np))(t), number=5 if QUICK else 20)
        theirs = best_time(lambda: autograd.grad(lambda x: f(x, anp))(m), number=5 if QUICK else 20)
        print(f"grad {name:8s} {n}x{n}: tapeviz {ours * 1e3:7.2f} ms  autograd "
              f"{theirs * 1e3:7.2f} ms   tapeviz/autograd x{ours / theirs:.2f}")  # fmt: skip


if __name__ == "__main__":
    dispatch_rows()
    linalg_rows()
