"""Instructions per op (callgrind) of the 100-op chain on 16 float64, forward + backward:
``tv.jit(tv.grad(f))`` against numpy by hand and eager tapeviz. On a shared, noisy machine
wall time swings by 2x; instruction counts do not.

Run: ``.venv/bin/python bench/callgrind_jit.py`` (needs valgrind; a few minutes). Each
system runs twice under callgrind, N and 2N calls; the difference divided by N is one call's
instructions, with start-up, imports and the trace cancelled out.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve()
N = 100
OPS = 101  # 25 x (mul, add, tanh, exp) + sum


def _system(name):
    import numpy as np

    sys.path.insert(0, str(HERE.parents[1]))
    import tapeviz.core as tv

    x0 = np.linspace(-1, 1, 16)

    def chain(y):
        for _ in range(25):
            y = tv.exp(tv.tanh(y * 0.5 + 0.1))
        return tv.sum(y)

    if name == "numpy":

        def run():
            y, kept = x0, []
            for _ in range(25):
                t = np.tanh(y * 0.5 + 0.1)
                y = np.exp(t)
                kept.append((t, y))
            g = np.ones_like(y)
            for t, e in reversed(kept):
                g = (g * e) * (1 - t * t) * 0.5
            return g

        return run
    x = tv.tensor(x0)
    fn = tv.jit(tv.grad(chain)) if name == "jit" else tv.grad(chain)
    return lambda: fn(x)


def _child(name: str, n: int) -> None:
    run = _system(name)
    for _ in range(3):
        run()  # traced / warmed before counting starts to matter
    for _ in range(n):
        run()


def _count(name: str, n: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               sys.executable, str(HERE), "--child", name, str(n)]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        text = pathlib.Path(out).read_text()
    match = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return int(match.group(1))


def main() -> None:
    per_op = {}
    for name in ("jit", "numpy", "eager"):
        per_op[name] = (_count(name, 2 * N) - _count(name, N)) / N / OPS
    print("callgrind: instructions per op, 100-op chain on 16 float64, fwd+bwd")
    for name, label in (("jit", "tapeviz jit(grad(f))"), ("numpy", "numpy by hand"),
                        ("eager", "tapeviz eager")):  # fmt: skip
        ratio = per_op["jit"] / per_op[name]
        print(f"  {label:<24}{per_op[name]:12,.0f} instructions/op   jit / it = {ratio:.2f}x")


if __name__ == "__main__":
    if "--child" in sys.argv:
        i = sys.argv.index("--child")
        _child(sys.argv[i + 1], int(sys.argv[i + 2]))
    else:
        main()
