"""Gradient checking as library code: find the wrong gradient, name it, say why it fails.

``check_grads(f, *args)`` compares reverse mode (and forward mode through ``tv.jvp``) with
float64 central differences for every differentiable argument and returns a
``GradCheckReport``. Numerical Jacobians are computed by replaying the recorded kernels once
on a batch of perturbed inputs (``core.check.batched_replay``), checked against direct calls, with
one call per element as the fallback. Failures are classified (``FAILURE_CLASSES``).
"""

from __future__ import annotations

import numpy as np

from .. import display
from ..autodiff.tape import Tape
from ..engine import dispatch as engine
from ..ops import cast
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor
from .arguments import (
    check_callable,
    check_choice,
    check_flag,
    check_float_dtype,
    check_int,
    check_number,
    check_seed,
    check_wrt,
    describe,
)
from .comparison import FAILURE_CLASSES, InputCheck
from .differences import directional, jacobians
from .function_problem import FunctionProblem, wrap_arguments
from .outputs import output_functions
from .report import GradCheckReport
from .runner import run_checks

__all__ = [
    "check_grads",
    "numerical_jacobian",
    "GradCheckReport",
    "GradientCheckError",
    "InputCheck",
    "FAILURE_CLASSES",
]

# (eps, atol, rtol) by the dtype f computes in; ``audit`` uses them too
DEFAULT_TOLERANCES = {"float64": (1e-6, 1e-5, 1e-4), "float32": (1e-3, 1e-3, 1e-2)}


class GradientCheckError(AssertionError):
    """Analytic and numerical gradients disagree; ``.report`` holds the whole story."""

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report


def _prepare(args, wrt, dtype, name):
    """Arguments as ``f`` gets them: the checked ones (floating, and in ``wrt`` when given)
    as arrays, optionally in ``dtype``; every other argument exactly as given (a tuple of
    einsum subscripts stays a tuple). Returns (args, diff, notes, the indices of the
    arguments given as Variables)."""
    out, diff, notes = [], [], []
    variables = {i for i, a in enumerate(args) if isinstance(a, Variable)}
    for i, a in enumerate(args):
        arr = _floating(a) if wrt is None or i in wrt else None
        if arr is None:
            if wrt is not None and i in wrt:
                raise TypeError(
                    f"check_grads({name}): wrt names argument {i}, {describe(a)}, which is "
                    "not a floating array, list or tensor: only those are checked (pass a "
                    "number as np.array(x))"
                )
            out.append(a)
            continue
        if dtype is not None and arr.dtype != dtype:
            notes.append(
                f"arg {i} is {arr.dtype}: checked in {np.dtype(dtype)} (with float32 "
                "central differences the rounding error, ~1e-7/eps, hides real bugs)"
            )
            arr = arr.astype(dtype)
        diff.append(i)
        out.append(arr)
    if not diff:
        raise ValueError(f"check_grads({name}): no floating argument to check")
    return out, diff, notes, variables


def _floating(a):
    """A floating tensor, array or (nested) list as a new array; None for anything else."""
    if isinstance(a, Tensor):
        arr = a.numpy()
    elif isinstance(a, (list, tuple, np.ndarray)):
        try:
            arr = np.array(a)
        except ValueError:  # ragged: not an array
            return None
    else:
        return None
    return np.array(arr) if arr.dtype.kind == "f" else None


def _check_arguments(f, order, eps, atol, rtol, mode, forward, raise_on_failure, dtype, seed):
    where = "check_grads"
    check_callable(where, "f", f)
    check_choice(where, "order", order, (1, 2))
    check_choice(where, "mode", mode, ("full", "fast"))
    check_number(where, "eps", eps, positive=True)
    check_number(where, "atol", atol, positive=False)
    check_number(where, "rtol", rtol, positive=False)
    check_flag(where, "forward", forward)
    check_flag(where, "raise_on_failure", raise_on_failure)
    check_float_dtype(where, "dtype", dtype)
    check_seed(where, seed)


def check_grads(f, *args, order=1, eps=None, atol=None, rtol=None, mode="full",
                forward=True, raise_on_failure=True, wrt=None, dtype="float64",
                seed=0) -> GradCheckReport:  # fmt: skip
    """Check ``f``'s gradients against central differences; name what is wrong and why.

    Every floating argument is checked (in float64 by default: float32 arguments are
    converted and the report says so). Reverse mode is compared as dyᵀJ for a random dy
    (element by element over each input), the backward pass is run again with dy doubled
    (catching gradients that ignore dy, or that change between runs), and forward mode is
    compared through ``tv.jvp``. ``order=2`` also checks the gradient of the gradient: the
    VJP ``(x, dy) -> Jᵀdy`` differentiated with respect to every input and to ``dy``.
    Before a mismatch is reported it is looked at again (Richardson extrapolation and larger
    steps, ``core/check/confirm.py``, then steps from eps·1e-8 to eps·1e10, each with its
    truncation and rounding error estimated, ``core/check/steps.py``): the line says whether
    the failure was confirmed or was the finite difference's error; where no step is
    accurate enough to judge (f changes on a scale far below eps, or its value is huge next
    to its change) the elements are "not checkable at this step", neither pass nor fail
    (``report.outcome``). Elements on a kink accept any value between the
    one-sided derivatives; elements where f is not finite or jumps nearby are "not
    checkable"; stop_gradient's value is held constant on the numerical side too. Each line
    says what it compared.

    Args:
        f: a function of tensors returning a floating tensor, or a tuple, list or dict of
            them (each floating output is checked; a failing one is named by its place,
            ``output [1]``, ``output ['h']``).
        *args: its arguments: arrays, lists or tensors (float ones are checked) or others.
        order: 1, or 2 for second order (reverse over reverse) as well.
        eps: finite-difference step (default 1e-6; 1e-3 if f computes in float32).
        atol, rtol: tolerances (defaults 1e-5 and 1e-4; float32: 1e-3 and 1e-2).
        mode: "full" (the numerical Jacobian of each input) or "fast" (random projections
            vᵀJu, falling back to the full Jacobian only for an input that fails).
        forward: also check forward mode (``tv.jvp``).
        raise_on_failure: raise ``GradientCheckError`` (with ``.report``) when it fails.
        wrt: indices of the arguments to check (default: every floating one).
        dtype: the dtype floating arguments are checked in (None keeps theirs).
        seed: seed of the random dy and directions.

    Returns:
        A ``GradCheckReport``. In a notebook a check that passes also prints one line
        (``passed: check_grads(f): 2 checks, worst abs err ...``), so a cell that ends
        elsewhere still says it ran; a script stays quiet, as an ``assert`` does (print the
        report for its lines). ``raise_on_failure=False`` never prints.

    Example:
        >>> import tapeviz as tv
        >>> tv.check_grads(lambda x: tv.tanh(x) * x, [0.5, -1.0]).passed
        True
    """
    _check_arguments(f, order, eps, atol, rtol, mode, forward, raise_on_failure, dtype, seed)
    wrt = check_wrt("check_grads", wrt, len(args))
    name = getattr(f, "__name__", type(f).__name__)
    args, diff, notes, variables = _prepare(
        args, wrt, None if dtype is None else np.dtype(dtype), name
    )
    saved_source, engine.settings.record_source = engine.settings.record_source, False
    quiet = np.errstate(all="ignore")  # perturbed points may leave f's domain: no warnings
    quiet.__enter__()
    try:
        parts, more = output_functions(f, wrap_arguments(args, variables, diff), name)
        report, rng = None, np.random.default_rng(seed)
        for label, f_k in parts:
            p = FunctionProblem(f_k, args, diff, name, variables)
            kind = "float32" if p.out.dtype == np.float32 else "float64"
            if kind == "float32" and dtype is not None:
                where = f"{label} of f" if label else "f"
                notes.append(f"{where} returned float32 for float64 inputs: float32 tolerances")
            d_eps, d_atol, d_rtol = DEFAULT_TOLERANCES[kind]
            e = d_eps if eps is None else float(eps)
            a = d_atol if atol is None else float(atol)
            r = d_rtol if rtol is None else float(rtol)
            if report is None:
                report = GradCheckReport(name, order, mode, e, a, r, notes=notes + more)
            opts = {"mode": mode, "eps": e, "rng": rng}
            prefix = f"{label}: " if label else ""
            start = len(report.checks)
            run_checks(p, report, atol=a, rtol=r, forward=forward,
                       label=lambda i, prefix=prefix: f"{prefix}arg {i}", **opts)  # fmt: skip
            for c in report.checks[start:]:
                if c.kind == "forward":
                    c.label = prefix + c.label
            if order == 2:
                _second_order(f_k, args, diff, p, report, a, r, opts, prefix)
    finally:
        quiet.__exit__(None, None, None)
        engine.settings.record_source = saved_source
    if raise_on_failure and not report.passed:
        raise GradientCheckError(report.summary(), report)
    if raise_on_failure and display.in_notebook():  # a script stays quiet, as an assert
        print(report.headline())
    return report


def _second_order(f, args, diff, p, report, atol, rtol, opts, prefix="") -> None:
    """Check the VJP of the VJP: each gradient ``(x..., dy) -> J(x)^T dy`` as a function of
    the inputs AND of ``dy`` (autograd's ``check_vjp`` of ``vjp_f``), so a gradient that is
    wrong only in how it uses ``dy`` fails too."""
    dy_at = len(args)
    slack = 10 if p.out.dtype == np.float32 else 1  # float32 rounding, twice differentiated
    y_shape = p.y.shape
    dy = np.ones(y_shape) if int(np.prod(y_shape)) == 1 else opts["rng"].standard_normal(y_shape)
    for i in diff:
        g = _gradient_function(f, i, diff, p.out.dtype)
        sub = FunctionProblem(g, [*args, dy], [*diff, dy_at], g.__name__, p.variables)
        start = len(report.checks)
        run_checks(sub, report, atol=atol * slack, rtol=rtol * slack, forward=False, order=2,
                   label=lambda j, i=i: f"{prefix}d/d {'dy' if j == dy_at else f'arg {j}'} of "
                   f"grad arg {i}", **opts)  # fmt: skip
        for c in report.checks[start:]:
            c.arg = (i, "dy" if c.arg == dy_at else c.arg)


def _gradient_function(f, index, diff, y_dtype):
    """(x..., dy) -> the gradient of ``f`` w.r.t. arg ``index`` along ``dy`` (made of ops,
    so it is differentiable in every x and in dy)."""

    def g(*xs_dy):
        *xs, dy = xs_dy
        with Tape() as tape:
            tape.watch([xs[i] for i in diff])
            y = f(*xs)
        dy = dy if dy.dtype == y_dtype else cast(dy, y_dtype)
        return tape.gradient(y, [xs[index]], dy, "zero")[0]

    g.__name__ = f"grad({getattr(f, '__name__', 'f')}, arg {index})"
    return g


def numerical_jacobian(f, args, index: int, eps: float = 1e-6) -> np.ndarray:
    """Central-difference Jacobian of ``f`` w.r.t. ``args[index]``: ``(out.size, in.size)``.

    Batched over all perturbations when the recorded computation allows, else one call per
    element. Float arguments are used as given (no dtype change).

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> tv.numerical_jacobian(lambda x: x * x, [np.array([1.0, 2.0])], 0).round(6)
        array([[2., 0.],
               [0., 4.]])
    """
    where = "numerical_jacobian"
    check_callable(where, "f", f)
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{where}: args must be a list or tuple of f's arguments, "
                        f"got {describe(args)}")  # fmt: skip
    check_int(where, "index", index)
    check_number(where, "eps", eps, positive=True, none=False)
    if index >= len(args) or _floating(args[index]) is None:
        got = describe(args[index]) if index < len(args) else f"only {len(args)} arguments"
        raise TypeError(f"{where}: index {index} must name a floating array, list or tensor "
                        f"among args, got {got}")  # fmt: skip
    arrays = [_floating(a) if i == index else a for i, a in enumerate(args)]
    p = FunctionProblem(f, arrays, [index], getattr(f, "__name__", "f"))
    u = np.random.default_rng(0).standard_normal(arrays[index].shape)
    return jacobians(p, 0, eps, u, directional(p, 0, u, eps)[0])[0][0]
