"""Run every ``bench/bench_*.py`` script in turn and report how each one ended.

Run: ``.venv/bin/python bench/run_all.py [--quick]`` (extra arguments go to every script).
Each script runs in its own interpreter, so one failing benchmark does not stop the rest;
the exit status is non-zero when any of them failed.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    results = []
    for script in scripts:
        print(f"=== {script.name} ===", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script), *argv], cwd=HERE.parent)
        results.append((script.name, code, time.perf_counter() - start))
        print(flush=True)
    print("=== summary ===")
    for name, code, seconds in results:
        status = "ok" if code == 0 else f"FAILED (exit {code})"
        print(f"{name:<32}{status:<20}{seconds:8.1f} s")
    return 0 if all(code == 0 for _, code, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
