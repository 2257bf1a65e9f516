"""Kinks: where f is not differentiable, the central difference is the mean of the two
one-sided derivatives, and an analytic value between them (relu'(0) = 0, max splitting a tie)
is a valid subgradient, accepted.

A difference of the one-sided derivatives is a kink only when it is real: larger than their
rounding noise (``sum(1e10 + 0.01 x²)`` at step 1e-6 has one-sided derivatives of about ±2,
pure rounding, and accepting any value between them hid a wrong gradient too), and still
there at a smaller step (``linalg.norm`` at ``[1e-9, 2e-9]`` looks like ``|x|`` at step 1e-6
but is smooth at step 1e-14). Where either test says "not a kink", the element is left to
``confirm`` (which tries many steps)."""

from __future__ import annotations

import numpy as np

__all__ = ["accept_kinks", "one_sided"]

_ROUNDING = 8.0  # as core/check/steps.py
_SMALLER = (1e-3, 1e-6, 1e-8)  # the smaller steps tried, as fractions of eps


def accept_kinks(check, plus, minus, report, resolve=None) -> None:
    """Accept the elements of a failing ``check`` where f has a real kink and the analytic
    value lies between the one-sided derivatives ``plus`` and ``minus`` (the check's line
    says so). ``resolve(h) -> (plus, minus, noise)`` gives them at a smaller step, and their
    rounding noise; without it only the values at eps are used."""
    if check.passed_mask.all():
        return
    shape = check.analytic.shape
    plus, minus = plus.reshape(shape), minus.reshape(shape)
    band = 10 * check.band
    noise = 0.0 if resolve is None else resolve(None)[2]
    kink = np.abs(plus - minus) > band + noise
    lo, hi = np.minimum(plus, minus) - band, np.maximum(plus, minus) + band
    side = (check.analytic >= lo) & (check.analytic <= hi)
    ok = kink & side & ~check.passed_mask
    if ok.any() and resolve is not None:
        smooth = _smooth_below(resolve, ok, check.band)
        kink, ok = kink & ~smooth, ok & ~smooth
    if ok.any():  # the check's line says so (InputCheck.line)
        check.kinks = kink
        check.passed_mask = check.passed_mask | ok


def _smooth_below(resolve, candidates, band) -> np.ndarray:
    """Candidates whose one-sided derivatives agree (within the band, above their noise) at
    some smaller step: f is smooth there, so not a kink."""
    smooth = np.zeros(candidates.shape, bool)
    for fraction in _SMALLER:
        try:
            with np.errstate(all="ignore"):
                plus, minus, noise = resolve(fraction)
        except Exception:  # a second opinion only: the first stands
            break
        plus, minus = plus.reshape(candidates.shape), minus.reshape(candidates.shape)
        agree = (np.abs(plus - minus) <= band) & (noise <= band)
        smooth |= candidates & agree
        if smooth[candidates].all():
            break
    return smooth


def one_sided(values_at, magnitude, eps, eps_machine):
    """``resolve`` for ``accept_kinks``: ``fraction -> (plus, minus, noise)`` at step
    ``eps * fraction`` (None: at eps), from ``values_at(h) -> (plus, minus)``."""

    def resolve(fraction):
        h = eps if fraction is None else eps * fraction
        plus, minus = values_at(h) if fraction is not None else (None, None)
        return plus, minus, _ROUNDING * eps_machine * np.abs(magnitude) / h

    return resolve
