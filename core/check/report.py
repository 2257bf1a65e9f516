"""What ``check_grads`` and ``audit`` hand back: plain data a person, a test or a plot reads.

``GradCheckReport.checks`` holds one ``InputCheck`` per comparison (each differentiable
argument in reverse mode, the forward-mode JVP, second-order entries; ``core.check.comparison``
defines it); every field is a numpy array or a plain value, documented there and below, so
tapeviz's GradCheckWidget draws from it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..display import HtmlRepr
from .arguments import describe
from .comparison import FAILURE_CLASSES, InputCheck
from .eps_sweep import EpsSweep, sweep_verdict

__all__ = ["GradCheckReport", "InputCheck", "EpsSweep", "sweep_verdict", "FAILURE_CLASSES"]


@dataclass
class GradCheckReport(HtmlRepr):
    """The result of ``check_grads`` (or one node of ``audit``).

    Attributes:
        function: the checked function's name (or ``"node 12 (Tanh)"``).
        order, mode, eps, atol, rtol: the settings used (``mode`` "full" or "fast").
        checks: the ``InputCheck`` list (``inputs`` is the same list).
        errors: structural failures, each ``{"failure", "message", "node_id"}``.
        notes: sentences for the user (float64 re-run, fast-mode fallback, batching).
    """

    function: str
    order: int
    mode: str
    eps: float
    atol: float
    rtol: float
    checks: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    _sweep: object = field(default=None, repr=False)

    @property
    def inputs(self) -> list:
        return self.checks

    @property
    def passed(self) -> bool:
        return not self.errors and all(c.passed for c in self.checks)

    @property
    def outcome(self) -> str:
        """ "pass", "fail", or "not checkable" (no failure found, but some elements could not
        be judged by finite differences at any step: ``InputCheck.unresolved``)."""
        if not self.passed:
            return "fail"
        return "not checkable" if any(c.n_unresolved for c in self.checks) else "pass"

    @property
    def failures(self) -> list[str]:
        """Every failure class found, in order, without repeats."""
        found = [e["failure"] for e in self.errors]
        found += [c.failure or "value mismatch" for c in self.checks if not c.passed]
        return list(dict.fromkeys(found))

    @property
    def verdicts(self) -> list[str]:
        """What went wrong, in words, in order, without repeats: as ``failures``, but a
        value mismatch that looks like a known mistake is named by it (``InputCheck.verdict``)."""
        found = [e["failure"] for e in self.errors] + [
            c.verdict for c in self.checks if not c.passed
        ]
        return list(dict.fromkeys(found))

    @property
    def failure(self) -> str | None:
        """The first failure class (None when it passed)."""
        return self.failures[0] if self.failures else None

    @property
    def worst(self) -> InputCheck | None:
        """The failing check with the largest excess over tolerance (or the closest call)."""
        cands = [c for c in self.checks if c.abs_err.size]
        if not cands:
            return None
        return max(cands, key=lambda c: (not c.passed, float(np.max(c.abs_err - c.band))))

    def eps_sweep(self, eps=None) -> EpsSweep:
        """Error of the finite difference against eps over many decades (Taylor test).

        Args:
            eps: step sizes (default: 25 values from 1e-12 to 1e0).

        Returns:
            An ``EpsSweep``: plain arrays plus which error dominates and a verdict.
        """
        if self._sweep is None:
            raise ValueError(f"eps_sweep: report of {self.function} holds no function to rerun")
        eps = np.logspace(-12, 0, 25) if eps is None else _steps(eps)
        return self._sweep(eps, self.eps)

    def summary(self) -> str:
        head = {"pass": "PASS", "fail": "FAIL: " + "; ".join(self.verdicts),
                "not checkable": "NOT CHECKABLE at this step (no failure found; "
                f"{sum(c.n_unresolved for c in self.checks)} element(s) no finite difference "
                "can judge)"}[self.outcome]  # fmt: skip
        lines = [f"check_grads({self.function}, order={self.order}, mode={self.mode}): {head}"]
        lines += [f"  {e['failure']}: {e['message']}" for e in self.errors]
        lines += [f"  {c.line()}" for c in self.checks]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    __str__ = summary

    def headline(self) -> str:
        """One line: ``passed: check_grads(f): 2 checks, worst abs err 3e-10 (band 1e-05)``
        (``FAILED: ...`` and the verdicts when it failed)."""
        checked = [c for c in self.checks if c.abs_err.size]
        worst = self.worst
        tail = ""
        if worst is not None and worst.abs_err.size:
            i = worst.worst_index
            band = np.broadcast_to(worst.band, worst.abs_err.shape)[i]
            tail = f", worst abs err {worst.abs_err[i]:.2g} (band {band:.2g})"
        head = {"pass": "passed", "fail": "FAILED", "not checkable": "NOT CHECKABLE"}[self.outcome]
        what = "" if self.passed else ": " + "; ".join(self.verdicts)
        if self.outcome == "not checkable":  # no failure found; some elements unjudged
            what = f": {sum(c.n_unresolved for c in self.checks)} element(s) no step can judge"
        return f"{head}: check_grads({self.function}): {len(checked)} checks{tail}{what}"

    def to_dict(self) -> dict:
        """Everything as JSON-able plain data (for widgets and saved notebooks)."""
        return {
            "function": self.function,
            "passed": self.passed,
            "outcome": self.outcome,
            "failures": self.failures,
            "verdicts": self.verdicts,
            "order": self.order,
            "mode": self.mode,
            "eps": self.eps,
            "atol": self.atol,
            "rtol": self.rtol,
            "errors": list(self.errors),
            "notes": list(self.notes),
            "checks": [c.to_dict() for c in self.checks],
        }


def _steps(eps) -> np.ndarray:
    """``eps_sweep``'s steps: positive finite numbers, sorted."""
    try:
        arr = np.asarray(eps, float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(
            f"eps_sweep: eps must be step sizes (numbers), got {describe(eps)}"
        ) from None
    if isinstance(eps, (str, bytes)) or not arr.size or not np.all(np.isfinite(arr) & (arr > 0)):
        raise ValueError(f"eps_sweep: eps must be positive finite step sizes, got {eps!r}")
    return np.sort(arr)
