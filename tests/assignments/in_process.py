"""Run an assignment's tests in this process, fast: the code cells of a notebook (the
instructor's solution, maybe with a slip planted) into a namespace, then the public tests
(the ones a student's ``grader.check`` runs, from the student notebook's metadata) or the
grader's hidden tests (``assignments/hidden/<name>.py``, through ``checks.run_tests``, with
the probes run here and every argument and answer passed through the channel's encoding).
For the suite's slip tests only: the isolation is ``assignments/grade.py``'s, tested in
``test_assignments.py``."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import matplotlib
import nbformat

matplotlib.use("Agg")


def namespace(notebook: Path, edits=()) -> dict:
    """Execute the notebook's code cells (not Otter's own) with ``edits`` = [(old, new), …]
    applied, each to exactly one cell; returns the globals. A cell that raises is passed
    over, as Otter does outside its debug mode."""
    import matplotlib.pyplot as plt

    nb = nbformat.read(notebook, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    for old, new in edits:
        hits = [i for i, s in enumerate(cells) if old in s]
        assert len(hits) == 1, f"the edit {old[:50]!r} matches {len(hits)} cells"
        cells[hits[0]] = cells[hits[0]].replace(old, new)
    ns: dict = {"__name__": "__main__"}
    show, plt.show = plt.show, lambda *a, **k: None
    try:
        for source in cells:
            if "otter" in source or "grader." in source:
                continue
            try:  # as Otter grades: a cell that raises does not stop the others
                exec(compile(source, str(notebook), "exec"), ns)
            except Exception:
                pass
    finally:
        plt.show = show
        plt.close("all")
    return ns


def _load(sources: dict) -> dict:
    """{question: [(test function, points, hidden)]} from Otter's test files' text."""
    out = {}
    for q, text in sources.items():
        found = []

        def test_case(points=None, hidden=False, **_):
            def keep(fn):
                found.append((fn, points, hidden))
                return fn

            return keep

        text = re.sub(r"^from otter\.test_files import test_case$", "", text, flags=re.M)
        exec(compile(text, f"<tests {q}>", "exec"), {"test_case": test_case})
        out[q] = found
    return out


def public_tests(student_notebook: Path) -> dict:
    """The public tests a student's ``grader.check`` runs (from the notebook's metadata)."""
    nb = nbformat.read(student_notebook, as_version=4)
    return _load(nb.metadata["otter"]["tests"])


def run(tests: dict, ns: dict, hidden=None) -> dict:
    """{question: [(passed, points, message)]} for the tests (only hidden or public ones
    when ``hidden`` is True or False)."""
    out = {}
    for q, cases in tests.items():
        rows = []
        for fn, points, is_hidden in cases:
            if hidden is not None and is_hidden != hidden:
                continue
            args = [ns.get(p) for p in inspect.signature(fn).parameters]
            try:
                fn(*args)
                rows.append((True, points, ""))
            except Exception as e:  # an AssertionError is the check's message
                rows.append((False, points, f"{type(e).__name__}: {e}"))
        out[q] = rows
    return out


def score(results: dict) -> dict:
    """{question: (points got, points possible)} of public ``run`` results."""
    return {q: (sum(p for ok, p, _ in rows if ok), sum(p for _, p, _ in rows))
            for q, rows in results.items()}  # fmt: skip


class InProcess:
    """``sub`` for ``checks.run_tests``: the probes run on ``ns`` in this process; arguments
    and answers go through ``driver.encode``/``decode`` and JSON as on the channel, and an
    exception in a probe is a ``SubmissionError`` as the sandbox raises it."""

    def __init__(self, probes: str, ns: dict):
        self.ns, self.probes = ns, {"__name__": "probes"}
        exec(compile(probes, "<probes>", "exec"), self.probes)

    def call(self, probe: str, **args):
        import driver
        import sandbox

        args = driver.decode(json.loads(json.dumps(driver.encode(args))))
        try:
            got = self.probes[probe](self.ns, **args)
            return driver.decode(json.loads(json.dumps(driver.encode(got))))
        except Exception as e:
            raise sandbox.SubmissionError(f"raised {driver.describe_error(e)}") from None


def hidden_scores(name: str, ns: dict, seed: int = 0) -> tuple[dict, list]:
    """({question: (points got, points possible)}, rows) of the grader's hidden tests of
    ``name`` against the namespace ``ns``, inputs from ``seed``."""
    import checks
    import numpy as np

    assignment = checks.load(name)
    rows = checks.run_tests(assignment, InProcess(assignment.probes, ns),
                            np.random.default_rng(seed))  # fmt: skip
    scores = {q: (sum(r["score"] for r in rows if r["question"] == q), float(p))
              for q, p in assignment.questions.items()}  # fmt: skip
    return scores, rows
