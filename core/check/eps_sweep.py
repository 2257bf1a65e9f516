"""The epsilon sweep (a Taylor test): finite-difference error against the step size.

Central differences have truncation error ~eps² (slope 2 on a log-log plot) and rounding
error ~machine eps/eps (slope -1). A wrong gradient shows neither: the error stays flat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EpsSweep", "sweep_verdict"]


@dataclass
class EpsSweep:
    """Finite-difference error against epsilon (a Taylor test), ready to plot log-log.

    Attributes:
        eps: the step sizes, increasing.
        error: ``|numerical(eps) - analytic|`` of the projection ``vᵀJu``.
        analytic: the analytic projection the error is measured against.
        truncation_line, rounding_line: reference lines (slope 2 and slope -1).
        slope_truncation, slope_rounding: fitted log-log slopes right and left of the best eps.
        best_eps: the eps of the smallest error; eps_used: the eps the check used.
        dominant: what dominates at eps_used: ``"truncation"`` or ``"rounding"``.
        verdict: one sentence for a person.
        wrong: the error stays flat instead of falling: no step size fixes it, the analytic
            gradient is wrong (then ``best_eps`` is only the lowest point of a flat, noisy
            curve, not a step to use, and there is no rounding region to mark).
    """

    eps: np.ndarray
    error: np.ndarray
    analytic: float
    truncation_line: np.ndarray
    rounding_line: np.ndarray
    slope_truncation: float
    slope_rounding: float
    best_eps: float
    eps_used: float
    dominant: str
    verdict: str
    wrong: bool = False

    def to_dict(self) -> dict:
        return {
            k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()
        }


def _slope(eps, err) -> float:
    ok = err > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log10(eps[ok]), np.log10(err[ok]), 1)[0])


def sweep_verdict(eps, error, analytic, eps_used, scale) -> EpsSweep:
    """Fit the two regimes of ``error(eps)`` and say which dominates (see ``EpsSweep``)."""
    eps, error = np.asarray(eps, float), np.asarray(error, float)
    best = int(np.argmin(error))
    right, left = slice(best, None), slice(0, best + 1)
    s_trunc, s_round = _slope(eps[right], error[right]), _slope(eps[left], error[left])
    rounding = np.finfo(np.float64).eps * max(scale, 1e-300) / eps
    anchor = len(eps) - 1
    trunc = error[anchor] * (eps / eps[anchor]) ** 2
    mid = (eps >= 1e-9) & (eps <= 1e-3)
    floor = float(np.median(error[mid] if mid.any() else error))
    wrong = floor > 1e-4 * max(abs(analytic), 1.0)
    if wrong:
        verdict = (
            f"the error stays near {floor:.3g} from eps 1e-9 to 1e-3 instead of falling as "
            "eps² (slope 2): no step size fixes it, so the analytic gradient is wrong"
        )
    elif best == len(eps) - 1 or error[-1] <= 1e-9 * max(abs(analytic), 1.0):
        verdict = (
            "rounding error dominates at every eps: f is locally linear or quadratic, so "
            "central differences have no truncation error; larger eps is safe"
        )
    else:
        verdict = (
            f"healthy: truncation error falls with slope {s_trunc:.1f} (2 expected for "
            f"central differences) down to eps ≈ {eps[best]:.1g}; below it rounding error "
            f"rises (slope {s_round:.1f}, -1 expected)"
        )
        if 0.5 < s_trunc < 1.5:  # NOTE: a kink, not a wrong gradient (the error still falls)
            verdict += (
                f". Slope {s_trunc:.1f}, not 2: f is not smooth at this point (a kink such as "
                "|x| at 0 in f or in its derivative) so central differences are only first "
                "order there; the error still falls with eps, so the gradient agrees"
            )
    dominant = "truncation" if eps_used > eps[best] else "rounding"
    return EpsSweep(
        eps, error, float(analytic), trunc, rounding, s_trunc, s_round,
        float(eps[best]), float(eps_used), dominant, verdict, bool(wrong),
    )  # fmt: skip
