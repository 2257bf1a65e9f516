"""Grade one submitted notebook with Otter-Grader, without Docker: ``make grade NB=path``.

The notebook's metadata names its assignment (``otter.assignment_name``); the autograder
(public and hidden tests) is built from ``assignments/source/<name>/<name>.ipynb`` by
``otter assign`` into ``assignments/dist/<name>/`` when missing or older than its source.
Otter's ``run`` then executes the submission in a fresh kernel of this Python and writes
Otter's ``results.json`` (the Gradescope results format Otter exports) beside the printed
per-question scores. The last line is ``score: X/Y``.

Usage:
    python assignments/grade.py SUBMISSION.ipynb [--out DIR] [--build-only]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from otter.run import main as otter_run

HERE = Path(__file__).resolve().parent
SOURCE, DIST = HERE / "source", HERE / "dist"
NAMES = ("a_op_gradients", "b_value", "c_training_loop", "d_layers")


@contextlib.contextmanager
def this_python_as_kernel():
    """Jupyter's "python3" kernel is this interpreter (the venv's) while in the block."""
    saved, cwd = dict(os.environ), os.getcwd()
    with tempfile.TemporaryDirectory() as root:
        spec = Path(root) / "kernels" / "python3"
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python",
                                                      "display_name": "Python 3"}))  # fmt: skip
        path = [root, *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
        os.environ.update(JUPYTER_PATH=os.pathsep.join(path), PYDEVD_DISABLE_FILE_VALIDATION="1")
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)
            os.chdir(cwd)


def autograder(name: str, dist: Path = DIST) -> Path:
    """The autograder zip of assignment ``name``, built by ``otter assign`` if stale."""
    source = SOURCE / name / f"{name}.ipynb"
    if not source.exists():
        raise SystemExit(f"grade: no assignment {name!r} (expected {source})")
    out = dist / name
    zips = sorted((out / "autograder").glob("*.zip"))
    if zips and zips[-1].stat().st_mtime >= source.stat().st_mtime:
        return zips[-1]
    cmd = [sys.executable, "-m", "otter", "assign", "--no-pdfs", str(source), str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    zips = sorted((out / "autograder").glob("*.zip"))
    if done.returncode != 0 or not zips:
        raise SystemExit(f"grade: otter assign failed for {name}:\n{done.stdout}{done.stderr}")
    for old in zips[:-1]:
        old.unlink()
    return zips[-1]


def assignment_of(notebook: Path) -> str:
    meta = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    name = meta.get("otter", {}).get("assignment_name")
    if name not in NAMES:
        raise SystemExit(f"grade: {notebook} is not a submission of {', '.join(NAMES)} "
                         f"(its metadata names {name!r})")  # fmt: skip
    return name


def grade(notebook: Path, out: Path, dist: Path = DIST, debug: bool = False):
    """Run Otter on ``notebook``; returns (score, possible, [(question, score, max)] and
    ``("output", question, Otter's report)`` rows). ``debug``: a cell that raises stops the
    grading (Otter's debug mode), e.g. to prove an untouched notebook runs top to bottom."""
    zip_path = autograder(assignment_of(notebook), dist)
    out.mkdir(parents=True, exist_ok=True)
    log = io.StringIO()
    try:
        with this_python_as_kernel(), contextlib.redirect_stdout(log):
            otter_run(str(notebook.resolve()), autograder=str(zip_path),
                      output_dir=str(out.resolve()), no_logo=True, debug=debug)  # fmt: skip
    except Exception as e:
        raise SystemExit(f"grade: otter run failed on {notebook}: {type(e).__name__}: {e}\n"
                         f"{log.getvalue()[-3000:]}") from None  # fmt: skip
    results = out / "results.json"
    tests = json.loads(results.read_text())["tests"]
    rows = [(t["name"], t["score"], t["max_score"]) for t in tests if "max_score" in t]
    return sum(r[1] for r in rows), sum(r[2] for r in rows), [*rows, *_failures(tests)]


def _failures(tests) -> list:
    """The hidden tests' messages, for the instructor (the student sees only the score)."""
    return [("output", t["name"], t.get("output", "")) for t in tests if "max_score" in t]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path, nargs="?")
    parser.add_argument("--out", type=Path, default=None, help="where results.json goes")
    parser.add_argument("--dist", type=Path, default=DIST, help="where autograders are built")
    parser.add_argument("--debug", action="store_true", help="stop on a cell that raises")
    parser.add_argument("--build-only", action="store_true", help="build every autograder")
    parser.add_argument(
        "--students",
        type=Path,
        default=None,
        help="with --build-only: copy the student notebooks here",
    )
    args = parser.parse_args(argv)
    if args.build_only:
        for name in NAMES:
            print(name, autograder(name, args.dist))
            if args.students is not None:
                args.students.mkdir(parents=True, exist_ok=True)
                student = args.dist / name / "student" / f"{name}.ipynb"
                (args.students / student.name).write_bytes(student.read_bytes())
        return 0
    if args.notebook is None or not args.notebook.exists():
        parser.error(f"expected a submitted notebook, got {args.notebook}")
    out = args.out or args.notebook.with_name(args.notebook.stem + "-graded")
    score, possible, rows = grade(args.notebook, out, args.dist, args.debug)
    for row in rows:
        if row[0] == "output":
            print(f"--- {row[1]} ---\n{row[2].strip()}")
        else:
            print(f"{row[0]}: {row[1]:g}/{row[2]:g}")
    print(f"results: {out / 'results.json'}")
    print(f"score: {score:g}/{possible:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
