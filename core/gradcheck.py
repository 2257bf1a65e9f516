"""Gradient checking as library code: float64 central differences against reverse mode.

``check_grads(f, *args)`` returns a ``GradCheckReport`` and raises ``GradientCheckError``
(naming the function, the argument, the worst element and its index) when it fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .tape import Tape
from .tensor import Tensor

__all__ = ["check_grads", "numerical_jacobian", "GradCheckReport", "GradientCheckError"]


class GradientCheckError(AssertionError):
    """Analytic and numerical gradients disagree."""

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report


@dataclass
class InputCheck:
    """The comparison for one argument (flattened Jacobian-vector products)."""

    index: int
    analytic: np.ndarray
    numerical: np.ndarray
    abs_err: np.ndarray
    rel_err: np.ndarray
    passed_mask: np.ndarray
    atol: float
    rtol: float

    @property
    def passed(self) -> bool:
        return bool(self.passed_mask.all())

    @property
    def worst_index(self):
        if self.abs_err.size == 0:
            return ()
        excess = self.abs_err - (self.atol + self.rtol * np.abs(self.numerical))
        return np.unravel_index(int(np.argmax(excess)), self.abs_err.shape)


@dataclass
class GradCheckReport:
    """The result of ``check_grads``: one ``InputCheck`` per differentiable argument."""

    function: str
    order: int
    eps: float
    inputs: list = field(default_factory=list)
    messages: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.inputs) and not self.messages

    @property
    def worst(self):
        """(argument index, element index, abs error) of the largest excess over tolerance."""
        best = None
        for c in self.inputs:
            if c.abs_err.size == 0:
                continue
            idx = c.worst_index
            item = (c.index, tuple(int(i) for i in idx), float(c.abs_err[idx]))
            if best is None or item[2] > best[2]:
                best = item
        return best

    def summary(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        lines = [f"check_grads({self.function}, order={self.order}): {status}"]
        for c in self.inputs:
            if c.abs_err.size == 0:
                lines.append(f"  arg {c.index}: empty")
                continue
            idx = c.worst_index
            lines.append(
                f"  arg {c.index}: worst at {tuple(int(i) for i in idx)}: analytic "
                f"{c.analytic[idx]:.6g} vs numerical {c.numerical[idx]:.6g} "
                f"(abs err {c.abs_err[idx]:.3g}, rel err {c.rel_err[idx]:.3g}); "
                f"{int((~c.passed_mask).sum())} of {c.passed_mask.size} outside tolerance"
            )
        lines.extend(f"  {m}" for m in self.messages)
        return "\n".join(lines)

    __str__ = summary

    def _repr_html_(self) -> str:
        import html

        colour = "#009E73" if self.passed else "#D55E00"
        badge = "PASS" if self.passed else "FAIL"
        rows = "".join(
            f"<tr><td>{html.escape(line)}</td></tr>" for line in self.summary().splitlines()[1:]
        )
        return (
            f"<div><b style='color:{colour}'>{badge}</b> check_grads"
            f"({html.escape(self.function)}, order={self.order})<table>{rows}</table></div>"
        )


def _as64(a) -> np.ndarray:
    arr = a.numpy() if isinstance(a, Tensor) else np.asarray(a)
    if arr.dtype.kind != "f":
        return arr
    return np.array(arr, dtype=np.float64)


def _call(f, args) -> np.ndarray:
    out = f(*[Tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    return np.asarray(out.numpy() if isinstance(out, Tensor) else out, dtype=np.float64)


def numerical_jacobian(f, args, index: int, eps: float) -> np.ndarray:
    """Central-difference Jacobian of ``f`` w.r.t. ``args[index]``: (out.size, in.size)."""
    x = args[index]
    flat = x.reshape(-1)
    base = _call(f, args)
    jac = np.zeros((base.size, flat.size))
    for k in range(flat.size):
        plus, minus = flat.copy(), flat.copy()
        plus[k] += eps
        minus[k] -= eps
        a_plus = list(args)
        a_plus[index] = plus.reshape(x.shape)
        a_minus = list(args)
        a_minus[index] = minus.reshape(x.shape)
        jac[:, k] = ((_call(f, a_plus) - _call(f, a_minus)) / (2 * eps)).reshape(-1)
    return jac


def _analytic(f, args, index, dy):
    xs = [Tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    with Tape() as tape:
        tape.watch([x for x in xs if isinstance(x, Tensor)])
        y = f(*xs)
    (g,) = [
        tape.gradient(y, [xs[index]], output_gradients=Tensor(dy), unconnected_gradients="zero")[0]
    ]
    return g.numpy().astype(np.float64)


def check_grads(f, *args, order: int = 1, eps=None, atol=None, rtol=None) -> GradCheckReport:
    """Check ``f``'s reverse-mode gradients against float64 central differences.

    Every floating argument is checked, with a random ``dy`` (so a gradient that ignores
    ``dy`` is caught). ``order=2`` also checks the gradient of the gradient.

    Args:
        f: a function of tensors returning a tensor.
        *args: its arguments (arrays, lists or tensors); float ones are checked in float64.
        order: 1 or 2.
        eps: finite-difference step (default 1e-6).
        atol, rtol: tolerances (default 1e-5 and 1e-4).

    Returns:
        A ``GradCheckReport``; raises ``GradientCheckError`` if it fails.

    Example:
        >>> import core
        >>> core.check_grads(lambda x: core.tanh(x) * x, [0.5, -1.0]).passed
        True
    """
    if order not in (1, 2):
        raise ValueError(f"check_grads: order must be 1 or 2, got {order}")
    eps = 1e-6 if eps is None else float(eps)
    atol = 1e-5 if atol is None else float(atol)
    rtol = 1e-4 if rtol is None else float(rtol)
    name = getattr(f, "__name__", type(f).__name__)
    args64 = [_as64(a) for a in args]
    report = GradCheckReport(name, order, eps)
    rng = np.random.default_rng(0)
    y = _call(f, args64)
    dy = rng.standard_normal(y.shape).astype(np.float64) if y.shape else np.float64(1.0)
    dy = np.asarray(dy)
    for i, a in enumerate(args64):
        if not isinstance(a, np.ndarray) or a.dtype.kind != "f":
            continue
        analytic = _analytic(f, args64, i, dy)
        jac = numerical_jacobian(f, args64, i, eps)
        numerical = (dy.reshape(-1) @ jac).reshape(a.shape) if jac.size else np.zeros(a.shape)
        report.inputs.append(_compare(i, analytic, numerical, atol, rtol))
    if order == 2:
        for i, a in enumerate(args64):
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                g = _gradient_function(f, i, dy)
                sub = check_grads(g, *args64, order=1, eps=eps, atol=atol * 10, rtol=rtol * 10)
                for c in sub.inputs:
                    c.index = (i, c.index)
                report.inputs.extend(sub.inputs)
    if not report.passed:
        raise GradientCheckError(report.summary(), report)
    return report


def _gradient_function(f, index, dy):
    def g(*xs):
        with Tape() as tape:
            tape.watch([x for x in xs if isinstance(x, Tensor)])
            y = f(*xs)
        return tape.gradient(
            y, [xs[index]], output_gradients=Tensor(dy), unconnected_gradients="zero"
        )[0]

    g.__name__ = f"grad({getattr(f, '__name__', 'f')}, arg {index})"
    return g


def _compare(index, analytic, numerical, atol, rtol) -> InputCheck:
    abs_err = np.abs(analytic - numerical)
    rel_err = abs_err / np.maximum(np.abs(numerical), 1e-12)
    passed = abs_err <= atol + rtol * np.abs(numerical)
    return InputCheck(index, analytic, numerical, abs_err, rel_err, passed, atol, rtol)
