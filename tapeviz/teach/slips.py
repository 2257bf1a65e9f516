"""The classic slips of a hand-written backward pass, named in the public checks before a
student submits — in words that say what is wrong, never what to write instead.

A public check compares the student's gradient with central differences of the forward pass
(``numerical_vjp``) at a *random* upstream gradient ``dout`` (a check seeded with ones cannot
see "dout not multiplied in"), and ``expect_gradient`` first tries the slips it is given —
``{sentence: what that slip computes}``, e.g. the same nudge with ``dout`` = ones — then
falls back on ``patterns.describe`` (the sign, a factor, wrong only where x < 0, the shape).
``answer`` runs the student's code and turns the engine's errors into the student's mistake:
a float32 gradient of a float64 input is a gradient made of constants only (dout left out),
and a gradient of the wrong shape is named by its shape, without the engine's hint.

Example:
    >>> import numpy as np
    >>> x, dout = np.array([1.0, -2.0, 3.0]), np.array([0.5, 2.0, -1.0])
    >>> want = numerical_vjp(lambda x: x**2, [x], dout, 0)
    >>> expect_gradient(2 * x * dout, want, "dx")
    >>> try:
    ...     expect_gradient(2 * x, want, "dx", slips={DOUT_LEFT_OUT: want / dout})
    ... except AssertionError as e:
    ...     print(e)
    dx: dout, the gradient arriving from above, is not multiplied in
"""

from __future__ import annotations

import re

import numpy as np

from .patterns import PATTERNS, describe

__all__ = [
    "DOUT_LEFT_OUT",
    "answer",
    "expect_gradient",
    "expect_returns",
    "explain_error",
    "name_slip",
    "numerical_vjp",
]

DOUT_LEFT_OUT = "dout, the gradient arriving from above, is not multiplied in"
CONSTANTS_ONLY = (
    "the gradient for input {input!r} is made of constants only (a float32 tensor, where the "
    "input is float64): is dy, the gradient arriving, multiplied in?"
)
SHAPE = (
    "the gradient of {input} has shape {got}, but {input} has shape {want}: each input "
    "receives a gradient of its own shape"
)

_DTYPE = re.compile(r"for input '?(\w+)'?.*expected dtype (float64), got (float32)")
_SHAPE = re.compile(r"for input (?:\d+ )?\(?'?(\w+)'?\)?: expected shape (\(.*?\)), got (\(.*?\))")


def explain_error(error: BaseException) -> str:
    """The student's mistake behind an engine error, in words without the fix; else the
    error's first line."""
    text = str(error)
    dtype = _DTYPE.search(text)
    if dtype:
        return CONSTANTS_ONLY.format(input=dtype[1])
    shape = _SHAPE.search(text)
    if shape:
        return SHAPE.format(input=shape[1], want=shape[2], got=shape[3])
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}"


def answer(what: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; an exception becomes an AssertionError that names ``what``
    and the student's mistake (``explain_error``), never the engine's suggested fix."""
    try:
        return fn(*args, **kwargs)
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"{what}: {explain_error(e)}") from None


def expect_returns(result, names: list, what: str) -> list:
    """``result`` as a list of ``len(names)`` values; else an AssertionError that says what
    ``what`` returned instead (``None``: the placeholder is still there)."""
    if result is None or result is ...:
        raise AssertionError(f"{what}: {PATTERNS['placeholder']} (it returned {result!r})")
    if len(names) == 1:
        return [result]
    if not isinstance(result, (tuple, list)) or len(result) != len(names):
        size = len(result) if isinstance(result, (tuple, list)) else "one"
        raise AssertionError(
            f"{what}: expected {len(names)} results ({', '.join(names)}), "
            f"got {size} {type(result).__name__}"
        )
    return list(result)


def numerical_vjp(f, args, dout, i: int, eps: float = 1e-6) -> np.ndarray:
    """``Σ dout · ∂f(*args)/∂args[i]`` by central differences of ``f``'s forward pass.

    Args:
        f: numpy in, numpy out (a tuple's first element is the output, e.g. ``(out, cache)``).
        args: the inputs (arrays; copied, never changed). dout: the upstream gradient, the
            output's shape. i: which input to differentiate. eps: the nudge.
    """
    args = [np.array(a, dtype=np.float64) for a in args]
    dout = np.asarray(dout, np.float64)

    def value(at):
        out = f(*at)
        return float(np.sum(np.asarray(out[0] if isinstance(out, tuple) else out) * dout))

    grad = np.zeros_like(args[i])
    for j in np.ndindex(args[i].shape):
        up = [a.copy() for a in args]
        down = [a.copy() for a in args]
        up[i][j] += eps
        down[i][j] -= eps
        grad[j] = (value(up) - value(down)) / (2 * eps)
    return grad


def name_slip(got, want, slips=None, *, where=None, rtol=1e-5, atol=1e-7):
    """None when ``got`` matches ``want``; else the sentence of the first slip in ``slips``
    (``{sentence: what that slip computes}``) that ``got`` equals, or ``patterns.describe``'s
    pattern. A slip that computes the right answer here (e.g. dy left out where dy is 1)
    names nothing."""
    words = describe(got, want, where=where, rtol=rtol, atol=atol)
    if words is None:
        return None
    g = _floats(got)
    w = np.asarray(want, np.float64)
    for sentence, alt in (slips or {}).items():
        alt = _floats(alt)
        if g is not None and alt is not None and g.shape == alt.shape == w.shape:
            if np.allclose(g, alt, rtol=rtol, atol=atol) and not np.allclose(alt, w, rtol, atol):
                return sentence
    return words


def expect_gradient(got, want, what: str, *, slips=None, where=None, rtol=1e-5, atol=1e-7):
    """Raise ``AssertionError("<what>: <slip or pattern>")`` unless ``got`` matches ``want``.

    Args:
        got: the student's gradient. want: what it is compared with (never printed).
        what: its name, e.g. ``"dw"``.
        slips: ``{sentence: what that slip would compute}``; a ``got`` equal to one of them
            (and not to ``want``) is named by its sentence. Write sentences that say what is
            wrong, not what to write.
        where: ``{condition in words: mask}`` (see ``patterns.describe``).
        rtol, atol: the tolerance of ``numpy.isclose``.
    """
    words = name_slip(got, want, slips, where=where, rtol=rtol, atol=atol)
    if words is not None:
        raise AssertionError(f"{what}: {words}")


def _floats(got):
    try:
        return np.asarray(got, np.float64)
    except (TypeError, ValueError):
        return None
