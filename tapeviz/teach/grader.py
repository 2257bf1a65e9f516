"""Grade an answer against its sealed form and say what is off, in words that do not give it.

The package holds no answers: ``sealed.json`` keeps salted hashes (``seal.py``), and a check
tests hypotheses about a wrong answer against them — the sign flipped, a factor, a constant
offset, a known misconception — to name its pattern (``patterns.py``'s sentences).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..present.palette import FAIL, PASS
from ..present.text import html_text
from .patterns import PATTERNS
from .seal import data_print, differences_match, matches, sealed_exercises

__all__ = ["Verdict", "check", "exercise_names"]

# the factors a wrong answer is tested for (a local derivative or dy left out or doubled)
_FACTORS = (2.0, 3.0, 4.0, 0.5, 1 / 3, 0.25, -2.0, -0.5)


@dataclass(frozen=True)
class Verdict:
    """The result of one check: ``correct`` and a sentence for the student.

    Displays as a coloured box in a notebook; ``repr`` is the same sentence as text, e.g.
    ``exercise 00.L=d*f: not yet: d_grad: the sign is flipped: …``.
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
        text = f": {html_text(self.message)}" if self.message else ""
        return (
            f"<div style='border-left:4px solid {colour};padding:2px 8px'>"
            f"<b style='color:{colour}'>{word}</b> "
            f"<small>(exercise {html_text(self.exercise)})</small>{text}</div>"
        )


def exercise_names() -> list[str]:
    """The names ``check`` knows, e.g. ``"00.L=d*f"``."""
    return list(sealed_exercises())


def check(name: str, answer=None, *, given: dict | None = None, **answers) -> Verdict:
    """Grade an answer against the sealed one; a wrong answer gets its pattern in words.

    Args:
        name: the exercise, e.g. ``"02.sigmoid-slope"`` (see ``exercise_names()``).
        answer: a single answer (a number, list, tuple or array), or nothing when the answers
            come as keywords.
        given: the exercise's data from the notebook, for exercises computed on data (it
            must be the notebook's data, unchanged: the answer was sealed for it).
        **answers: several answers by the student's own variable names, e.g.
            ``check("00.L=d*f", d_grad=d_grad, f_grad=f_grad)``.

    Returns:
        A ``Verdict``; it never raises for a wrong or missing answer.

    Raises:
        KeyError: ``name`` is not an exercise (the message lists the ones that are).

    Example:
        >>> check("02.sigmoid-slope", 0.5).message
        'off by the same factor at every entry: a local derivative left out, or counted twice?'
    """
    table = sealed_exercises()
    if name not in table:
        raise KeyError(f"check: no exercise {name!r} (exercises: {', '.join(table)})")
    ex = table[name]
    if "data" in ex and (given is None or data_print(given) != ex["data"]):
        return Verdict(name, False, "the exercise's data changed: run the cells above unchanged")
    if list(ex["answers"]) == ["answer"]:
        answers = {"answer": answer}
    missing = [k for k in ex["answers"] if k not in answers]
    if missing:
        return Verdict(name, False, f"pass {', '.join(missing)} to check() as well")
    for key, sealed in ex["answers"].items():
        problem = _problem(name, key, answers[key], sealed, ex.get("misconceptions", {}))
        if problem:
            label = "" if key == "answer" else f"{key}: "
            return Verdict(name, False, label + problem)
    return Verdict(name, True, ex.get("praise", ""))


def _problem(name: str, key: str, got, sealed: dict, misconceptions: dict) -> str | None:
    """None if ``got`` is right; else its pattern, found by testing hypotheses on hashes."""
    if got is ... or got is None or (isinstance(got, (list, tuple)) and ... in got):
        return PATTERNS["placeholder"]
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return PATTERNS["not numbers"].format(what=f"{type(got).__name__} {got!r:.60}")
    if list(g.shape) != sealed["shape"]:
        return PATTERNS["shape"].format(want=tuple(sealed["shape"]), got=g.shape)
    if not np.isfinite(g).all():
        return PATTERNS["not finite"].format(n=int((~np.isfinite(g)).sum()), size=g.size)
    right = matches(name, key, sealed, g)
    if right.all():
        return None
    for i, (mkey, mseal, message) in enumerate(misconceptions.get(key, [])):
        if list(g.shape) == mseal["shape"] and matches(name, f"{mkey}!{i}", mseal, g).all():
            return message
    return _pattern(name, key, sealed, g, right)


def _pattern(name, key, sealed, g, right) -> str:
    if not g.any():
        return PATTERNS["zero"]
    if matches(name, key, sealed, -g).all():
        return PATTERNS["sign"]
    if any(matches(name, key, sealed, g / k).all() for k in _FACTORS):
        return PATTERNS["factor"]
    if g.size == 1:
        return PATTERNS["scalar"]
    if differences_match(name, key, sealed, g):
        return PATTERNS["offset"]
    first = tuple(int(i) for i in np.argwhere(~right)[0])
    return PATTERNS["some"].format(n=int((~right).sum()), size=g.size, index=first)
