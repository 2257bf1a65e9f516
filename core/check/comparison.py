"""One comparison of analytic against numerical derivatives (``InputCheck``) and the
failure classes a check can end in (``FAILURE_CLASSES``); ``GradCheckReport`` (report.py)
holds a list of them. Every field is a numpy array or a plain value."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["InputCheck", "FAILURE_CLASSES"]

#: failure class -> what it means, in words (shown in the report and on the audit graph)
FAILURE_CLASSES = {
    "value mismatch": "the analytic gradient differs from finite differences",
    "ignores input": "the analytic gradient is zero where finite differences are not "
    "(the gradient ignores this input, or f escapes the tape)",
    "not scaled by dy": "scaling dy by 2 does not scale the gradient by 2 (dy is ignored)",
    "nondeterministic backward": "two backward passes with the same dy disagree "
    "(non-reentrant or nondeterministic gradient)",
    "wrong shape": "a gradient function returned a gradient of the wrong shape",
    "wrong dtype": "a gradient function returned a gradient of the wrong dtype",
    "missing gradient": "a kernel on the path has no registered gradient",
    "invalid gradient": "a gradient function returned something that is not a gradient",
    "forward-mode mismatch": "forward mode (core.jvp) disagrees with finite differences",
    "forward-mode error": "forward mode (core.jvp) raised",
}


@dataclass
class InputCheck:
    """One comparison of analytic against numerical derivatives.

    Attributes:
        arg: the argument index (``(i, j)`` at order 2: d/d arg j of the gradient of arg i;
            ``"all"`` for the joint forward-mode check; the input name for audit nodes).
        label: how the report names it, e.g. ``"arg 0"``.
        kind: ``"reverse"`` (dyᵀJ for a random dy, input-shaped), ``"entries"`` (for
            elementwise f, the diagonal entries ∂y[i]/∂x[i], input-shaped), ``"projection"``
            (fast mode vᵀJu, 0-d) or ``"forward"`` (J·u from core.jvp, output-shaped).
        order: 1 or 2.
        analytic, numerical: the compared values (same shape).
        abs_err, rel_err: ``|analytic - numerical|`` and that over ``|numerical|``.
        passed_mask: ``abs_err <= atol + rtol * |numerical|`` elementwise; also true where
            both sides are the same infinity, and where the numerical side is not finite
            (``unchecked``: f is not finite around the point, so finite differences cannot
            judge it: a domain edge such as sqrt at 0, a pole, a NaN input).
        atol, rtol: the tolerances; ``band`` is the tolerance per element.
        failure: the failure class (a key of ``FAILURE_CLASSES``) or None.
        detail: one sentence on the failure.
        strategy: how the numerical side was computed ("batched replay", "batched call",
            "per element", "directional").
        jacobian: the numerical Jacobian ``(output size, input size)`` when computed, else None.
        kinks: where the one-sided derivatives differ (a non-differentiable point), when a
            mismatch there was accepted because the analytic value equals one side; else None.
        unresolved: where no finite difference, at any step, is accurate enough to judge the
            analytic value (``core/check/steps.py``): not checkable at this step, neither
            pass nor fail (counted in ``passed_mask``, said in the line); else None.
        pattern: for a value mismatch, the mistake it looks like in one sentence (the sign,
            a factor, the gradient at -x; ``core.check.mistakes``), else "".
    """

    arg: object
    label: str
    kind: str
    order: int
    analytic: np.ndarray
    numerical: np.ndarray
    atol: float
    rtol: float
    failure: str | None = None
    detail: str = ""
    strategy: str = ""
    jacobian: np.ndarray | None = None
    kinks: np.ndarray | None = None
    confirmed: str = ""  # how a first failure was re-examined (``confirm`` in confirm.py)
    unresolved: np.ndarray | None = None
    resolution: str = ""  # why the unresolved elements could not be judged, with numbers
    pattern: str = ""  # the mistake a value mismatch looks like (``check.mistakes``), or ""
    abs_err: np.ndarray = field(init=False)
    rel_err: np.ndarray = field(init=False)
    passed_mask: np.ndarray = field(init=False)
    unchecked: np.ndarray = field(init=False)

    def __post_init__(self):
        self.analytic = np.asarray(self.analytic, dtype=np.float64)
        self.numerical = np.asarray(self.numerical, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            same = self.analytic == self.numerical  # the same infinity counts as equal
            diff = self.analytic - self.numerical
        self.abs_err = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, np.abs(diff)))
        self.rel_err = self.abs_err / np.maximum(np.abs(self.numerical), 1e-300)
        self.unchecked = ~np.isfinite(self.numerical)
        with np.errstate(invalid="ignore"):
            self.passed_mask = (self.abs_err <= self.band) | self.unchecked

    @property
    def band(self) -> np.ndarray:
        """The tolerance of each element: ``atol + rtol * |numerical|``."""
        return self.atol + self.rtol * np.abs(self.numerical)

    @property
    def passed(self) -> bool:
        return self.failure is None and bool(self.passed_mask.all())

    @property
    def verdict(self) -> str:
        """What went wrong in words: the pattern when one fits, else the failure class
        ("value mismatch" only when no pattern does); "" when it passed."""
        if self.passed:
            return ""
        return self.pattern or self.failure or "value mismatch"

    @property
    def worst_index(self) -> tuple:
        """Index of the element furthest outside (or least inside) its tolerance band."""
        if self.abs_err.size == 0:
            return ()
        excess = self.abs_err - self.band
        return tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), excess.shape))

    def worst_elements(self, k: int = 5) -> list[dict]:
        """The ``k`` elements furthest outside their band, each a dict of plain values."""
        excess = (self.abs_err - self.band).reshape(-1)
        order = np.argsort(-excess, kind="stable")[:k]
        rows = []
        for flat in order:
            idx = tuple(int(i) for i in np.unravel_index(int(flat), self.abs_err.shape))
            rows.append(
                {
                    "index": idx,
                    "analytic": float(self.analytic[idx]),
                    "numerical": float(self.numerical[idx]),
                    "abs_err": float(self.abs_err[idx]),
                    "band": float(self.band[idx]),
                    "passed": bool(self.passed_mask[idx]),
                }
            )
        return rows

    def to_dict(self) -> dict:
        """JSON-able plain data (lists) for widgets."""
        worst = self.worst_elements(1)
        return {
            "arg": self.arg if isinstance(self.arg, (int, str)) else list(self.arg),
            "label": self.label,
            "kind": self.kind,
            "order": self.order,
            "passed": self.passed,
            "failure": self.failure,
            "failure_words": FAILURE_CLASSES.get(self.failure, ""),
            "detail": self.detail,
            "strategy": self.strategy,
            "shape": list(self.analytic.shape),
            "analytic": self.analytic.tolist(),
            "numerical": self.numerical.tolist(),
            "abs_err": self.abs_err.tolist(),
            "rel_err": self.rel_err.tolist(),
            "band": np.broadcast_to(self.band, self.abs_err.shape).tolist(),
            "passed_mask": self.passed_mask.tolist(),
            "unchecked": self.unchecked.tolist(),
            "unresolved": None if self.unresolved is None else self.unresolved.tolist(),
            "resolution": self.resolution,
            "compared": self.compared,
            "confirmed": self.confirmed,
            "pattern": self.pattern,
            "verdict": self.verdict,
            "worst": worst[0] if worst else None,
        }

    @property
    def compared(self) -> str:
        """What this check compared, in words (the report says it for every line)."""
        return {
            "reverse": "reverse mode dyᵀJ for a random dy vs central differences",
            "entries": "reverse mode ∂y[i]/∂x[i] (elementwise f) vs central differences",
            "projection": "reverse mode vᵀJu for random v, u vs a directional difference",
            "forward": "forward mode J·u for a random u vs a directional difference",
        }.get(self.kind, self.kind)

    @property
    def n_unresolved(self) -> int:
        """How many elements no step could judge (not checkable at this step)."""
        return 0 if self.unresolved is None else int(self.unresolved.sum())

    def line(self) -> str:
        status = "PASS" if self.passed else f"FAIL ({self.verdict})"
        if self.passed and self.n_unresolved:
            status = f"NOT CHECKABLE at this step ({self.n_unresolved} of {self.unresolved.size})"
        head = f"{self.label} [{self.compared}]"
        if self.abs_err.size == 0:
            return f"{head}: {status}: nothing to compare"
        kink = np.zeros(self.abs_err.shape, bool) if self.kinks is None else self.kinks
        smooth = ~kink & ~self.unchecked  # the elements judged by the band
        if self.unresolved is not None:
            smooth &= ~self.unresolved
        w = self._worst(smooth | ~self.passed_mask)
        bad = int((~self.passed_mask).sum())
        parts = [f"{head}: {status}"]
        if w is not None:
            parts.append(
                f"worst at {w['index']}: analytic {w['analytic']:.6g} vs numerical "
                f"{w['numerical']:.6g} (abs err {w['abs_err']:.3g}, band {w['band']:.3g}); "
                f"{bad} of {self.passed_mask.size} outside tolerance"
            )
        n_kink, n_un = int(kink.sum()), int(self.unchecked.sum())
        if n_kink:
            parts.append(
                f"{n_kink} element(s) on a kink, where the one-sided derivatives differ and "
                "the central difference is their mean: the analytic value equals one side "
                "(a valid subgradient), not compared with the central difference"
            )
        if n_un:
            parts.append(
                f"{n_un} element(s) not checkable: f is not finite, or jumps, next to the "
                "point (a domain edge such as sqrt at 0, a pole, a discontinuity such as the "
                "gradient of max at a tie), so finite differences say nothing there"
            )
        if self.resolution:
            parts.append(self.resolution)
        text = "; ".join(parts[:2]) + "".join(f". {p[0].upper()}{p[1:]}" for p in parts[2:])
        text += f". {self.confirmed}" if self.confirmed else ""
        return text + (f". {self.detail}" if self.detail else "")

    def _worst(self, mask) -> dict | None:
        """The worst element among ``mask`` (None when it selects nothing)."""
        if not mask.any():
            return None
        excess = np.where(mask, self.abs_err - self.band, -np.inf).reshape(-1)
        flat = int(np.argmax(excess))
        idx = tuple(int(i) for i in np.unravel_index(flat, self.abs_err.shape))
        return {"index": idx, "analytic": float(self.analytic[idx]),
                "numerical": float(self.numerical[idx]), "abs_err": float(self.abs_err[idx]),
                "band": float(np.broadcast_to(self.band, self.abs_err.shape)[idx])}  # fmt: skip
