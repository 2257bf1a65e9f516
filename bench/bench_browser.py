"""What a person sees in JupyterLab (headless Chromium): label sizes, latency, first view.

Run: ``.venv/bin/python bench/bench_browser.py [--run]``

The figures come from ``tests/notebooks/test_browser_graph.py`` (it writes
``test-artifacts/browser/figures.json``); ``--run`` runs that test first (about two minutes;
needs Chromium and JupyterLab). Latency is input event -> changed DOM ("dom") and -> the next
animation frame ("frame"), p50/p95, measured in the page with a MutationObserver; it
includes the kernel round trip where a control needs one. Figures from a shared machine are
upper bounds: compare them side by side within one run, not across machines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "test-artifacts" / "browser" / "figures.json"
TEST = "tests/notebooks/test_browser_graph.py"


def run_test() -> int:
    cmd = [sys.executable, "-m", "pytest", TEST, "-m", "browser", "-q", "-x"]
    return subprocess.call(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def report(figures: dict) -> None:
    print("label text on screen, smallest, CSS px (bounds: first view >= 11, after fit >= 9)")
    for name, sizes in figures["label_px"].items():
        fit = f"{sizes['fit']:6.1f}" if "fit" in sizes else "     -"
        print(f"  {name:<36} first view {sizes['first_view']:6.1f}   fit {fit}")
    print("\ninput -> changed view, ms (bound: 50 ms p95)")
    print(f"  {'control':<58}{'dom p50':>9}{'dom p95':>9}{'frame p50':>11}{'frame p95':>11}")
    for name, v in figures["latency_ms"].items():
        if isinstance(v, dict):
            print(
                f"  {name:<58}{v['dom p50']:9.1f}{v['dom p95']:9.1f}"
                f"{v['frame p50']:11.1f}{v['frame p95']:11.1f}"
            )
        else:
            print(f"  {name:<58}{v}")
    print("\nfirst view")
    for name, seconds in figures["first_view_s"].items():
        print(f"  {name:<58}{seconds:6.2f} s")


def main(argv: list[str]) -> int:
    if "--run" in argv and run_test() != 0:
        print("the browser test failed; figures below may be stale or missing")
    if not FIGURES.exists():
        print(f"no figures at {FIGURES}: run with --run (needs Chromium and JupyterLab)")
        return 0
    report(json.loads(FIGURES.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
