"""What an assignment's hidden tests are made of, and how they are run and scored.

An assignment is one module, ``assignments/hidden/<name>.py``, that declares:

- ``QUESTIONS = {"q1": 5, ...}``: each question and its points;
- ``PROBES``: the source of small functions that run *in the submission's process*: each
  ``probe(ns, **args)`` calls the student's code (``ns`` is the notebook's namespace) on the
  inputs the grader sends and returns plain numbers, lists or arrays. They are not secret;
- hidden tests, each ``@test("q1", points)`` on a function ``(sub, rng)`` that chooses
  inputs with ``rng`` (seeded anew for every grading), asks ``sub.call("probe", ...)`` and
  compares the answer with a reference computed here, raising ``Failed`` (or
  ``AssertionError``) with a sentence for the instructor's report.

A test's points are given only when it passes; a question's points are the sum of its
tests' (checked when the module loads).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tapeviz.teach.patterns import describe

HIDDEN = Path(__file__).resolve().parents[1] / "hidden"


class Failed(AssertionError):
    """A hidden test's finding, in words (goes into the report)."""


@dataclass
class Assignment:
    name: str
    questions: dict
    probes: str
    tests: list = field(default_factory=list)  # (question, points, function)


def test(question: str, points: float):
    """Mark a function ``(sub, rng)`` as a hidden test of ``question`` worth ``points``."""

    def mark(fn):
        fn.hidden_test = (question, float(points))
        return fn

    return mark


def load(name: str, folder: Path = HIDDEN) -> Assignment:
    """The assignment declared in ``folder/<name>.py`` (its tests in source order)."""
    path = folder / f"{name}.py"
    if not path.is_file():
        raise SystemExit(f"grade: no hidden tests for {name!r} (expected {path})")
    spec = importlib.util.spec_from_file_location(f"hidden_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tests = [
        (*fn.hidden_test, fn)
        for fn in vars(module).values()
        if callable(fn) and hasattr(fn, "hidden_test")
    ]
    tests.sort(key=lambda t: t[2].__code__.co_firstlineno)
    questions = dict(module.QUESTIONS)
    for q, points in questions.items():
        given = sum(p for question, p, _ in tests if question == q)
        if given != points:
            raise SystemExit(f"grade: {path.name}: {q} is worth {points} but its tests {given}")
    stray = {question for question, _, _ in tests} - set(questions)
    if stray:
        raise SystemExit(f"grade: {path.name}: tests of undeclared questions {sorted(stray)}")
    return Assignment(name, questions, module.PROBES, tests)


def array(got, what: str, shape=None) -> np.ndarray:
    """``got`` (decoded from the channel) as a float64 array of ``shape``, or ``Failed``."""
    if isinstance(got, bool) or not isinstance(got, (int, float, list, np.ndarray)):
        raise Failed(f"{what}: expected numbers, got {type(got).__name__}")
    try:
        a = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise Failed(f"{what}: expected numbers of one shape") from None
    if shape is not None and a.shape != tuple(shape):
        raise Failed(f"{what}: expected shape {tuple(shape)}, got {a.shape}")
    return a


def close(got, want, what: str, *, where=None, rtol=1e-5, atol=1e-7) -> None:
    """``Failed("<what>: <pattern>")`` unless ``got`` (any data) matches ``want``."""
    want = np.asarray(want, dtype=np.float64)
    g = array(got, what, want.shape)
    words = describe(g, want, where=where, rtol=rtol, atol=atol)
    if words is not None:
        raise Failed(f"{what}: {words}")


def run_tests(assignment: Assignment, sub, rng) -> list[dict]:
    """Every hidden test run against ``sub``: ``{"question", "points", "score", "output"}``."""
    rows = []
    for question, points, fn in assignment.tests:
        try:
            fn(sub, rng)
            score, output = points, "passed"
        except AssertionError as e:
            score, output = 0.0, str(e)
        except Exception as e:  # a probe that gave no answer (SubmissionError), or the like
            score, output = 0.0, f"{type(e).__name__}: {e}"
        rows.append({"question": question, "test": fn.__name__, "points": points,
                     "score": score, "output": " ".join(output.split())[:300]})  # fmt: skip
    return rows
