"""The last look before a gradient check says FAIL: finite differences over many steps, each
with an estimate of its own error, so that a check never cries wolf at an extreme scale.

A central difference at one step ``h`` has two errors: truncation (O(h²): large when f changes
on a scale smaller than h, as ``linalg.norm`` near ``[1e-9, 2e-9]`` or ``arctan2(y, 1e-8)``)
and rounding (about ``ε |f| / h``: large when f's value is huge next to its change, as
``sum(1e10 + 0.01 x²)``). ``judge`` tries steps from ``eps·1e-8`` to ``eps·1e10`` (ten times
apart). At each it forms the Richardson value of the pair (h, 10h) and an error estimate: the
pair's disagreement (truncation) plus ``8 ε |f| / h`` (rounding, with ``ε`` of the dtype f
computes in); a pair is used only where the differences shrink toward small steps as a
converging difference does (not where f is saturated and the quotient falls as 1/h). For each
element that failed:

Only steps that continue one another from the trusted step nearest ``eps`` count (a plateau
reached across a break, as where f is saturated at large steps, is not the derivative).

* a step whose value agrees with the analytic one within the tolerance, with an error
  estimate within the tolerance too, makes it pass (the first difference was inaccurate);
* otherwise, a step whose value excludes the analytic one by more than the tolerance plus ten
  times its error estimate makes it FAIL, confirmed;
* otherwise no step can judge it: it is "not checkable at this step" (neither pass nor fail),
  and the check says why, with the numbers.
"""

from __future__ import annotations

import numpy as np

from .differences import directional, jacobians

__all__ = [
    "judge",
    "machine_eps",
    "step_range",
    "reverse_values",
    "forward_values",
    "words",
    "SAFETY",
]

SAFETY = 10.0  # how many estimated errors a disagreement must exceed to be a confirmed FAIL
_ROUNDING = 8.0  # ulps of |f| one evaluation of f may be off by
_EXPONENTS = np.arange(-8, 11)  # steps eps * 10**k


def step_range(eps) -> str:
    """The steps ``judge`` tries, in words ("1e-14 to 1e+04")."""
    return f"{eps * 10.0 ** _EXPONENTS[0]:.0e} to {eps * 10.0 ** _EXPONENTS[-1]:.0e}"


def machine_eps(p) -> float:
    """ε of the dtype the problem's f computes in (float32 if any output is float32)."""
    dtypes = [getattr(p, "out", None)] if hasattr(p, "out") else []
    dtypes = [d.dtype for d in dtypes if d is not None] + list(getattr(p, "out_dtypes", []))
    return float(np.finfo(np.float32 if np.float32 in dtypes else np.float64).eps)


def judge(values_at, analytic, band, magnitude, eps, eps_machine) -> dict:
    """Judge each element of ``analytic`` from finite differences over many steps.

    Args:
        values_at: ``h -> estimates`` (shaped like ``analytic``) by a central difference at h.
        analytic: the analytic values; band: the tolerance of each element.
        magnitude: about |f| behind each estimate (for the rounding estimate).
        eps, eps_machine: the check's first step, and ε of the dtype f computes in.

    Returns:
        ``{"passed", "failed", "unresolved"}`` boolean masks, and ``"value"``, ``"error"``,
        ``"step"`` of the step that judged each element (its best estimate when none did).
    """
    steps = eps * 10.0**_EXPONENTS
    D = np.stack([_quiet(values_at, h, analytic.shape) for h in steps])
    h = steps.reshape(-1, *([1] * analytic.ndim))
    rounding = _ROUNDING * eps_machine * np.abs(magnitude) / h
    diff = np.abs(D[:-1] - D[1:])  # between steps h and 10 h
    R = (100 * D[:-2] - D[1:-1]) / 99  # Richardson value of the pair (h, 10 h)
    # the pair is trusted only where the differences shrink toward small h as O(h²) does
    # (by 100 a decade; 10 is asked), or stay within rounding: a difference that stays or
    # grows (f saturated: D ~ 1/h at steps far above f's scale) judges nothing
    converging = diff[:-1] <= diff[1:] / 10 + 2 * (rounding[:-2] + rounding[1:-1])
    err = diff[:-1] / 99 + rounding[:-2]
    ok = _connected(R, err, np.isfinite(R) & np.isfinite(err) & converging, band)
    err = np.where(ok, err, np.inf)
    # an analytic NaN or infinity against a finite estimate is as far off as it gets
    gap = np.where(np.isfinite(analytic), np.abs(R - analytic), np.inf)
    agree = ok & (gap <= band) & (err <= band)
    exclude = ok & (gap > band + SAFETY * err)
    passed, failed = agree.any(axis=0), exclude.any(axis=0)
    failed &= ~passed
    best = np.zeros(analytic.shape, int)  # the step shown: agreeing, else excluding, else
    for idx in np.ndindex(analytic.shape):  # the smallest error estimate
        col = (slice(None),) + idx
        for mask in (agree[col], exclude[col], ok[col], np.ones(len(R), bool)):
            if mask.any():
                best[idx] = int(np.flatnonzero(mask)[np.argmin(err[col][mask])])
                break
    pick = np.take_along_axis
    return {
        "passed": passed,
        "failed": failed,
        "unresolved": ~passed & ~failed,
        "value": pick(R, best[None], axis=0)[0],
        "error": pick(err, best[None], axis=0)[0],
        "step": steps[best],
    }


def _connected(R, err, trusted, band) -> np.ndarray:
    """The trusted steps that continue one another from the trusted step nearest the check's
    own step: walking from it toward smaller and toward larger steps, each step kept must
    agree with the last one kept (within both errors). A plateau reached across a break (f
    saturated at large steps, D = 0 there; a difference lost at the smallest steps) is not
    taken for the derivative."""
    keep = np.zeros(trusted.shape, bool)
    base = int(np.flatnonzero(_EXPONENTS == 0)[0])
    for idx in np.ndindex(R.shape[1:]):
        rows = np.flatnonzero(trusted[(slice(None),) + idx])
        if not rows.size:
            continue
        start = int(rows[np.argmin(np.abs(rows - base) + 0.5 * (rows > base))])
        keep[(start,) + idx] = True
        for walk in (range(start - 1, -1, -1), range(start + 1, R.shape[0])):
            last = (start,) + idx
            for m in walk:
                at = (m,) + idx
                if trusted[at] and abs(R[at] - R[last]) <= band[idx] + SAFETY * (
                    err[at] + err[last]
                ):
                    keep[at], last = True, at
    return keep


def _quiet(values_at, h, shape) -> np.ndarray:
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(values_at(h), dtype=np.float64).reshape(shape)
    except Exception:  # a step f cannot take (its domain, a failing batch): no estimate
        return np.full(shape, np.nan)
    return out


def reverse_values(p, k, u, kind, v, shape):
    """``h -> estimates`` of a reverse-mode check: dyᵀJ, or J's diagonal for "entries"."""

    def at(h):
        J = jacobians(p, k, h, u, directional(p, k, u, h)[0])[0][0]
        return np.diag(J) if kind == "entries" else v.reshape(-1) @ J

    y = np.abs(p.y)
    magnitude = y.reshape(shape) if kind == "entries" else np.abs(v).reshape(-1) @ y.reshape(-1)
    return at, np.broadcast_to(magnitude, shape)


def forward_values(p, us):
    """``h -> estimates`` of the forward-mode check: the directional difference along us."""

    def at(h):
        return sum(directional(p, k, u, h)[0] for k, u in enumerate(us))

    return at, np.abs(p.y)


def words(result, index) -> str:
    """What the steps found at one element, in words."""
    return (
        f"best estimate {result['value'][index]:.6g} ± {result['error'][index]:.2g} "
        f"at step {result['step'][index]:.0e}"
    )
