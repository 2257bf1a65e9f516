"""Answers kept as salted hashes: a check can tell a right answer without holding it.

An answer is rounded to a grid (its quantum ``10**q``, about 1e-4 of its largest entry) and
each entry's grid index is hashed with the exercise, the key and the entry's position. A
check rounds the student's number the same way and compares hashes (the neighbouring grid
points too, so a number within ~1.5 quanta passes). Hypotheses about a wrong answer are
tested the same way: is ``-got`` right (the sign)? ``got / 2`` (a factor)? Do the
differences between neighbouring entries match (a constant offset)? Is it one of the
exercise's known misconceptions?

What a determined student can still do, honestly: the grid and the salt are public, so a
scalar answer can be found by hashing every grid point in a range (about a million hashes,
a second or two) — the hash stops reading the answer off, not searching for it; and the
engine the course teaches computes every gradient anyway. Grades that count come from the
assignments' hidden tests, which run outside the student's environment.

The sealed answers live in ``sealed.json`` beside this module, written by the instructor's
``assignments/source/seal_exercises.py`` (which computes them with the engine).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import numpy as np

SALT = "tapeviz.teach/1"
SEALED = Path(__file__).with_name("sealed.json")


def _digest(exercise: str, key: str, index: int, k: int) -> str:
    text = f"{SALT}|{exercise}|{key}|{index}|{k}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _quantum(a: np.ndarray) -> int:
    top = float(np.abs(a).max()) if a.size else 0.0
    return int(np.floor(np.log10(top))) - 4 if top > 0 else -6


def seal(exercise: str, key: str, value) -> dict:
    """The sealed form of one answer: shape, quantum exponent, hashes of entries and of the
    differences between neighbouring entries (the instructor's side; no value is kept)."""
    a = np.asarray(value, dtype=np.float64)
    q = _quantum(a)
    flat = np.rint(a.reshape(-1) / 10.0**q).astype(np.int64)
    diffs = np.diff(flat)
    return {
        "shape": list(a.shape),
        "q": q,
        "h": [_digest(exercise, key, i, int(k)) for i, k in enumerate(flat)],
        "d": [_digest(exercise, key + "/d", i, int(k)) for i, k in enumerate(diffs)],
    }


def data_print(given: dict) -> str:
    """A fingerprint of an exercise's data (the arrays it is computed on)."""
    h = hashlib.sha256()
    for name in sorted(given):
        h.update(name.encode())
        h.update(np.ascontiguousarray(given[name], dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def _near(exercise, key, hashes, flat_k, slack: int) -> np.ndarray:
    return np.array([
        any(_digest(exercise, key, i, int(k) + s) == hashes[i] for s in range(-slack, slack + 1))
        for i, k in enumerate(flat_k)
    ], dtype=bool)  # fmt: skip


def matches(exercise: str, key: str, sealed: dict, candidate) -> np.ndarray:
    """Which entries of ``candidate`` are right, as a boolean array of the answer's shape."""
    c = np.asarray(candidate, dtype=np.float64)
    flat = np.rint(c.reshape(-1) / 10.0 ** sealed["q"])
    if not np.isfinite(flat).all() or np.abs(flat).max(initial=0) > 2**62:
        return np.zeros(c.shape, dtype=bool)
    return _near(exercise, key, sealed["h"], flat.astype(np.int64), 1).reshape(c.shape)


def differences_match(exercise: str, key: str, sealed: dict, candidate) -> bool:
    """Whether neighbouring entries of ``candidate`` differ as the answer's do."""
    c = np.asarray(candidate, dtype=np.float64).reshape(-1)
    if c.size < 2:
        return False
    flat = np.rint(c / 10.0 ** sealed["q"])
    if not np.isfinite(flat).all():
        return False
    diffs = np.diff(flat.astype(np.int64))
    return bool(_near(exercise, key + "/d", sealed["d"], diffs, 2).all())


@cache
def sealed_exercises() -> dict:
    """``{exercise: {"praise", "answers": {key: sealed}, "misconceptions", "data"}}``."""
    return json.loads(SEALED.read_text(encoding="utf-8"))
