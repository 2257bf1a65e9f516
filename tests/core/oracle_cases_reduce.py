"""Oracle cases for reductions (sum, max, min, prod), softmax and log_softmax, and the
composites built on them (mean, var, std, logsumexp), at random points and at the edge
points of issue 12: ties, zeros in prod (second order), zero spread, all ``-inf`` rows, NaN.
"""

from __future__ import annotations

import functools
import operator

import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
from oracle import OracleCase
from oracle_cases_ops import INF, NAN, rand

import tapeviz.core as tv
from tapeviz.core.registry import kernel_names as K

CASES: list[OracleCase] = []
AXES = [(None, False), (0, False), (1, True), ((0, 1), False)]


def case(id, kernels, tv_fn, ag_fn, *args, **kw):
    CASES.append(OracleCase(id, tuple(kernels), tv_fn, ag_fn, tuple(args), **kw))


def _ag_prod(x, axis=None, keepdims=False):
    """prod as a chain of multiplications: exact derivatives at zeros of every order
    (autograd's own prod divides by x, NaN at a zero)."""
    if axis is None or (isinstance(axis, tuple) and len(axis) == x.ndim):
        shape = (1,) * x.ndim if keepdims else ()
        return anp.reshape(_ag_prod(anp.reshape(x, (-1,)), 0), shape)
    lead = (slice(None),) * axis
    parts = [x[lead + (i,)] for i in range(x.shape[axis])]
    out = functools.reduce(operator.mul, parts, anp.ones(np.delete(x.shape, axis)))
    return anp.expand_dims(out, axis) if keepdims else out


def _squared(f):
    return lambda x: f(x) * f(x)


# sum / max / min / prod over axis choices and shapes, size-1 and size-0 included
for axis, keep in AXES:
    for shape in [(2, 3), (1, 3), (2, 1), (0, 3)]:
        x = rand(shape, f"reduce{axis}")
        tag = f"[{axis},{keep}]{list(shape)}"
        case(f"sum{tag}", [K.SUM], _squared(lambda x, a=axis, k=keep: tv.sum(x, a, k)),
             _squared(lambda x, a=axis, k=keep: anp.sum(x, a, keepdims=k)), x)  # fmt: skip
        case(f"prod{tag}", [K.PROD], lambda x, a=axis, k=keep: tv.prod(x, a, k),
             lambda x, a=axis, k=keep: _ag_prod(x, a, k), x)  # fmt: skip
        if 0 in shape:
            continue  # max/min of nothing is an error (tested in test_ops)
        for name, tvf, agf, kern in (("max", tv.max, anp.max, K.MAX),
                                     ("min", tv.min, anp.min, K.MIN)):  # fmt: skip
            case(f"{name}{tag}", [kern], _squared(lambda x, f=tvf, a=axis, k=keep: f(x, a, k)),
                 _squared(lambda x, f=agf, a=axis, k=keep: f(x, a, keepdims=k)), x)  # fmt: skip

# ties share the gradient evenly (autograd, PyTorch's max()/amax); NaN: NaN everywhere
TIES = np.array([[1.0, 3.0, 3.0], [-2.0, -2.0, -2.0]])
for name, tvf, agf, kern in (("max", tv.max, anp.max, K.MAX), ("min", tv.min, anp.min, K.MIN)):
    case(f"{name}[tie]", [kern], _squared(lambda x, f=tvf: f(x, 1)),
         _squared(lambda x, f=agf: f(x, 1)), TIES)  # fmt: skip
    case(f"{name}[tie, all]", [kern], lambda x, f=tvf: f(x), lambda x, f=agf: f(x), TIES)
    case(f"{name}[nan]", [kern], lambda x, f=tvf: f(x, 1), lambda x, f=agf: f(x, 1),
         np.array([[1.0, NAN, 3.0], [0.5, 2.0, -1.0]]), hvp=False)  # fmt: skip
    case(f"{name}[inf]", [kern], lambda x, f=tvf: f(x, 1), lambda x, f=agf: f(x, 1),
         np.array([[1.0, INF, -INF], [0.5, 2.0, -1.0]]), hvp=False)  # fmt: skip

# prod with zeros: the gradient and the Hessian (issue 12, class 4) are exact
ZEROS = {
    "one zero": np.array([[0.0, 2.0, 3.0], [1.5, -0.5, 2.0]]),
    "two zeros": np.array([[0.0, 2.0, 0.0], [1.5, 0.0, 2.0]]),
    "three zeros": np.array([[0.0, 0.0, 0.0, 0.5], [1.5, 0.0, 0.0, 2.0]]),
    "all zero": np.zeros((2, 2)),
}
for label, x in ZEROS.items():
    case(f"prod[{label}]", [K.PROD], lambda x: tv.prod(x, 1), lambda x: _ag_prod(x, 1), x)
    case(f"prod[{label}, all]", [K.PROD], tv.prod, _ag_prod, x)
    case(f"prod[{label}, squared]", [K.PROD], _squared(lambda x: tv.prod(x, 0)),
         _squared(lambda x: _ag_prod(x, 0)), x)  # fmt: skip


def _ag_log_softmax(x, axis):
    return x - asp.logsumexp(x, axis=axis, keepdims=True)


for axis in (-1, 0):
    for shape in [(2, 3), (1, 3), (3,), (4, 1), (0, 3)]:
        if axis == 0 and (len(shape) == 1 or 0 in shape):
            continue  # autograd cannot reduce an empty axis (test_conventions checks tapeviz)
        x = rand(shape, f"softmax{axis}") * 2
        tag = f"[axis {axis}]{list(shape)}"
        case(f"softmax{tag}", [K.SOFTMAX], lambda x, a=axis: tv.softmax(x, a),
             lambda x, a=axis: anp.exp(_ag_log_softmax(x, a)), x)  # fmt: skip
        case(f"log_softmax{tag}", [K.LOG_SOFTMAX], lambda x, a=axis: tv.log_softmax(x, a),
             lambda x, a=axis: _ag_log_softmax(x, a), x)  # fmt: skip
case("softmax[-inf]", [K.SOFTMAX], lambda x: tv.softmax(x, -1),
     lambda x: anp.exp(_ag_log_softmax(x, -1)), np.array([[-INF, 0.5, 1.0]]), hvp=False)  # fmt: skip
case("log_softmax[-inf]", [K.LOG_SOFTMAX], lambda x: tv.log_softmax(x, -1),
     lambda x: _ag_log_softmax(x, -1), np.array([[-INF, 0.5, 1.0]]), hvp=False)  # fmt: skip
case("softmax[large]", [K.SOFTMAX], lambda x: tv.softmax(x, -1),
     lambda x: anp.exp(_ag_log_softmax(x, -1)), np.array([[800.0, 801.0, -5.0]]))  # fmt: skip

# composites: mean, var, std, logsumexp
for axis, keep in AXES[:3]:
    x = rand((2, 3), f"composite{axis}")
    tag = f"[{axis},{keep}]"
    case(f"mean{tag}", [K.SUM], lambda x, a=axis, k=keep: tv.mean(x, a, k),
         lambda x, a=axis, k=keep: anp.mean(x, a, keepdims=k), x)  # fmt: skip
    case(f"var{tag}", [K.SUM], lambda x, a=axis, k=keep: tv.var(x, a, k),
         lambda x, a=axis, k=keep: anp.var(x, a, keepdims=k), x)  # fmt: skip
    case(f"std{tag}", [K.SUM, K.SQRT], lambda x, a=axis, k=keep: tv.std(x, a, k),
         lambda x, a=axis, k=keep: anp.std(x, a, keepdims=k), x)  # fmt: skip
    case(f"logsumexp{tag}", [K.MAX, K.EXP, K.LOG], lambda x, a=axis, k=keep: tv.logsumexp(x, a, k),
         lambda x, a=axis, k=keep: asp.logsumexp(x, a, keepdims=k), x)  # fmt: skip

# std at zero spread and of one element: gradient 0 (PyTorch's convention; autograd's NaN)
for label, x in {"zero spread": np.array([[1.0, 1.0, 1.0], [0.5, 2.0, -1.0]]),
                 "one element": np.array([[2.0], [-1.0]])}.items():  # fmt: skip
    case(f"std[{label}]", [K.SUM, K.SQRT], lambda x: tv.std(x, 1), lambda x: anp.std(x, 1), x,
         hvp=False, expect=lambda w, x: [_std_grad(w, x)],
         note="std's gradient is 0 where the spread is 0 (PyTorch's subgradient; autograd "
              "divides 0 by 0: NaN)")  # fmt: skip


def _std_grad(w, x):
    d = x - x.mean(1, keepdims=True)
    s = np.sqrt((d * d).mean(1, keepdims=True))
    with np.errstate(all="ignore"):
        g = np.where(s > 0, d / (x.shape[1] * np.where(s > 0, s, 1)), 0.0)
    return g * w[:, None]


# logsumexp of all -inf is -inf; its gradient there is NaN (PyTorch and autograd: exp(x - y))
LSE_EDGE = np.array([[-INF, -INF, -INF], [-INF, 0.5, 1.0], [INF, 0.5, 1.0], [NAN, 0.5, 1.0]])
case("logsumexp[inf, nan rows]", [K.MAX, K.EXP, K.LOG], lambda x: tv.logsumexp(x, 1),
     lambda x: asp.logsumexp(x, 1), LSE_EDGE, hvp=False)  # fmt: skip
case(
    "logsumexp[large]",
    [K.MAX, K.EXP, K.LOG],
    lambda x: tv.logsumexp(x, 1),
    lambda x: asp.logsumexp(x, 1),
    np.array([[800.0, 801.0, -5.0], [-900.0, -901.0, -1e4]]),
)

# empty reductions: logsumexp over an empty axis is -inf (log of an empty sum, PyTorch and
# scipy); reducing a zero-size tensor over its non-empty axes gives an empty result (numpy)
case("logsumexp[empty axis]", [K.SUM, K.MUL], lambda x: tv.logsumexp(x, 0),
     lambda x: asp.logsumexp(x, 0), np.zeros((0, 3)))  # fmt: skip
case(
    "logsumexp[empty, all axes]",
    [K.SUM, K.MUL],
    tv.logsumexp,
    lambda x: asp.logsumexp(anp.ravel(x)),
    np.zeros((2, 0)),
)  # scipy needs 1-D here
case("logsumexp[zero-size, non-empty axis]", [K.EXP, K.LOG], lambda x: tv.logsumexp(x, 1),
     lambda x: asp.logsumexp(x, 1), np.zeros((0, 3)))  # fmt: skip
for _op, _tv, _ag in (("max", tv.max, anp.max), ("min", tv.min, anp.min)):
    case(f"{_op}[zero-size, non-empty axis]", [K.MAX if _op == "max" else K.MIN],
         lambda x, f=_tv: f(x, 0) ** 2, lambda x, f=_ag: f(x, 0) ** 2, np.zeros((2, 0)))  # fmt: skip
