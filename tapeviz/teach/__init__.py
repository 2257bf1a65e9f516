"""Exercises that grade: ``check(name, answer)`` says "correct" or "not yet: …" and why.

The answers are not in the notebooks nor in this package: ``sealed.json`` keeps salted
hashes of them (``seal.py`` says what a determined student can still do), written by the
instructor's ``assignments/source/seal_exercises.py``. A wrong answer gets the *pattern* of
its mismatch (``patterns.describe``: the sign flipped, off by a factor or a constant, wrong
only where x < 0, a known misconception), never a direction such as "too large".

A check never raises on a wrong answer: it returns a ``Verdict`` that displays as a green
"correct" or an orange "not yet: …" box, so a notebook still runs top to bottom while the
placeholders (``...``) are in place.

``reveal(tape, a=a_grad, …)`` puts the engine's gradients beside the student's, each shown
only once the student's agrees (``show=True`` is the explicit "show me").

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
from .patterns import describe
from .reveal import reveal
from .slides import export, presentation

__all__ = ["Verdict", "check", "describe", "exercise_names", "export", "presentation", "reveal"]
