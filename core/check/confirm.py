"""A second opinion before a gradient check reports a failure: the first central difference
can be off (truncation error where f curves hard, rounding where f computes in float32, a
jump), so ``confirm`` (reverse mode) and ``confirm_forward`` (forward mode) look again with
Richardson extrapolation and larger steps, and ``_mark_jumps`` sets aside the elements where
f is discontinuous. A failure that survives is reported as confirmed, and says so."""

from __future__ import annotations

import numpy as np

from .comparison import InputCheck
from .differences import directional, jacobians
from .steps import SAFETY, forward_values, judge, machine_eps, reverse_values, step_range, words

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
    at, magnitude = reverse_values(p, k, u, check.kind, v, check.analytic.shape)
    return _by_steps(check, at, magnitude, eps, machine_eps(p))


def _by_steps(check, at, magnitude, eps, eps_machine):
    """The failing elements judged over many steps (``steps.judge``): each passes, fails
    (confirmed) or is not checkable at this step; the check says which, with the numbers."""
    bad = ~check.passed_mask
    band = np.broadcast_to(check.band, check.analytic.shape)
    r = judge(at, check.analytic, band, magnitude, eps, eps_machine)
    failed, unresolved = bad & r["failed"], bad & r["unresolved"]
    new = check  # a confirmed failure keeps the first difference's numbers, as before
    if not failed.any():  # the elements judged show the step's value
        new = InputCheck(check.arg, check.label, check.kind, check.order, check.analytic,
                         np.where(bad, r["value"], check.numerical), check.atol, check.rtol,
                         strategy=f"{check.strategy}; where it failed, Richardson over steps "
                         f"{step_range(eps)}", jacobian=check.jacobian,
                         kinks=check.kinks)  # fmt: skip
        new.unchecked = check.unchecked
    new.passed_mask = ~failed
    if unresolved.any():
        new.unresolved = unresolved
        worst = tuple(int(i) for i in np.argwhere(unresolved)[0])
        new.resolution = (
            f"{int(unresolved.sum())} element(s) not checkable at this step: no finite "
            f"difference at steps {step_range(eps)} is accurate enough to "
            f"judge them, as f changes on a scale below the step or its value (about "
            f"{float(np.max(np.abs(magnitude))):.3g}) is huge next to its change; at "
            f"{worst}: analytic {check.analytic[worst]:.6g}, {words(r, worst)}. Neither "
            "pass nor fail"
        )
    if failed.any():
        w = tuple(int(i) for i in np.argwhere(failed)[0])
        new.confirmed = (
            f"Confirmed over steps {step_range(eps)} (Richardson, each with "
            f"its truncation and rounding error estimated): at {w} the analytic value "
            f"{check.analytic[w]:.6g} is outside {words(r, w)} by more than "
            f"{SAFETY:g} times that error"
        )
    else:
        new.failure, new.detail = None, ""
        if r["passed"][bad].any():
            new.confirmed = (
                f"The central difference at eps {eps:.3g} was inaccurate; a smaller or larger "
                "step (Richardson, error estimated) agrees with the analytic gradient where "
                "it failed"
            )
    return new


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
    at, magnitude = forward_values(p, us)
    new = _by_steps(check, at, magnitude, eps, machine_eps(p))
    new.failure = check.failure
    return new
