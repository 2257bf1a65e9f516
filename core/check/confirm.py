"""A second opinion before a gradient check reports a failure: the first central difference
can be off (truncation error where f curves hard, rounding where f computes in float32, a
jump), so ``confirm`` (reverse mode) and ``confirm_forward`` (forward mode) look again with
Richardson extrapolation and larger steps, and ``_mark_jumps`` sets aside the elements where
f is discontinuous. A failure that survives is reported as confirmed, and says so."""

from __future__ import annotations

import numpy as np

from .comparison import InputCheck
from .differences import directional, jacobians

__all__ = ["confirm", "confirm_forward"]


def confirm(p, k, check, at, dy_class, name):
    """Before a value mismatch is reported, re-examine it: the central difference at ``eps``
    has a truncation error (O(eps²), large where f's third derivative is, as for pinv of an
    ill-conditioned XᵀX) and a rounding error (O(1/eps)). Richardson extrapolation from
    steps h and h/2, ``(4 D(h/2) - D(h)) / 3``, cancels the eps² term (O(h⁴)); it is tried
    at h = eps and at h = 10 eps (less rounding). If either agrees with the analytic
    gradient within the same tolerance, the first difference was the inaccurate side: the
    check passes and says so. Otherwise the failure stands, confirmed, and says so too."""
    if check.passed or dy_class or check.failure not in ("value mismatch", "ignores input"):
        return check
    if check.kind not in ("reverse", "entries"):
        return check
    eps, v, u = at
    for h in (eps, 10 * eps, 1e3 * eps, 1e4 * eps):  # larger steps: less rounding (float32 in f)
        try:
            d1 = directional(p, k, u, h)[0]
            d2 = directional(p, k, u, h / 2)[0]
            J1 = jacobians(p, k, h, u, d1)[0][0]
            J2 = jacobians(p, k, h / 2, u, d2)[0][0]
        except Exception:  # the extrapolation is a second opinion; the first one stands
            break
        R = (4 * J2 - J1) / 3
        pick = (lambda J: np.diag(J)) if check.kind == "entries" else (lambda J: v.reshape(-1) @ J)
        num, n1, n2 = (pick(J).reshape(check.analytic.shape) for J in (R, J1, J2))
        again = InputCheck(check.arg, check.label, check.kind, check.order, check.analytic,
                           num, check.atol, check.rtol,
                           strategy=f"{check.strategy}; Richardson extrapolation, steps "
                           f"{h:.3g} and {h / 2:.3g}", jacobian=R)  # fmt: skip
        if h == eps:
            _mark_jumps(check, again, n1, n2)
            if check.passed:  # it failed only where f jumps
                return check
        if not again.passed_mask.all() and h > eps:  # rounding (f computes in float32 inside):
            plain = InputCheck(check.arg, check.label, check.kind, check.order, check.analytic,
                               n1, check.atol, check.rtol, strategy=f"{check.strategy}; "
                               f"central difference, step {h:.3g}", jacobian=J1)  # fmt: skip
            again = plain if plain.passed_mask.all() else again
        if again.passed_mask.all():
            w = check.worst_elements(1)[0]
            again.confirmed = (
                f"The central difference at eps {eps:.3g} missed by {w['abs_err']:.3g} at "
                f"{w['index']}; {again.strategy.split('; ')[-1]} agrees with the analytic "
                "gradient: that was truncation or rounding error of the finite difference, "
                "not a wrong gradient"
            )
            return again
    check.confirmed = (
        "Confirmed: Richardson extrapolation (steps eps and eps/2, then 10 eps and 5 eps) "
        "disagrees with the analytic gradient too"
    )
    return check


def _mark_jumps(check, again, n1, n2) -> None:
    """Elements where f jumps (a discontinuity, such as a gradient at a tie of max at order
    2): the difference quotient doubles when the step halves, ~c/h, so no finite difference
    judges them. They are marked ``unchecked`` in both checks (the line says so)."""
    with np.errstate(all="ignore"):
        ratio = n2 / n1
    big = np.abs(n1) > 10 * (np.abs(check.analytic) + 1)
    jump = big & (np.abs(ratio - 2) < 0.2) & ~check.passed_mask
    if jump.any():
        for c in (check, again):
            c.unchecked = c.unchecked | jump
            c.passed_mask = c.passed_mask | jump
        if check.passed_mask.all():
            check.failure, check.detail = None, ""


def confirm_forward(p, check, us, eps):
    """Forward mode's second opinion: the directional derivative by Richardson extrapolation
    and by a larger step (as ``confirm``); the check passes only if one agrees."""
    for h in (eps, 10 * eps, 1e3 * eps, 1e4 * eps):
        d1 = sum(directional(p, k, u, h)[0] for k, u in enumerate(us))
        d2 = sum(directional(p, k, u, h / 2)[0] for k, u in enumerate(us))
        for num, how in (((4 * d2 - d1) / 3, f"Richardson extrapolation, steps {h:.3g} and "
                          f"{h / 2:.3g}"), (d1, f"a central difference, step {h:.3g}")):  # fmt: skip
            again = InputCheck("all", check.label, "forward", 1, check.analytic, num,
                               check.atol, check.rtol, strategy=how)  # fmt: skip
            if again.passed_mask.all():
                again.confirmed = (f"The first directional difference missed; {how} agrees "
                                   "with forward mode: finite-difference error, not a wrong "
                                   "derivative")  # fmt: skip
                return again
    check.confirmed = "Confirmed with Richardson extrapolation and larger steps"
    return check
