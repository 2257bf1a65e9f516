"""Name the mistake, not only the mismatch: what a failed value check looks like.

``name_mistake`` runs on a check that ended in "value mismatch" and returns one sentence when
the analytic gradient is a simple transformation of the numerical one at every entry: the
sign flipped, one factor, one constant added, right except where ``x < 0`` (or ``x > 0``),
the gradient at ``-x`` (a sign lost inside, as σ(z) for σ(-z)), the transpose. Else "" (the
report then says "value mismatch"). It never runs on a check that passed, so a right
gradient never gets a sentence. ``tapeviz.teach.patterns`` says the same kinds of pattern
to students without the numbers; here, for the author of the gradient, the numbers are shown.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MISTAKES", "name_mistake", "numerical_at_minus_x"]

# the sentences, by pattern; tests look them up here rather than copying the words
MISTAKES = {
    "not finite": "the analytic gradient has NaN or Inf at {n} of {size} entries",
    "sign": "the sign is flipped: analytic = -numerical at every entry",
    "factor": "off by the same factor at every entry: analytic = {k:.4g} × numerical "
    "(a local derivative left out, or counted twice?)",
    "offset": "off by the same constant at every entry: analytic = numerical {c:+.4g} "
    "(a term added that belongs elsewhere?)",
    "where": "right except where {cond} ({n} of {size} entries): look at that branch",
    "minus x": "looks like the gradient at -x: analytic at x = numerical at -x at every entry "
    "(a sign lost inside, as σ(z) for σ(-z)?)",
    "transposed": "transposed: the analytic gradient is the transpose of the numerical one",
}

# the ratios a single entry is named "a factor" for (one number is a factor of any other)
_SIMPLE_RATIOS = (2.0, 3.0, 4.0, 0.5, 1 / 3, 0.25, -2.0, -0.5)
_SLACK = 4.0  # a pattern holds within this many tolerance bands (both sides carry noise)
_MAX_MINUS_X = 256  # entries of x: the -x pattern costs two evaluations of f per entry


def _close(check, a, b) -> np.ndarray:
    tol = check.atol + check.rtol * np.maximum(np.abs(a), np.abs(b))
    return np.abs(a - b) <= _SLACK * tol


def name_mistake(check, x=None, at_minus_x=None, dy=None) -> str:
    """The pattern of a failed value check in one sentence, or "" when none fits.

    Args:
        check: an ``InputCheck`` (``analytic`` against ``numerical``, same shape).
        x: the checked input's value (for the ``x < 0`` pattern), or None.
        at_minus_x: a function returning the numerical side at ``-x`` (same shape), or None
            when it does not apply; called only when the cheaper patterns do not fit.
        dy: the dy of a "reverse" check (an offset is only named when it is all ones: for
            a random dy, dyᵀJ of an offset Jacobian is no constant).

    Returns:
        A sentence of ``MISTAKES``, filled in, or "".
    """
    a, n = check.analytic, check.numerical
    if check.passed or a.size == 0 or check.kind not in ("reverse", "entries"):
        return ""
    if not np.isfinite(a).all():
        return MISTAKES["not finite"].format(n=int((~np.isfinite(a)).sum()), size=a.size)
    if not np.isfinite(n).all():
        return ""
    if _close(check, a, -n).all() and np.abs(n).max() > 0:
        return MISTAKES["sign"]
    plain = check.kind == "entries" or (dy is not None and bool(np.all(np.asarray(dy) == 1)))
    simple = _factor_or_offset(check, a, n, plain)
    if simple:
        return simple
    if x is not None and np.shape(x) == a.shape and a.size > 1:
        off = ~_close(check, a, n)
        for cond, mask in (("x < 0", np.asarray(x) < 0), ("x > 0", np.asarray(x) > 0)):
            if mask.any() and not mask.all() and (off == mask).all():
                return MISTAKES["where"].format(cond=cond, n=int(mask.sum()), size=a.size)
    if at_minus_x is not None:
        m = at_minus_x()
        if m is not None and np.isfinite(m).all() and _close(check, a, m).all():
            return MISTAKES["minus x"]
    if a.ndim == 2 and a.shape[0] == a.shape[1] > 1 and _close(check, a.T, n).all():
        return MISTAKES["transposed"]
    return ""


def _factor_or_offset(check, a, n, plain) -> str:
    tol = check.atol + check.rtol * np.abs(n)
    big = np.abs(n) > 10 * tol
    if a.size == 1:  # one number is a factor of any other: only the simple ratios
        if big.all():
            k = float(a.reshape(-1)[0] / n.reshape(-1)[0])
            if any(np.isclose(k, r, rtol=1e-3) for r in _SIMPLE_RATIOS):
                return MISTAKES["factor"].format(k=k)
        return ""
    if big.sum() >= 2 and _close(check, a[~big], 0.0).all():
        k = float(np.median(a[big] / n[big]))
        if not np.isclose(k, 1.0) and _close(check, a, k * n).all():
            return MISTAKES["factor"].format(k=k)
    if plain:  # the gradient's entries themselves (not dyᵀJ for a random dy)
        c = float(np.median(a - n))
        if _close(check, a, n + c).all():
            return MISTAKES["offset"].format(c=c)
    return ""


def numerical_at_minus_x(p, k, check, eps, v):
    """A function giving the numerical side of ``check`` at ``-x`` (``x`` the ``k``-th
    differentiable argument of problem ``p``, the other arguments as they are): central
    differences one entry at a time, dyᵀJ(-x) for the dy ``v`` of a "reverse" check, the
    diagonal ∂y[i]/∂x[i] of an "entries" one. None when ``x`` is too large."""
    i = p.diff[k]
    x = np.asarray(p.args[i])
    if x.size > _MAX_MINUS_X or x.dtype.kind != "f" or not x.any():
        return None

    def at_minus_x():
        out, args, flat = np.empty(x.size), list(p.args), (-x).reshape(-1)
        with np.errstate(all="ignore"):
            for j in range(x.size):
                up, down = flat.copy(), flat.copy()
                up[j] += eps  # in x's dtype: the step the forward sees (float32 rounds)
                down[j] -= eps
                args[i] = up.reshape(x.shape)
                y_up = np.asarray(p.call(args), np.float64)
                args[i] = down.reshape(x.shape)
                col = (y_up - np.asarray(p.call(args), np.float64)) / float(up[j] - down[j])
                out[j] = col.reshape(-1)[j] if check.kind == "entries" else np.vdot(v, col)
        return out.reshape(check.analytic.shape)

    return at_minus_x
