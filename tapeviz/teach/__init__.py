"""Exercises that grade: ``check(name, answer)`` says "correct" or "not yet: …" and why.

The reference answers are not in the notebooks: each exercise's answer is computed by the
engine when the check runs (``tapeviz.teach.exercises``), so reading the notebook does not
give it away, and "Run All" cannot overwrite the student's answer with a solution.

A check never raises on a wrong answer: it returns a ``Verdict`` that displays as a green
"correct" or an orange "not yet: …" box, so a notebook still runs top to bottom while the
placeholders (``...``) are in place.

For a lecture: ``presentation()`` (large fonts) and ``export(widget, "slide.svg")``.

Example:
    >>> from tapeviz.teach import check
    >>> check("02.sigmoid-slope", ...).correct
    False
    >>> check("02.sigmoid-slope", 0.25)
    exercise 02.sigmoid-slope: correct: σ'(0) = σ(0)(1 − σ(0))
"""

from __future__ import annotations

from .grader import Verdict, check, exercise_names
from .slides import export, presentation

__all__ = ["Verdict", "check", "exercise_names", "export", "presentation"]
