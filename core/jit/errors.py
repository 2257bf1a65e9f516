"""The errors ``tv.jit`` raises at trace time, each saying what to do instead.

A traced function runs once with real values, but its compiled program replays only the
kernels for every later call. Anything that turns a traced tensor's value into a Python value
(a branch, ``float()``, ``.item()``, numpy on the value) would be baked into that program and
be silently stale on the next call, so it raises ``ConcretizationError`` (JAX's
``ConcretizationTypeError``) while tracing, never later.
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "JitError",
    "ConcretizationError",
    "OpaqueFunctionError",
    "fix_for",
    "concretization_error",
    "opaque_error",
]


class JitError(RuntimeError):
    """``tv.jit`` cannot compile this function as written; the message says why and what to do."""


class ConcretizationError(JitError, TypeError):
    """A traced tensor's value was needed as a Python value (a branch, ``float()``, numpy)."""


class OpaqueFunctionError(JitError):
    """A ``DifferentiableFunction`` or ``CompiledLayer`` runs inside a jitted function: its
    forward and backward are numpy or compiled code on raw arrays, which jit cannot see."""


_BRANCH = (
    "choose with tv.where(cond, a, b) (both sides are computed), decide outside the jitted "
    "function, or pass the deciding value as a Python argument listed in static_argnums"
)
_NUMBER = (
    "keep it a tensor (ops take 0-d tensors), return it from the function and convert it "
    "outside, or pass the Python number as an argument listed in static_argnums"
)
_NUMPY = (
    "use tapeviz ops instead (tv.exp, tv.sum, tv.where, ...; numpy's own functions on a tensor "
    "dispatch to them), or call the function without tv.jit"
)
_OUTSIDE = (
    "this computation runs outside kernels, so it cannot be compiled: call it outside the "
    "jitted function (and pass its result in), or call the function without tv.jit"
)

FIXES = {
    "bool()": _BRANCH,
    "float()": _NUMBER,
    "int()": _NUMBER,
    "an index": _NUMBER,
    "item()": _NUMBER,
    "tolist()": _NUMBER,
    "numpy()": _NUMPY,
    "np.asarray()": _NUMPY,
    "assign_sub()": "write v.assign(v - delta), which is recorded as ops",
}


_ATTRIBUTE = (
    "an index (or other kernel setting) taken from a traced tensor would be fixed at trace "
    "time: pass it as a Python value listed in static_argnums, or select with ops whose "
    "indices are inputs (tv.one_hot, tv.where)"
)


def fix_for(what: str) -> str:
    """What to do instead of ``what`` (a key of ``FIXES``, or a numpy function's name)."""
    if what.startswith("an attribute"):
        return _ATTRIBUTE
    return FIXES.get(what, _OUTSIDE)


def concretization_error(fn_name: str, what: str, t) -> ConcretizationError:
    """The error for ``what`` (``"bool()"``, ``"np.argmax"``, ...) on tensor ``t`` (or on a
    traced value reached outside kernels: ``t`` None), naming the user's line and, when the
    value was read inside tapeviz, where."""
    user, internal = _sites()
    subject = "a traced value"
    if t is not None:
        shape, dtype = t._shape_dtype()
        kind = "variable" if type(t).__name__ == "Variable" else "tensor"
        subject = f"traced {kind} {t._label()} ({shape} {dtype})"
    return ConcretizationError(
        f"tv.jit({fn_name}): {what} on {subject}{user}{internal}. While tv.jit traces a "
        "function, a tensor's value belongs to this one call: the compiled program replays "
        "only the kernels on every later call, so a Python value taken from it would be "
        f"baked in and silently stale. Fix: {fix_for(what)}"
    )


def opaque_error(fn_name: str, kind: str, name: str) -> OpaqueFunctionError:
    user, _ = _sites()
    return OpaqueFunctionError(
        f"tv.jit({fn_name}): {kind} {name!r} is called inside the jitted function{user}; its "
        "forward and backward run numpy or compiled code on raw arrays, which jit cannot see "
        "(it would bake this call's result into the program). Call it outside the jitted "
        "function, write it with tapeviz ops or tv.custom_grad (whose ops jit traces), or "
        "call the function without tv.jit"
    )


_CORE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # core/
_QUIET = ("jit", "tensors", "engine")  # the machinery: the value layer, the kernel door, jit


def _sites() -> tuple[str, str]:
    """(" at file:line (function)" of the user's line, " (in tapeviz core/...:line, fn)")."""
    f, internal, user = sys._getframe(2), "", ""
    while f is not None:
        fn = f.f_code.co_filename
        if fn.startswith(_CORE) or "contextlib" in fn:
            rel = fn[len(_CORE) :]
            if not internal and fn.startswith(_CORE) and rel.split(os.sep)[0] not in _QUIET:
                internal = f" (in tapeviz core/{rel}:{f.f_lineno}, {f.f_code.co_name})"
        else:
            user = f" at {fn}:{f.f_lineno} ({f.f_code.co_name})"
            break
        f = f.f_back
    return user, internal
