"""Reverse mode refused for a while: a grader's rule that an answer is written by hand.

Inside ``refuse_reverse_mode(reason)``, every way into the engine's reverse mode raises
``AutodiffRefusedError`` with ``reason``: ``Tape.gradient`` and everything built on it
(``grad``, ``grads``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``Optimizer.minimize``, a compiled layer's gradient) and a ``tv.jit`` program that holds a
backward pass. The caller that sets the rule may still start one pass of its own:
``allow_next_pass()`` lets the next ``Tape.gradient`` *not nested in another pass* run; the
gradient functions that pass calls (a student's) run nested, so their own reverse mode is
refused. A grader uses it to call a student's gradient through the engine while the
student's gradient may not ask the engine for the answer.

It is a rule of the engine, not a wall: code in the same process can undo it (see
docs/course.md, "What grading protects").

Example:
    >>> import tapeviz as tv
    >>> with tv.refuse_reverse_mode("write it by hand"):
    ...     tv.grad(lambda x: x * x)(tv.tensor(3.0))
    Traceback (most recent call last):
    ...
    tapeviz.core.autodiff.refusal.AutodiffRefusedError: reverse mode (tape.gradient, tv.grad, ...) is not allowed here: write it by hand
"""

from __future__ import annotations

import contextlib

__all__ = [
    "AutodiffRefusedError",
    "allow_next_pass",
    "check_reverse_mode",
    "refuse_reverse_mode",
    "reverse_mode_refused",
    "reverse_pass",
]

# reason: why reverse mode is refused (None: allowed); passes: top-level passes still
# allowed; depth: reverse passes running now (a gradient function runs at depth >= 1)
_STATE = {"reason": None, "passes": 0, "depth": 0}


class AutodiffRefusedError(RuntimeError):
    """Reverse mode was asked for inside ``refuse_reverse_mode``."""


@contextlib.contextmanager
def refuse_reverse_mode(reason: str):
    """While in the block, the engine refuses reverse mode, saying ``reason``."""
    if not isinstance(reason, str) or not reason:
        raise TypeError(f"refuse_reverse_mode: expected a reason (a str), got {reason!r}")
    saved = dict(_STATE)
    _STATE.update(reason=reason, passes=0)
    try:
        yield
    finally:
        _STATE.update(reason=saved["reason"], passes=saved["passes"])


def reverse_mode_refused() -> str | None:
    """The reason reverse mode is refused now, or None when it is allowed."""
    return _STATE["reason"]


def allow_next_pass() -> None:
    """Inside ``refuse_reverse_mode``: the next ``Tape.gradient`` that is not nested in
    another reverse pass may run (once)."""
    if _STATE["reason"] is None:
        raise RuntimeError("allow_next_pass: reverse mode is not refused here")
    _STATE["passes"] = 1


def check_reverse_mode(api: str) -> None:
    """Raise ``AutodiffRefusedError`` naming ``api`` if reverse mode is refused here."""
    reason = _STATE["reason"]
    if reason is None:
        return
    if _STATE["depth"] == 0 and _STATE["passes"] > 0:
        _STATE["passes"] -= 1
        return
    raise AutodiffRefusedError(f"reverse mode ({api}) is not allowed here: {reason}")


@contextlib.contextmanager
def reverse_pass(api: str = "tape.gradient, tv.grad, ..."):
    """The engine's reverse pass runs in this block (checked first, then counted)."""
    check_reverse_mode(api)
    _STATE["depth"] += 1
    try:
        yield
    finally:
        _STATE["depth"] -= 1
