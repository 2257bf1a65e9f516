"""Helpers for the assignments' tests: a gradient by the engine, the same by nudging, and an
assertion that names the pattern of a mismatch (``patterns.describe``) when they differ.

They hold no answers: the public tests compare a student's gradient with central
differences of the forward pass the student's op computes (the nudge of notebook 00); the
hidden tests, kept with the instructor's sources, compare with references of their own.

Example:
    >>> import numpy as np, tapeviz as tv
    >>> x = np.array([-1.0, 0.5, 2.0])
    >>> expect_close(derivative(tv.tanh, x), nudged_derivative(tv.tanh, x), "tanh'")
"""

from __future__ import annotations

import numpy as np

import tapeviz.core as core

from .patterns import describe

__all__ = [
    "RULE",
    "attempt",
    "derivative",
    "expect_close",
    "nudged_derivative",
    "second_derivative",
]

# what a student's gradient is told when it asks the engine for the answer (core.refusal)
RULE = "this gradient is being checked: derive it and write it yourself"


def attempt(what: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; an exception becomes an AssertionError that says ``what`` was
    being computed (a grader's message, instead of a traceback into the engine)."""
    try:
        return fn(*args, **kwargs)
    except AssertionError:
        raise
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else ""
        raise AssertionError(f"{what} raised {type(e).__name__}: {first}") from None


def derivative(op, x, dy=None) -> np.ndarray:
    """The engine's ``dy · ∂op(x)/∂x`` (reverse mode; ``dy`` defaults to ones), in float64.

    The gradients the engine calls on the way (a student's) may not use reverse mode
    themselves (``RULE``): only this function's own pass may run."""
    t = core.tensor(np.asarray(x, np.float64))
    with core.refuse_reverse_mode(RULE):
        with core.Tape() as tape:
            tape.watch(t)
            y = op(t)
        dy = np.ones(np.shape(y.numpy())) if dy is None else dy
        seed = core.tensor(np.asarray(dy, np.float64))
        core.allow_next_pass()
        (g,) = tape.gradient(y, [t], output_gradients=seed, unconnected_gradients="zero")
    return np.asarray(g.numpy(), np.float64)


def nudged_derivative(op, x, eps: float = 1e-6) -> np.ndarray:
    """∂op(x)/∂x of an *elementwise* op by central differences of its forward pass."""
    x = np.asarray(x, np.float64)
    with core.no_grad():
        up = op(core.tensor(x + eps)).numpy()
        down = op(core.tensor(x - eps)).numpy()
    return (np.asarray(up, np.float64) - np.asarray(down, np.float64)) / (2 * eps)


def second_derivative(op, x) -> np.ndarray:
    """∂²op(x)/∂x² of an elementwise op: the engine differentiating its own gradient (the
    gradients it calls may not use reverse mode themselves, as in ``derivative``)."""
    t = core.tensor(np.asarray(x, np.float64))
    ones = core.tensor(np.ones(np.shape(x)))
    with core.refuse_reverse_mode(RULE):
        with core.Tape() as outer:
            outer.watch(t)
            with core.Tape() as inner:
                inner.watch(t)
                y = op(t)
            core.allow_next_pass()
            (g,) = inner.gradient(y, [t], output_gradients=ones, unconnected_gradients="zero")
        core.allow_next_pass()
        (h,) = outer.gradient(g, [t], output_gradients=ones, unconnected_gradients="zero")
    return np.asarray(h.numpy(), float)


def expect_close(got, want, what: str, *, where=None, rtol=1e-5, atol=1e-7) -> None:
    """Raise ``AssertionError("<what>: <pattern>")`` unless ``got`` matches ``want``.

    Args:
        got: the student's numbers. want: what they are compared with (never printed).
        what: the quantity, e.g. ``"softsign'(x)"``.
        where: ``{condition in words: mask}`` for "right except where …".
        rtol, atol: the tolerance (``numpy.isclose``).
    """
    words = describe(got, want, where=where, rtol=rtol, atol=atol)
    if words is not None:
        raise AssertionError(f"{what}: {words}")
