"""Assignment C's central demonstration holds at the notebook's own setting: the correct
loop (the instructor's solution) converges — its loss never rises — while the loop whose
accumulator is never reset ends far above it, its steps growing and its loss swinging."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import nbformat
import numpy as np
import pytest

matplotlib.use("Agg")
SOURCE = Path(__file__).resolve().parents[2] / "assignments/source/c_training_loop"
CALL = re.compile(r"steps=(\d+), lr=([\d.]+), k=(\d+)")
pytestmark = pytest.mark.slow


def _notebook():
    """The source notebook's code (solutions included, tests left out) and the setting of
    its two demonstration calls (the bug's and the student's loop)."""
    nb = nbformat.read(SOURCE / "c_training_loop.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code" and "TEST CONFIG" not in c.source]
    setup = [
        s for s in code if "def moons" in s or s.startswith(("def average_gradient", "def train("))
    ]
    bug = next(s for s in code if "def train_with_the_bug" in s)
    yours = next(s for s in code if "losses = train(params, X, y" in s)
    settings = {CALL.search(s).groups() for s in (bug, yours)}
    assert len(settings) == 1, (
        f"the bug and the student's loop run at different settings: {settings}"
    )
    steps, lr, k = settings.pop()
    return [*setup, bug.split("bug_losses, bug_steps =")[0]], int(steps), float(lr), int(k)


@pytest.mark.timeout(600)
def test_the_correct_loop_converges_and_the_bug_ends_worse():
    cells, steps, lr, k = _notebook()
    ns = {}
    for source in cells:
        exec(source.replace("plt.show()", "plt.close('all')"), ns)
    X, y, init = ns["X"], ns["y"], ns["init"]
    right = np.array(ns["train"](init(), X, y, steps=steps, lr=lr, k=k))
    bug, bug_steps = map(np.array, ns["train_with_the_bug"](init(), X, y, steps, lr, k))
    print(f"steps={steps} lr={lr} k={k}: correct {right[0]:.3f} -> {right[-1]:.3f}; "
          f"bug min {bug.min():.3f}, last {bug[-1]:.3f}, last tenth max {bug[-steps // 10:].max():.3f}; "
          f"bug step size {bug_steps[0]:.3f} -> {bug_steps[-1]:.3f}")  # fmt: skip
    assert np.all(np.diff(right) <= 1e-9), "the correct loop's loss rises: it does not converge"
    assert right[-1] < right[0] / 2, "the correct loop barely trains"
    assert bug[-1] > 1.3 * right[-1], "the bug does not end visibly worse than the correct loop"
    assert bug[-steps // 10 :].max() > 2 * right[-1], "the bug's loss does not swing up late"
    assert bug_steps[-1] > 5 * bug_steps[0], "the bug's steps do not keep growing"
