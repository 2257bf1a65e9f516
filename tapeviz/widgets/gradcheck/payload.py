"""The gradient check's plots as plain data, for the widget's browser-side drawing.

The kernel sends numbers (at most ``MAX_POINTS`` entries per view); the ES module
``tapeviz/static/gradcheck_plots.js`` draws the same four views matplotlib draws for static
figures: custom vs numerical, error per element, the epsilon sweep, and (1-D) f and its
derivatives.
"""

from __future__ import annotations

import numpy as np

MAX_POINTS = 2000


def _list(a) -> list:
    """Finite floats as floats, NaN/Inf as None (JSON has no NaN)."""
    flat = np.asarray(a, dtype=np.float64).reshape(-1)[:MAX_POINTS]
    return [float(v) if np.isfinite(v) else None for v in flat]


def payload(widget, c=None, failed: bool = False) -> dict:
    """The data of the four views from a ``GradCheckWidget``'s latest check, or from the
    check ``c`` at another slider position (``GradCheckWidget.check_at``).

    Returns:
        ``{"one_d", "message", "scatter", "errors", "sweep", "curve"}``; a view with
        nothing to draw is None (and ``message`` says why when the check did not run).
    """
    from .data import failure_words

    check = c.check if c is not None else widget.check
    out = {"one_d": bool(widget.one_d), "message": "", "scatter": None, "errors": None}
    out.update(sweep=None, curve=None)
    if failed:
        return out  # the badge says what failed
    if check is None:
        report = c.report if c is not None else widget.report
        out["message"] = failure_words(report, check)
    else:
        tol = check.atol + check.rtol * np.abs(check.numerical)
        out["scatter"] = {
            "numerical": _list(check.numerical),
            "analytic": _list(check.analytic),
            "passed": [bool(v) for v in np.asarray(check.passed_mask).reshape(-1)[:MAX_POINTS]],
            "atol": float(check.atol),
            "rtol": float(check.rtol),
        }
        a = check.abs_err
        shape = list(a.shape) if a.ndim >= 2 else [int(a.size)]
        out["errors"] = {"abs_err": _list(a), "tol": _list(tol), "shape": shape[:2]}
        if c is not None:
            out["sweep"] = _sweep(c.sweep, c.sweep_error, c.eps)
        else:
            out["sweep"] = _sweep(widget.sweep, widget.sweep_error, widget.eps.value)
    if widget.one_d and widget.curve is not None and c is None:
        out["curve"] = payload_curve(*widget.curve, widget.point.value)
    return out


def payload_curve(xs, fx, custom, numeric, x_now) -> dict:
    """The 1-D view: f, the custom and the numerical derivative, and the point marked."""
    return {
        "x": _list(xs),
        "f": _list(fx),
        "custom": _list(custom),
        "numeric": _list(numeric),
        "x_now": float(x_now),
    }


def _sweep(s, error, eps_now) -> dict:
    if s is None:
        return {"message": f"eps sweep unavailable: {error}"}
    return {
        "eps": _list(s.eps),
        "error": _list(np.maximum(s.error, 1e-18)),
        "truncation": _list(s.truncation_line),
        "rounding": _list(s.rounding_line),
        "eps_now": float(eps_now),
        "verdict": str(s.verdict),
    }
