"""Compare a student's answer with the engine's and say what is off, in words."""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from ..present.palette import FAIL, PASS
from .exercises import EXERCISES

__all__ = ["Verdict", "check", "exercise_names"]


@dataclass(frozen=True)
class Verdict:
    """The result of one check: ``correct`` and a sentence for the student.

    Displays as a coloured box in a notebook; ``repr`` is the same sentence as text, e.g.
    ``exercise 00.L=d*f: not yet: d_grad: you have 2, which has the wrong sign``.
    """

    exercise: str
    correct: bool
    message: str

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        word = "correct" if self.correct else "not yet"
        return f"exercise {self.exercise}: {word}" + (f": {self.message}" if self.message else "")

    def _repr_html_(self) -> str:
        colour, word = (PASS, "correct") if self.correct else (FAIL, "not yet")  # colour + word
        text = f": {html.escape(self.message)}" if self.message else ""
        return (
            f"<div style='border-left:4px solid {colour};padding:2px 8px'>"
            f"<b style='color:{colour}'>{word}</b> "
            f"<small>(exercise {html.escape(self.exercise)})</small>{text}</div>"
        )


def exercise_names() -> list[str]:
    """The names ``check`` knows, e.g. ``"00.L=d*f"``."""
    return list(EXERCISES)


def check(name: str, answer=None, *, given: dict | None = None, **answers) -> Verdict:
    """Grade an answer against the one the engine computes.

    Args:
        name: the exercise, e.g. ``"02.sigmoid-slope"`` (see ``exercise_names()``).
        answer: a single answer (a number, list, tuple or array), or nothing when the answers
            come as keywords.
        given: the exercise's data from the notebook (arrays the reference is computed on).
        **answers: several answers by the student's own variable names, e.g.
            ``check("00.L=d*f", d_grad=d_grad, f_grad=f_grad)``.

    Returns:
        A ``Verdict``; it never raises for a wrong or missing answer.

    Raises:
        KeyError: ``name`` is not an exercise (the message lists the ones that are).
    """
    if name not in EXERCISES:
        raise KeyError(f"check: no exercise {name!r} (exercises: {', '.join(EXERCISES)})")
    exercise = EXERCISES[name]
    expected = exercise.reference(**(given or {}))
    if not isinstance(expected, dict):
        expected, answers = {"answer": expected}, {"answer": answer}
    missing = [k for k in expected if k not in answers]
    if missing:
        return Verdict(name, False, f"pass {', '.join(missing)} to check() as well")
    for key, want in expected.items():
        problem = _problem(key, answers[key], want)
        if problem:
            return Verdict(name, False, problem)
    return Verdict(name, True, exercise.praise)


def _problem(key: str, got, want) -> str | None:
    """None if ``got`` matches ``want``; else what is off, without giving ``want`` away."""
    label = "" if key == "answer" else f"{key}: "
    if got is ... or got is None or (isinstance(got, (list, tuple)) and ... in got):
        return f"{label}replace the ... with your answer"
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return f"{label}expected numbers, got {type(got).__name__} {got!r}"
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        return f"{label}expected shape {w.shape}, got {g.shape}"
    off = ~np.isclose(g, w, rtol=1e-4, atol=1e-6)
    if not off.any():
        return None
    if g.ndim == 0:
        return f"{label}you have {g.item():.6g}, which {_direction(g.item(), w.item())}"
    first = tuple(int(i) for i in np.argwhere(off)[0])
    return (
        f"{label}{int(off.sum())} of {off.size} entries are off; the first at index {first}: "
        f"you have {g[first]:.6g}, which {_direction(g[first], w[first])}"
    )


def _direction(got: float, want: float) -> str:
    if np.sign(got) != np.sign(want):
        return "has the wrong sign" if want != 0 else "should be 0"
    return "is too large" if abs(got) > abs(want) else "is too small"
