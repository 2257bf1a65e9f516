"""Run an assignment's tests in this process, fast: the code cells of a notebook (the
instructor's solution, maybe with a slip planted) into a namespace, then the public tests
(the ones a student's ``grader.check`` runs, from the student notebook's metadata) or every
test (from the autograder zip) against it. For the suite's slip tests only; grades come
from ``assignments/grade.py``."""

from __future__ import annotations

import inspect
import re
import zipfile
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


def all_tests(zip_path: Path) -> dict:
    """Every test of the autograder zip, public and hidden."""
    with zipfile.ZipFile(zip_path) as z:
        names = [n for n in z.namelist() if n.startswith("tests/") and n.endswith(".py")]
        return _load({Path(n).stem: z.read(n).decode() for n in names})


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
    """{question: (points got, points possible)}."""
    return {q: (sum(p for ok, p, _ in rows if ok), sum(p for _, p, _ in rows))
            for q, rows in results.items()}  # fmt: skip
