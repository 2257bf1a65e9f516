"""What a wrong gradient looks like, in words that do not give the right one away.

``describe(got, want)`` names the *pattern* of a mismatch — the sign is flipped, off by the
same factor or the same constant at every entry, wrong only where ``x < 0``, all zero, the
wrong shape — and never the expected value, a direction ("too large") or a magnitude, so a
student cannot binary-search the answer from the feedback. The graders of the assignments
(their hidden tests), the stepper's ask mode and ``compare_values`` all speak through it.

Example:
    >>> import numpy as np
    >>> x = np.array([-2.0, -1.0, 1.0, 2.0])
    >>> describe(2 * x, x)
    'off by the same factor at every entry: a local derivative left out, or counted twice?'
    >>> describe(np.where(x < 0, 0.0, x), x, where={"x < 0": x < 0})
    'right except where x < 0 (2 of 4 entries): look at that branch'
"""

from __future__ import annotations

import numpy as np

__all__ = ["PATTERNS", "describe"]

# the sentences, by pattern; tests look them up here rather than copying the words
PATTERNS = {
    "placeholder": "replace the ... with your answer",
    "not numbers": "expected numbers, got {what}",
    "shape": "expected shape {want}, got {got}",
    "not finite": "has NaN or Inf at {n} of {size} entries",
    "zero": "is zero everywhere: no gradient reaches it (is dy multiplied in, and returned?)",
    "sign": "the sign is flipped: check the sign of the local derivative",
    "factor": "off by the same factor at every entry: a local derivative left out, or counted twice?",
    "offset": "off by the same constant at every entry: is a term added that belongs elsewhere?",
    "where": "right except where {cond} ({n} of {size} entries): look at that branch",
    "some": "{n} of {size} entries are off; the first at index {index}",
    "scalar": "not the right value (nor off by a sign or a simple factor)",
}


def _close(a, b, rtol, atol):
    return np.isclose(a, b, rtol=rtol, atol=atol)


def describe(got, want, *, where: dict | None = None, rtol: float = 1e-4, atol: float = 1e-6):
    """None when ``got`` matches ``want``; else the pattern of the mismatch, in words.

    Args:
        got: the student's answer (number, list or array); ``...`` or None is "not answered".
        want: the right answer (only compared with, never shown).
        where: ``{condition in words: boolean mask}`` (e.g. ``{"x < 0": x < 0}``): a mismatch
            exactly on one mask is reported as "right except where <condition>".
        rtol, atol: the tolerance of ``numpy.isclose``.

    Returns:
        ``None`` or a sentence without the expected value, direction or magnitude.
    """
    if got is ... or got is None or (isinstance(got, (list, tuple)) and ... in got):
        return PATTERNS["placeholder"]
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return PATTERNS["not numbers"].format(what=f"{type(got).__name__} {got!r:.60}")
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape:
        return PATTERNS["shape"].format(want=w.shape, got=g.shape)
    bad = ~np.isfinite(g)
    if bad.any():
        return PATTERNS["not finite"].format(n=int(bad.sum()), size=g.size)
    off = ~_close(g, w, rtol, atol)
    if not off.any():
        return None
    return _pattern(g, w, off, where or {}, rtol, atol)


def _pattern(g, w, off, where, rtol, atol) -> str:
    if not g.any():
        return PATTERNS["zero"]
    if _close(-g, w, rtol, atol).all():
        return PATTERNS["sign"]
    for cond, mask in where.items():
        mask = np.broadcast_to(np.asarray(mask, bool), off.shape)
        if mask.any() and (off == mask).all():
            return PATTERNS["where"].format(cond=cond, n=int(mask.sum()), size=off.size)
    if g.size == 1:  # a scalar: any wrong number is "a factor" or "an offset" of the right one
        return _scalar(g.item(), w.item(), rtol, atol)
    if _same_ratio(g, w, rtol, atol):
        return PATTERNS["factor"]
    if _close(g - w, (g - w).reshape(-1)[0], rtol, max(atol, rtol * np.abs(w).max())).all():
        return PATTERNS["offset"]
    first = tuple(int(i) for i in np.argwhere(off)[0])
    return PATTERNS["some"].format(n=int(off.sum()), size=off.size, index=first)


def _same_ratio(g, w, rtol, atol) -> bool:
    """g = k w for one k != 1 at every entry (entries where w is 0 must be 0 in g too)."""
    big = np.abs(w) > 10 * (atol + rtol * np.abs(w).max())
    if big.sum() < 2 or not _close(g[~big], 0.0, rtol, atol).all():
        return False
    k = g[big] / w[big]
    return bool(np.ptp(k) <= 1e-6 * max(np.abs(k).max(), 1e-12)) and not np.isclose(k[0], 1)


# the ratios a scalar answer is named "a factor" for: a local derivative or an upstream
# gradient left out or counted twice gives one of these in the exercises; any other
# scalar is only "not the value", which names no direction to search in
_SIMPLE_RATIOS = (2.0, 3.0, 4.0, 0.5, 1 / 3, 0.25)


def _scalar(g: float, w: float, rtol, atol) -> str:
    if w != 0 and any(np.isclose(abs(g / w), r, rtol=rtol) for r in _SIMPLE_RATIOS):
        return PATTERNS["factor"]
    return PATTERNS["scalar"]
