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


def payload(widget) -> dict:
    """The data of the four views from a ``GradCheckWidget``'s latest check.

    Returns:
        ``{"one_d", "message", "scatter", "errors", "sweep", "curve"}``; a view with
        nothing to draw is None (and ``message`` says why when the check did not run).
    """
    c = widget.check
    out = {"one_d": bool(widget.one_d), "message": "", "scatter": None, "errors": None}
    out.update(sweep=None, curve=None)
    if c is None:
        out["message"] = widget.failure_class
    else:
        tol = c.atol + c.rtol * np.abs(c.numerical)
        out["scatter"] = {
            "numerical": _list(c.numerical),
            "analytic": _list(c.analytic),
            "passed": [bool(v) for v in np.asarray(c.passed_mask).reshape(-1)[:MAX_POINTS]],
            "atol": float(c.atol),
            "rtol": float(c.rtol),
        }
        shape = list(c.abs_err.shape) if c.abs_err.ndim >= 2 else [int(c.abs_err.size)]
        out["errors"] = {"abs_err": _list(c.abs_err), "tol": _list(tol), "shape": shape[:2]}
        out["sweep"] = _sweep(widget)
    if widget.one_d and widget.curve is not None:
        xs, fx, custom, numeric = widget.curve
        out["curve"] = {
            "x": _list(xs),
            "f": _list(fx),
            "custom": _list(custom),
            "numeric": _list(numeric),
            "x_now": float(widget.point.value),
        }
    return out


def _sweep(widget) -> dict:
    s = widget.sweep
    if s is None:
        return {"message": f"eps sweep unavailable: {widget.sweep_error}"}
    return {
        "eps": _list(s.eps),
        "error": _list(np.maximum(s.error, 1e-18)),
        "truncation": _list(s.truncation_line),
        "rounding": _list(s.rounding_line),
        "eps_now": float(widget.eps.value),
        "verdict": str(s.verdict),
    }
