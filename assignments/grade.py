"""Grade one submitted notebook: ``make grade NB=path``. The last line is ``score: X/Y``.

The notebook's metadata names its assignment (``otter.assignment_name``). Its hidden tests
(``hidden/<name>.py``, loaded into this process only) are run here; the notebook runs in a
process of its own (``grading/sandbox.py``: an empty folder, time and size limits, and as
root no network, user nobody, the course's sources hidden), which answers one call at a
time (``grading/driver.py``): the tests choose fresh random inputs, the submission's
functions compute on them there, and the answers come back as plain numbers and are
compared here with references computed here. ``results.json`` (Gradescope's results
format) goes beside the submission.

``--build-only`` builds the student notebooks from ``source/`` with ``otter assign``
(Otter strips the solutions and keeps the public checks; its autograder zip is not used).

Usage:
    python assignments/grade.py SUBMISSION.ipynb [--out DIR] [--seed N]
    python assignments/grade.py --build-only [--students DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "grading"), str(HERE.parent)]  # this checkout's tapeviz, too
import checks  # noqa: E402
import sandbox  # noqa: E402

import tapeviz  # noqa: E402  (the grader's references; imported before any submission runs)

SOURCE, DIST = HERE / "source", HERE / "dist"
NAMES = tuple(sorted(p.stem for p in checks.HIDDEN.glob("*.py")))
LIMIT = 20 << 20  # bytes of a submitted notebook


def build(name: str, dist: Path = DIST) -> Path:
    """The student notebook of ``name`` (``otter assign``), rebuilt if older than its source."""
    source = SOURCE / name / f"{name}.ipynb"
    if not source.exists():
        raise SystemExit(f"grade: no assignment {name!r} (expected {source})")
    student = dist / name / "student" / f"{name}.ipynb"
    if student.exists() and student.stat().st_mtime >= source.stat().st_mtime:
        return student
    cmd = [sys.executable, "-m", "otter", "assign", "--no-pdfs", str(source), str(dist / name)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or not student.exists():
        raise SystemExit(f"grade: otter assign failed for {name}:\n{done.stdout}{done.stderr}")
    return student


def read_submission(notebook: Path) -> tuple[str, str, list[str]]:
    """(assignment name, the notebook's text, its code cells), or a named error."""
    if notebook.stat().st_size > LIMIT:
        raise SystemExit(f"grade: {notebook} is larger than {LIMIT >> 20} MB")
    text = notebook.read_text(encoding="utf-8")
    try:
        nb = json.loads(text)
        name = nb.get("metadata", {}).get("otter", {}).get("assignment_name")
        cells = [c.get("source", "") for c in nb["cells"] if c.get("cell_type") == "code"]
        cells = ["".join(s) if isinstance(s, list) else s for s in cells]
    except (ValueError, KeyError, AttributeError, TypeError):
        raise SystemExit(f"grade: {notebook} is not a notebook") from None
    if name not in NAMES or not all(isinstance(c, str) for c in cells):
        raise SystemExit(f"grade: {notebook} is not a submission of {', '.join(NAMES)} "
                         f"(its metadata names {name!r})")  # fmt: skip
    return name, text, cells


def hidden_folders() -> list[Path]:
    """What the submission's process must not see: sources, hidden tests, built notebooks,
    this repository's tests and its git history."""
    root = HERE.parent
    found = [SOURCE, checks.HIDDEN, DIST, root / "tests"]
    git = subprocess.run(["git", "-C", str(root), "rev-parse", "--path-format=absolute",
                          "--git-common-dir"], capture_output=True, text=True)  # fmt: skip
    if git.returncode == 0 and git.stdout.strip():
        found.append(Path(git.stdout.strip()))
    return found


def grade(notebook: Path, *, seed=None, run_timeout=300.0, call_timeout=60.0, isolate=True):
    """Grade ``notebook``: ``(score, rows, submission, assignment)``; ``rows`` as
    ``checks.run_tests`` gives them."""
    name, text, cells = read_submission(notebook)
    assignment = checks.load(name)
    seed = int.from_bytes(os.urandom(8), "little") if seed is None else seed
    sub = sandbox.Submission(
        name, text, cells, assignment.probes, hidden=hidden_folders(),
        pythonpath=str(Path(tapeviz.__file__).resolve().parents[1]),
        run_timeout=run_timeout, call_timeout=call_timeout, isolate=isolate,
    )  # fmt: skip
    try:
        rows = checks.run_tests(assignment, sub, np.random.default_rng(seed))
    finally:
        sub.close()
    return sum(r["score"] for r in rows), rows, sub, assignment


def results_json(rows, score) -> dict:
    """Gradescope's results format: one entry per hidden test."""
    tests = [{"name": f"{r['question']} {r['test']}", "score": r["score"],
              "max_score": r["points"], "output": r["output"]} for r in rows]  # fmt: skip
    return {"score": score, "tests": tests}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path, nargs="?")
    parser.add_argument("--out", type=Path, default=None, help="where results.json goes")
    parser.add_argument("--dist", type=Path, default=DIST, help="where --build-only builds")
    parser.add_argument("--seed", type=int, default=None, help="the hidden inputs' seed")
    parser.add_argument("--run-timeout", type=float, default=300.0, help="s for the cells")
    parser.add_argument("--call-timeout", type=float, default=60.0, help="s for one call")
    parser.add_argument("--no-isolation", action="store_true",
                        help="run the submission as this user, as when not root")  # fmt: skip
    parser.add_argument("--build-only", action="store_true", help="build student notebooks")
    parser.add_argument("--students", type=Path, default=None, help="copy them here")
    args = parser.parse_args(argv)
    if args.build_only:
        for name in NAMES:
            student = build(name, args.dist)
            print(name, student)
            if args.students is not None:
                args.students.mkdir(parents=True, exist_ok=True)
                (args.students / student.name).write_bytes(student.read_bytes())
        return 0
    if args.notebook is None or not args.notebook.exists():
        parser.error(f"expected a submitted notebook, got {args.notebook}")
    score, rows, sub, assignment = grade(args.notebook, seed=args.seed,
                                       run_timeout=args.run_timeout,
                                       call_timeout=args.call_timeout,
                                       isolate=not args.no_isolation)  # fmt: skip
    if not sub.isolated:
        print(
            "note: the submission ran as this user, able to read and write its files "
            "(the hidden tests too): see docs/course.md, 'What grading protects'"
        )
    for err in sub.cell_errors:
        print(f"notebook: {err}")
    for q, points in assignment.questions.items():
        got = sum(r["score"] for r in rows if r["question"] == q)
        print(f"{q}: {got:g}/{points:g}")
    for r in rows:
        if r["score"] < r["points"]:
            print(f"--- {r['question']} {r['test']} ---\n{r['output']}")
    out = args.out or args.notebook.with_name(args.notebook.stem + "-graded")
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results_json(rows, score), indent=1))
    print(f"results: {out / 'results.json'}")
    print(f"score: {score:g}/{sum(assignment.questions.values()):g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
