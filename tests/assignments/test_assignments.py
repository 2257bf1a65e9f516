"""The assignments grade end to end through Otter-Grader, as an instructor runs it.

For each assignment: ``otter assign`` builds the student notebook and the autograder from
``assignments/source/`` (once per session, into a temporary folder); then three submissions
go through ``assignments/grade.py`` (what ``make grade NB=…`` runs): the untouched student
notebook (less than full marks; run in Otter's debug mode, so a cell that raises fails it),
the instructor's solution (full marks) and a wrong one (less, and the report names each
mistake's pattern). One of them goes through ``make grade`` itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "assignments"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade  # noqa: E402
from submissions import WRONG  # noqa: E402

SCORE = re.compile(r"^score: ([\d.]+)/([\d.]+)$")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    started = time.perf_counter()
    for name in grade.NAMES:
        grade.autograder(name, out)
    print(f"otter assign, {len(grade.NAMES)} assignments: {time.perf_counter() - started:.1f} s")
    return out


def _submit(source: Path, folder: Path, name: str, edits=()) -> Path:
    """A copy of ``source`` named as the assignment (its init cell opens that name)."""
    nb = nbformat.read(source, as_version=4)
    for old, new, _ in edits:
        hits = [c for c in nb.cells if c.cell_type == "code" and old in c.source]
        assert len(hits) == 1, f"{name}: the wrong edit {old[:40]!r} matches {len(hits)} cells"
        hits[0].source = hits[0].source.replace(old, new)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _grade(path: Path, dist: Path, *extra: str, make: bool = False) -> tuple[float, float, str]:
    """Grade through ``assignments/grade.py`` (in this process: Otter is imported once), or
    through ``make grade``; returns the score, the possible score and the printed report."""
    started = time.perf_counter()
    if make:
        cmd = ["make", "-s", "--no-print-directory", "grade", f"NB={path}",
               f"GRADE_ARGS=--dist {dist}"]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert done.returncode == 0, f"make grade {path} failed:\n{done.stdout}\n{done.stderr}"
        out = done.stdout
    else:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert grade.main([str(path), "--dist", str(dist), *extra]) == 0
        out = buffer.getvalue()
    print(f"graded {path.parent.name}/{path.name} in {time.perf_counter() - started:.1f} s")
    last = out.strip().splitlines()[-1]
    match = SCORE.match(last)
    assert match, f"the last line is not 'score: X/Y': {last!r}"
    return float(match[1]), float(match[2]), out


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", grade.NAMES)
def test_untouched_right_and_wrong_submissions(name, dist, tmp_path):
    built = dist / name
    untouched = _submit(built / "student" / f"{name}.ipynb", tmp_path / "untouched", name)
    score, possible, _ = _grade(untouched, dist, "--debug")  # debug: a raising cell fails
    assert possible > 0 and score < possible, f"{name}: untouched got {score}/{possible}"

    right = _submit(built / "autograder" / f"{name}.ipynb", tmp_path / "right", name)
    score, full, _ = _grade(right, dist, make=name == grade.NAMES[0])
    assert score == full == possible, f"{name}: the solution got {score}/{full}"
    results = json.loads((tmp_path / "right" / f"{name}-graded" / "results.json").read_text())
    graded = [t for t in results["tests"] if "max_score" in t]  # Otter's (Gradescope's) format
    assert graded and all(t["score"] == t["max_score"] for t in graded)

    wrong = _submit(built / "autograder" / f"{name}.ipynb", tmp_path / "wrong", name, WRONG[name])
    score, possible, report = _grade(wrong, dist)
    assert score < possible, f"{name}: the wrong submission got full marks"
    for _, _, phrase in WRONG[name]:
        assert phrase in report, f"{name}: the report does not name {phrase!r}:\n{report}"


def test_student_notebooks_are_built_and_hold_no_solution(dist):
    """``assignments/student/`` is what ``make assignments`` writes from the sources; it holds
    no solution and no hidden test."""
    for name in grade.NAMES:
        committed = nbformat.read(ROOT / "assignments" / "student" / f"{name}.ipynb", 4)
        fresh = nbformat.read(dist / name / "student" / f"{name}.ipynb", 4)
        assert [c.source for c in committed.cells] == [c.source for c in fresh.cells], (
            f"assignments/student/{name}.ipynb is stale: run `make assignments`"
        )
        text = json.dumps(committed)
        assert "BEGIN SOLUTION" not in text and "hidden=True" not in text, name
        public = set(re.findall(r"def (test_\w+)", json.dumps(committed.metadata)))
        everything = set(grade_tests(dist, name))
        assert public and public < everything, f"{name}: expected public and hidden tests"
        for hidden in everything - public:
            assert hidden not in text, f"{name}: the hidden test {hidden} is in the student copy"


def grade_tests(dist: Path, name: str) -> list[str]:
    """Every test function in the autograder zip (public and hidden)."""
    import zipfile

    (zip_path,) = (dist / name / "autograder").glob("*.zip")
    with zipfile.ZipFile(zip_path) as z:
        text = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("tests/"))
    return re.findall(r"def (test_\w+)", text)
