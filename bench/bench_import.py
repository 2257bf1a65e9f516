"""Benchmark: how long ``import tapeviz`` takes, against ``import numpy`` alone.

Run: .venv/bin/python bench/bench_import.py [--quick]

Each figure is the best of several fresh interpreters' ``python -X importtime`` totals (the
machine is shared, so the best run is the one least disturbed). Target (issue 27):
``import tapeviz`` <= 150 ms with every extra installed; numba, scipy, matplotlib, the widget
stack and wasmtime load on first use, not at import (tests/test_import_laziness.py checks
that part without a clock).

Bytecode: an installed package imports from its ``__pycache__``. Where
``PYTHONDONTWRITEBYTECODE`` is set (some containers) every import compiles each module from
source again, which takes longer than the import itself (~380 ms for tapeviz here); the
benchmark unsets it and imports once first, so it measures what a user's import costs.
Measured on the 2-core development machine: 381 ms before issue 27 (numba and scipy at
import), 80 ms after, numpy alone 48 ms.
"""

from __future__ import annotations

import os
import subprocess
import sys

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
HEAVY = ("numba", "llvmlite", "scipy", "matplotlib", "ipywidgets", "anywidget", "wasmtime")


def import_ms(module: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, check=True, env=ENV,
        )  # fmt: skip
        last = [line for line in out.stderr.splitlines() if line.rstrip().endswith(f"| {module}")]
        best = min(best, int(last[-1].split("|")[1]) / 1000)
    return best


def loaded_heavy() -> list[str]:
    code = "import tapeviz, sys; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.split() if m in HEAVY]


def main(argv: list[str]) -> int:
    repeats = 3 if "--quick" in argv else 9
    subprocess.run([sys.executable, "-c", "import tapeviz"], check=True, env=ENV)  # caches
    numpy_ms, tapeviz_ms = import_ms("numpy", repeats), import_ms("tapeviz", repeats)
    print(f"import numpy    {numpy_ms:7.1f} ms (best of {repeats})")
    print(f"import tapeviz  {tapeviz_ms:7.1f} ms (numpy included; target <= 150 ms)")
    print(f"heavy modules loaded by import tapeviz: {loaded_heavy() or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
