"""The checking machinery behind ``check_grads`` and ``audit``, on any "problem" object.

A problem has ``args`` (arrays), ``diff`` (indices of the differentiable ones), ``y`` (the
output at ``args``), ``call(args)`` (a direct evaluation: the ground truth for finite
differences), ``vjp(dy)`` (analytic, one array per differentiable arg), ``jvp(tangents)``,
``batched(k, X)`` (f on a stack of values of differentiable arg ``k``), ``nodes`` and
``unconnected`` (positions whose gradient came back None).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from ..autodiff.backward import GradientError, NotDifferentiableError
from .comparison import InputCheck
from .confirm import confirm, confirm_forward
from .differences import directional, jacobians
from .eps_sweep import sweep_verdict
from .kinks import accept_kinks, one_sided
from .mistakes import name_mistake, numerical_at_minus_x
from .steps import machine_eps

__all__ = ["run_checks"]


def _close(a, b) -> bool:
    """Equal to rounding, elementwise; NaN matches NaN and an infinity itself (a gradient
    that is NaN or inf at a point, twice, is deterministic)."""
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.all(same | finite):
        return False
    scale = max(np.abs(a[finite]).max(initial=0), np.abs(b[finite]).max(initial=0))
    return bool(np.all(same | (np.abs(np.where(finite, a - b, 0)) <= 1e-10 * scale + 1e-300)))


def _structural(e: GradientError) -> dict:
    msg = str(e)
    kind = "invalid gradient"
    if "expected shape" in msg:
        kind = "wrong shape"
    elif "expected dtype" in msg:
        kind = "wrong dtype"
    elif isinstance(e, NotDifferentiableError):
        kind = "missing gradient"
    found = re.search(r"\(node (\d+)", msg)
    return {"failure": kind, "message": msg, "node_id": int(found.group(1)) if found else None}


def _dy_classes(p, v, g1) -> dict:
    """Run backward again with dy doubled (and once more if that differs): {k: class}."""
    g2 = p.vjp(2 * v)
    bad = [k for k in range(len(g1)) if not _close(g2[k], 2 * g1[k])]
    if not bad:
        return {}
    g3 = p.vjp(v)
    out = {}
    for k in bad:
        if not _close(g3[k], g1[k]):
            gap = float(np.abs(g3[k] - g1[k]).max())
            out[k] = (
                "nondeterministic backward",
                f"two passes with the same dy differ by {gap:.3g}",
            )
        else:
            ratio = float(np.sum(g2[k] * g1[k]) / max(np.sum(g1[k] * g1[k]), 1e-300))
            out[k] = ("not scaled by dy", f"doubling dy scaled this gradient by {ratio:.3g}, not 2")
    return out


def _classify(check: InputCheck, dy_class, unconnected: bool, label: str) -> InputCheck:
    if dy_class is not None:
        check.failure, check.detail = dy_class
    elif not check.passed_mask.all():
        bad = ~check.passed_mask
        if np.all(check.analytic[bad] == 0):
            check.failure = "ignores input"
            check.detail = (
                f"the analytic gradient of {label} is 0 at {int(bad.sum())} elements where "
                f"finite differences give up to {np.abs(check.numerical[bad]).max():.3g}"
            )
            if unconnected:
                check.detail += (
                    "; the tape has no path from it to the output (does f compute with "
                    "numpy, .numpy() or float()?)"
                )
        else:
            check.failure = "value mismatch"
    return check


def run_checks(p, report, *, mode, eps, atol, rtol, forward, rng, order=1, label=str,
               max_full=None, atol_relative=False) -> None:  # fmt: skip
    """Check problem ``p`` (reverse mode per differentiable input, then forward mode) and
    append the ``InputCheck`` objects and structural errors to ``report``.
    ``atol_relative``: ``atol`` is a fraction of each check's largest numerical value."""
    v = np.ones(p.y.shape) if p.y.size == 1 else rng.standard_normal(p.y.shape)
    try:
        g1 = p.vjp(v)
        classes = _dy_classes(p, v, g1)
    except GradientError as e:
        report.errors.append(_structural(e))
        return
    us = [rng.standard_normal(np.shape(p.args[i])) for i in p.diff]
    ds = [directional(p, k, us[k], eps) for k in range(len(p.diff))]
    for k, i in enumerate(p.diff):
        name = label(p.diff[k])
        check = None
        if mode == "fast":
            num = np.vdot(v, ds[k][0])
            check = InputCheck(i, name, "projection", order, np.vdot(g1[k], us[k]), num,
                               _atol(atol, num, atol_relative), rtol,
                               strategy="directional")  # fmt: skip
            too_big = max_full is not None and np.size(p.args[i]) > max_full
            if not too_big and (not check.passed_mask.all() or check.unchecked.any()):
                why = (
                    "failed" if not check.passed_mask.all() else "could not be judged (not finite)"
                )
                report.notes.append(f"fast mode: vᵀJu of {name} {why}; full Jacobian computed")
                check = None
        if check is None:
            (J, Jp, Jm), strategy = jacobians(p, k, eps, us[k], ds[k][0])
            num = (v.reshape(-1) @ J).reshape(np.shape(p.args[i]))
            check = InputCheck(i, name, "reverse", order, g1[k], num,
                               _atol(atol, num, atol_relative), rtol,
                               strategy=strategy, jacobian=J)  # fmt: skip
            resolve = _one_sided_reverse(p, k, us[k], eps, "reverse", v)
            accept_kinks(check, v.reshape(-1) @ Jp, v.reshape(-1) @ Jm, report, resolve)
            entries_resolve = _one_sided_reverse(p, k, us[k], eps, "entries", v)
            check = _as_entries(p, k, check, (J, Jp, Jm), classes.get(k), entries_resolve) or check
        _classify(check, classes.get(k), k in p.unconnected, name)
        check = confirm(p, k, check, (eps, v, us[k]), classes.get(k), name)
        if check.failure == "value mismatch" and check.kind == "reverse":
            check.detail = _entries_note(p, k, check.jacobian)
        if check.failure == "value mismatch":  # name the mistake when a pattern fits
            at_minus_x = numerical_at_minus_x(p, k, check, eps, v)
            check.pattern = name_mistake(check, p.args[i], at_minus_x, v)
        report.checks.append(check)
    if forward and p.diff:
        _forward_check(p, report, us, ds, atol, rtol, eps)
    if report._sweep is None:
        report._sweep = _sweeper(p, v, g1, us)


def _one_sided_reverse(p, k, u, eps, kind, v):
    """``accept_kinks``'s ``resolve`` for a reverse-mode check (dyᵀJ, or J's diagonal)."""

    def at(h):
        _, Jp, Jm = jacobians(p, k, h, u, directional(p, k, u, h)[0])[0]
        if kind == "entries":
            return np.diag(Jp), np.diag(Jm)
        return v.reshape(-1) @ Jp, v.reshape(-1) @ Jm

    y = np.abs(p.y)
    magnitude = y if kind == "entries" else np.abs(v).reshape(-1) @ y.reshape(-1)
    return one_sided(at, magnitude, eps, machine_eps(p))


def _as_entries(p, k, check, jacobians, dy_class, resolve=None):
    """For elementwise f (a diagonal Jacobian, output shaped like the input) the same check
    in the entries a person expects, ∂y[i]/∂x[i] (analytic: the VJP of ones), instead of
    dyᵀJ for a random dy; None where it does not apply or would reach another verdict (a
    VJP that mixes elements can match on the diagonal and still be wrong)."""
    J, Jp, Jm = jacobians
    x = p.args[p.diff[k]]
    if J.size == 0 or J.shape[0] != J.shape[1] or np.shape(x) != p.y.shape or dy_class:
        return None
    off = ~np.eye(*J.shape, dtype=bool)
    if J[off].any():
        return None
    try:
        ones = p.vjp(np.ones(p.y.shape))[k]
    except GradientError:
        return None
    entries = InputCheck(check.arg, check.label, "entries", check.order, ones,
                         np.diag(J).reshape(np.shape(x)), check.atol, check.rtol,
                         strategy=f"{check.strategy}, the diagonal",
                         jacobian=J)  # fmt: skip
    accept_kinks(entries, np.diag(Jp), np.diag(Jm), SimpleNamespace(notes=[]), resolve)
    if bool(entries.passed_mask.all()) != bool(check.passed_mask.all()):
        return None
    if check.kinks is not None:
        entries.kinks = check.kinks
    return entries


def _entries_note(p, k, J, limit: int = 256) -> str:
    """A failed check of a small Jacobian, in its own entries (the compared values above are
    dyᵀJ for a random dy): the worst three, analytic against numerical; "" when large."""
    if J.size == 0 or J.size > limit:
        return ""
    try:
        rows = [p.vjp(e.reshape(p.y.shape))[k].reshape(-1) for e in np.eye(J.shape[0])]
    except Exception:  # the failure is already recorded; the note is only a help
        return ""
    A = np.stack(rows).astype(np.float64)
    off = ~np.eye(*J.shape, dtype=bool)
    diagonal = J.shape[0] == J.shape[1] and not J[off].any() and not A[off].any()
    pairs = [(i, i) for i in range(J.shape[0])] if diagonal else list(np.ndindex(J.shape))
    worst = sorted(pairs, key=lambda rc: -abs(A[rc] - J[rc]))[:3]
    x_shape = np.shape(p.args[p.diff[k]])

    def at(flat, shape):
        return [int(i) for i in np.unravel_index(flat, shape)]

    text = "; ".join(
        f"∂y{at(r, p.y.shape)}/∂x{at(c, x_shape)}: {A[r, c]:.6g} vs {J[r, c]:.6g}" for r, c in worst
    )
    kind = "diagonal Jacobian entries (elementwise f)" if diagonal else "Jacobian entries"
    return (
        f"(the values above are dyᵀJ for a random dy) worst {kind}, analytic vs numerical: {text}"
    )


def _atol(atol, numerical, relative) -> float:
    return atol * float(np.abs(numerical).max(initial=0)) if relative else atol


def _forward_check(p, report, us, ds, atol, rtol, eps) -> None:
    blind = sorted({n.label for n in p.nodes if n.primitive.kind == "DifferentiableFunction"})
    if blind:  # its jvp is finite differences of forward: comparing it with those tests nothing
        report.notes.append(
            f"forward mode not checked: tv.jvp through {', '.join(blind)} (a "
            "DifferentiableFunction) differentiates its forward by finite differences, so "
            "comparing it with finite differences would test nothing, and not its backward "
            "(which the reverse-mode lines above check)"
        )
        return
    try:
        out = p.jvp(us)
    except NotDifferentiableError as e:  # a gradient with no gradient: jvp cannot run here
        report.notes.append(f"forward mode not checked: core.jvp differentiates the gradient "
                            f"ops, and {str(e).split(';')[0]}")  # fmt: skip
        return
    except Exception as e:  # forward mode is built on double VJP: any failure is a finding
        report.errors.append({"failure": "forward-mode error", "message": f"core.jvp: {e}",
                              "node_id": None})  # fmt: skip
        return
    central, plus, minus = (sum(d[j] for d in ds) for j in range(3))
    check = InputCheck("all", "jvp (forward mode)", "forward", 1, out, central, atol, rtol,
                       strategy="directional")  # fmt: skip

    def at(h):
        return tuple(sum(directional(p, k, u, h)[j] for k, u in enumerate(us)) for j in (1, 2))

    accept_kinks(check, plus, minus, report, one_sided(at, np.abs(p.y), eps, machine_eps(p)))
    if not check.passed_mask.all():  # confirm it as reverse mode does (confirm)
        check = confirm_forward(p, check, us, eps)
    if not check.passed_mask.all():
        check.failure = "forward-mode mismatch"
        check.detail = "J·u from core.jvp differs from the directional finite difference"
    report.checks.append(check)


def _sweeper(p, v, g1, us):
    analytic = float(sum(np.vdot(g, u) for g, u in zip(g1, us)))

    def sweep(eps_values, eps_used):
        errs = []
        for e in eps_values:
            plus, minus = list(p.args), list(p.args)
            for i, u in zip(p.diff, us):
                plus[i], minus[i] = p.args[i] + e * u, p.args[i] - e * u
            num = np.vdot(v, (p.call(plus) - p.call(minus)) / (2 * e))
            errs.append(abs(num - analytic))
        scale = float(np.abs(v).sum() * (np.abs(p.y).max(initial=0) + 1))
        return sweep_verdict(eps_values, np.array(errs), analytic, eps_used, scale)

    return sweep
