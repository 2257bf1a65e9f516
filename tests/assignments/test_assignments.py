"""The assignments grade end to end as an instructor runs it, and tampering gains nothing.

``otter assign`` builds the student notebooks from ``assignments/source/`` (once per
session, into a temporary folder); submissions go through ``assignments/grade.py`` (what
``make grade NB=…`` runs), which runs each notebook in a process of its own and its hidden
tests (``assignments/hidden/``) in the grader's: the untouched student notebook gets less
than full marks, the solution full marks, a wrong one less with each mistake named, and
each tampered notebook (``tampering.PLANTS``) no more than the notebook it was added to.
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
import sandbox  # noqa: E402
from submissions import WRONG  # noqa: E402
from tampering import PLANTS  # noqa: E402

SCORE = re.compile(r"^score: ([\d.]+)/([\d.]+)$")
pytestmark = pytest.mark.slow
FULL = {"a_op_gradients": 16, "b_value": 15, "c_training_loop": 9, "d_layers": 26}


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    started = time.perf_counter()
    for name in grade.NAMES:
        grade.build(name, out)
    print(f"otter assign, {len(grade.NAMES)} assignments: {time.perf_counter() - started:.1f} s")
    return out


def _submit(source: Path, folder: Path, name: str, edits=(), added=()) -> Path:
    """A copy of ``source`` named as the assignment, with text edits and cells added."""
    nb = nbformat.read(source, as_version=4)
    for old, new, _ in edits:
        hits = [c for c in nb.cells if c.cell_type == "code" and old in c.source]
        assert len(hits) == 1, f"{name}: the wrong edit {old[:40]!r} matches {len(hits)} cells"
        hits[0].source = hits[0].source.replace(old, new)
    nb.cells += [nbformat.v4.new_code_cell(code) for code in added]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _grade(path: Path, *extra: str, make: bool = False) -> tuple[float, float, str]:
    """Grade through ``assignments/grade.py`` or ``make grade``: (score, possible, report)."""
    started = time.perf_counter()
    if make:  # this Python's venv, never rebuilt (-o: its stamp counts as up to date)
        stamp = Path(sys.prefix) / ".installed"
        cmd = ["make", "-s", "--no-print-directory", "-o", str(stamp), "grade", f"NB={path}",
               f"VENV={sys.prefix}"]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert done.returncode == 0, f"make grade {path} failed:\n{done.stdout}\n{done.stderr}"
        out = done.stdout
    else:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert grade.main([str(path), *extra]) == 0
        out = buffer.getvalue()
    print(f"graded {path.parent.name}/{path.name} in {time.perf_counter() - started:.1f} s")
    lines = out.strip().splitlines()
    match = SCORE.match(lines[-1])
    assert match, f"the last line is not 'score: X/Y': {lines[-1]!r}"
    assert sum(line.startswith("score") for line in lines) == 1, f"two score lines:\n{out}"
    return float(match[1]), float(match[2]), out


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", grade.NAMES)
def test_untouched_right_and_wrong_submissions(name, dist, tmp_path):
    built = dist / name
    untouched = _submit(built / "student" / f"{name}.ipynb", tmp_path / "untouched", name)
    score, possible, report = _grade(untouched, "--seed", "1")
    assert possible == FULL[name] and score < possible, f"{name}: untouched got {score}"
    assert "notebook: cell" not in report, f"{name}: the untouched notebook raised:\n{report}"

    right = _submit(built / "autograder" / f"{name}.ipynb", tmp_path / "right", name)
    make = name == grade.NAMES[0] and (Path(sys.prefix) / ".installed").exists()
    score, full, _ = _grade(right, make=make)  # a fresh random seed
    assert score == full == possible, f"{name}: the solution got {score}/{full}"
    results = json.loads((tmp_path / "right" / f"{name}-graded" / "results.json").read_text())
    assert results["score"] == full and all(t["score"] == t["max_score"] for t in results["tests"])

    wrong = _submit(built / "autograder" / f"{name}.ipynb", tmp_path / "wrong", name, WRONG[name])
    score, possible, report = _grade(wrong, "--seed", "2")
    assert score < possible, f"{name}: the wrong submission got full marks"
    for _, _, phrase in WRONG[name]:
        assert phrase in report, f"{name}: the report does not name {phrase!r}:\n{report}"


def _solution_cells(dist: Path, name: str) -> str:
    nb = nbformat.read(dist / name / "autograder" / f"{name}.ipynb", 4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code" and "_grad" in c.source)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("plant", PLANTS, ids=[p[0] for p in PLANTS])
def test_tampering_gains_nothing(plant, dist, tmp_path):
    """Each planted trick, added to assignment A's untouched notebook or its solution,
    scores no more than it may (``tampering.PLANTS``); none writes a file the grader has."""
    name, base, code, cap = plant
    isolated = sandbox.can_isolate()
    if name in ("read_secrets", "write_files") and not isolated:
        pytest.skip("not root: the submission runs as this user and can read/write its files")
    a = "a_op_gradients"
    solution = "\n".join("    " + line for line in _solution_cells(dist, a).splitlines())
    code = code.replace("{ROOT}", str(ROOT)).replace("{SOLUTION_A}", solution)
    folder = "student" if base == "blank" else "autograder"
    edits = WRONG[a] if base == "wrong" else ()
    grader_files = {p: p.read_bytes() for p in (ROOT / "assignments").rglob("*.py")}
    path = _submit(dist / a / folder / f"{a}.ipynb", tmp_path / name, a, edits, [code])
    extra = ["--seed", "3", "--call-timeout", "10", "--run-timeout", "45"]
    score, possible, report = _grade(path, *extra)
    limit = {"blank": 0, "right": possible}.get(base) if cap == "base" else cap
    if limit is None:  # the base's own score, untampered, on the same hidden inputs
        untampered = _submit(dist / a / folder / f"{a}.ipynb", tmp_path / "base", a, edits)
        limit = _grade(untampered, *extra)[0]
    assert score <= limit, f"{name}: {score}/{possible} (at most {limit}):\n{report}"
    if name == "hang_in_call":
        assert score == limit, f"the questions that do not hang keep their points:\n{report}"
    assert {p: p.read_bytes() for p in (ROOT / "assignments").rglob("*.py")} == grader_files
    assert not list((ROOT / "assignments").rglob("planted_*")), f"{name} wrote a file"


def test_the_channel_carries_only_data():
    """What comes back from a submission is numbers, strings, lists, dicts and plain arrays;
    a pickle, an unknown array kind or a bad shape is refused."""
    import base64
    import pickle

    import driver
    import numpy as np

    x = np.arange(6.0).reshape(2, 3)
    back = driver.decode(json.loads(json.dumps(driver.encode({"a": [x, np.array(2.5), 3]}))))
    assert type(back["a"][0]) is np.ndarray and back["a"][0].shape == (2, 3)
    assert back["a"][1].shape == () and back["a"][2] == 3
    raw = base64.b64encode(b"\0" * 8).decode()
    for bad in ({"__nd__": ["O", [1], raw]}, {"__nd__": ["f8", [2], raw]},
                {"__nd__": ["f8", [-1], raw]}):  # fmt: skip
        with pytest.raises(driver.ChannelError):
            driver.decode(bad)
    r, w = __import__("os").pipe()
    body = pickle.dumps(print)
    __import__("os").write(w, driver.HEADER.pack(len(body)) + body)
    with pytest.raises(driver.ChannelError):
        driver.receive(r, deadline=time.monotonic() + 5)
    with pytest.raises(TypeError):
        driver.encode(object())


def test_student_notebooks_are_built_and_hold_no_solution(dist):
    """``assignments/student/`` is what ``make assignments`` writes from the sources; it holds
    no solution and no hidden test, and no source holds one either."""
    for name in grade.NAMES:
        committed = nbformat.read(ROOT / "assignments" / "student" / f"{name}.ipynb", 4)
        fresh = nbformat.read(dist / name / "student" / f"{name}.ipynb", 4)
        assert [c.source for c in committed.cells] == [c.source for c in fresh.cells], (
            f"assignments/student/{name}.ipynb is stale: run `make assignments`"
        )
        text = json.dumps(committed)
        assert "BEGIN SOLUTION" not in text and "hidden: true" not in text, name
        source = (ROOT / "assignments" / "source" / name / f"{name}.ipynb").read_text()
        assert "hidden: true" not in source, f"{name}: a hidden test left in the Otter source"
        hidden = grade.checks.load(name)
        assert sum(hidden.questions.values()) == FULL[name]
        for _, _, fn in hidden.tests:
            assert f"def {fn.__name__}(" not in text, f"{name}: the hidden test {fn.__name__}"


@pytest.mark.timeout(600)
def test_grading_without_isolation(dist, tmp_path):
    """Not as root (or with --no-isolation) the submission runs as this user: grading still
    separates the processes and says the files were reachable."""
    a = "a_op_gradients"
    right = _submit(dist / a / "autograder" / f"{a}.ipynb", tmp_path / "right", a)
    score, possible, report = _grade(right, "--no-isolation", "--seed", "4")
    assert score == possible and "able to read and write its files" in report
    plant = next(p for p in PLANTS if p[0] == "monkeypatch")[2].replace("{ROOT}", str(ROOT))
    blank = _submit(dist / a / "student" / f"{a}.ipynb", tmp_path / "blank", a, added=[plant])
    assert _grade(blank, "--no-isolation", "--seed", "4")[0] == 0
