"""Numbers behind the gradient-check widget: the check, the epsilon sweep, 1-D curves, and
the failure class in words. All in float64, on top of ``core.check.gradcheck``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tapeviz.core.autodiff.tape import Tape
from tapeviz.core.check.gradcheck import FAILURE_CLASSES, check_grads
from tapeviz.core.tensors.recording import no_grad
from tapeviz.core.tensors.tensor import Tensor


def run_check(f, args, eps, atol, rtol):
    """``check_grads`` in reverse mode that returns the report instead of raising."""
    return check_grads(
        f, *args, eps=eps, atol=atol, rtol=rtol, forward=False, raise_on_failure=False
    )


def reverse_check(report, arg):
    """The reverse-mode ``InputCheck`` of argument ``arg`` (None if the check did not run)."""
    for c in report.checks:
        if c.arg == arg and c.kind in ("reverse", "entries"):
            return c
    return None


def _wrap(args):
    """Floating arrays as Tensors; every other argument as given (as ``check_grads``)."""
    return [Tensor(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]


def analytic_vjp(f, args, index, dy):
    """Reverse-mode ``dy . df/dargs[index]`` in float64."""
    xs = _wrap(args)
    with Tape() as tape:
        tape.watch([x for x in xs if isinstance(x, Tensor)])
        y = f(*xs)
    (g,) = tape.gradient(
        y,
        [xs[index]],
        output_gradients=Tensor(np.asarray(dy, y.dtype)),
        unconnected_gradients="zero",
    )
    return g.numpy().astype(np.float64)


def _value(f, args):
    with no_grad():
        out = f(*_wrap(args))
    return out.numpy().astype(np.float64) if isinstance(out, Tensor) else np.asarray(out)


def derivative_curve(f, args, index, lo, hi, eps, n=41):
    """For a scalar f of a scalar argument: xs, f(xs), custom f'(xs), numerical f'(xs).

    Points where f (or its gradient) raises are NaN, so a function defined on part of the
    range still draws there.
    """
    xs = np.linspace(lo, hi, n)
    out = np.full((3, n), np.nan)
    for k, x in enumerate(xs):
        try:
            out[:, k] = _curve_point(f, args, index, x, eps)
        except Exception:  # outside f's domain: leave a gap in the curve
            continue
    return xs, out[0], out[1], out[2]


def _curve_point(f, args, index, x, eps):
    shape = np.shape(args[index])
    a = list(args)
    a[index] = np.full(shape, x)
    y = _value(f, a)
    custom = float(analytic_vjp(f, a, index, np.ones(y.shape)).reshape(-1)[0])
    a[index] = np.full(shape, x + eps)
    up = float(_value(f, a).reshape(-1)[0])
    a[index] = np.full(shape, x - eps)
    numeric = (up - float(_value(f, a).reshape(-1)[0])) / (2 * eps)
    return float(y.reshape(-1)[0]), custom, numeric


def failure_words(report, check) -> str:
    """The failure class in words: the checker's class plus the pattern of the mismatch."""
    if report.errors:
        e = report.errors[0]
        return f"{e['failure']}: {e['message']}"
    if check is not None and check.passed and check.n_unresolved:
        return check.resolution  # not checkable at this step, and why
    if check is None or check.passed:
        return "gradient matches finite differences"
    if check.pattern:  # the mistake a value mismatch looks like (core.check.mistakes)
        return check.pattern
    cls = check.failure or "value mismatch"
    words = f"{cls}: {FAILURE_CLASSES.get(cls, '')}"
    extra = pattern(check) if cls == "value mismatch" else check.detail
    return f"{words}; {extra}" if extra else words


def pattern(check) -> str:
    """Where a value mismatch no named mistake fits (``core.check.mistakes`` names the sign,
    a factor, an offset, a branch, the gradient at -x, a transpose) is: how many entries."""
    a, n, ok = check.analytic, check.numerical, check.passed_mask
    if not np.isfinite(n).all():
        return "f is not finite near this point (numerical gradient is NaN or Inf)"
    if not np.isfinite(a).all():
        return "the custom gradient has NaN or Inf"
    bad = int((~ok).sum())
    if ok.size > 1 and bad <= max(1, ok.size // 5):
        return f"wrong at {bad} of {ok.size} entries: a kink, or an indexing bug"
    return f"wrong at {bad} of {ok.size} entries"


def worst_entries(check, k=5):
    """The k entries furthest outside the tolerance: (index, analytic, numerical, abs_err, ok)."""
    return [
        (w["index"], w["analytic"], w["numerical"], w["abs_err"], w["passed"])
        for w in check.worst_elements(k)
    ]


def jacobian_entries(f, args, index, check, k=5, limit=256):
    """For a small Jacobian, its entries themselves (a student expects f'(3) = 0.0625, not a
    random dy times it): ``(kind, rows)`` with kind ``"diagonal"`` (an elementwise function:
    only ∂y[i]/∂x[i]) or ``"jacobian"``, rows ``(label, analytic, numerical, abs_err, ok)``
    for the k entries furthest outside the tolerance. The analytic entries take one backward
    pass per output entry. None when the Jacobian has more than ``limit`` entries or was
    not computed (the table then shows entries of dyᵀJ)."""
    J = check.jacobian
    if J is None or J.size == 0 or J.size > limit:
        return None
    y_shape, x_shape = _value(f, args).shape, np.shape(args[index])
    A = np.stack([analytic_vjp(f, args, index, e.reshape(y_shape)).reshape(-1)
                  for e in np.eye(J.shape[0])])  # fmt: skip
    off = ~np.eye(*J.shape, dtype=bool)
    diagonal = J.shape[0] == J.shape[1] and not J[off].any() and not A[off].any()
    pairs = [(i, i) for i in range(J.shape[0])] if diagonal else list(np.ndindex(J.shape))
    rows = []
    for r, c in pairs:
        a, n = float(A[r, c]), float(J[r, c])
        err, band = abs(a - n), check.atol + check.rtol * abs(n)
        label = f"∂y{_idx(r, y_shape)}/∂x{_idx(c, x_shape)}"
        rows.append((err - band, (label, a, n, err, err <= band)))
    rows.sort(key=lambda t: -t[0])
    return ("diagonal" if diagonal else "jacobian"), [row for _, row in rows[:k]]


def _idx(flat, shape) -> str:
    return str([int(i) for i in np.unravel_index(flat, shape)]) if shape else ""


SWEEP_EPS = np.logspace(-12, -1, 23)


@dataclass
class Check:
    """One gradient check at slider position (``point``, ``eps``): what the views show."""

    point: float
    eps: float
    args: list
    report: object = None
    check: object = None
    sweep: object = None
    sweep_error: Exception | None = None
    error: Exception | None = None


def check_position(f, args, arg: int, point: float, eps: float, atol, rtol) -> Check:
    """The check (report, reverse-mode check, eps sweep) of ``f`` at ``args``: the arguments
    at slider position ``point``; ``arg`` is the argument checked."""
    c = Check(point=point, eps=eps, args=args)
    try:
        c.report = run_check(f, args, eps, atol, rtol)
        c.check = reverse_check(c.report, arg)
    except Exception as e:
        c.error = e
        return c
    if c.check is not None:
        try:
            c.sweep = c.report.eps_sweep(SWEEP_EPS)
        except Exception as e:  # f undefined at x +- eps for the larger eps
            c.sweep_error = e
    return c
