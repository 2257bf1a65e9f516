"""Oracle cases (shared format, tests/core/oracle.py) for the numpy surface of issue 13:
elementwise math, shape and order ops, against HIPS autograd at random and edge points
(contraction and linear algebra: oracle_cases_linalg.py).

``expect(w, *args)``, where given, returns the gradient of ``sum(f(*args) * w)`` for each
argnum (a tuple) in place of autograd's, for the reason in ``note``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import autograd.numpy as anp
import numpy as np

import tapeviz.core as tv
from tapeviz.core.registry import kernel_names as K

try:
    from oracle import OracleCase
except ImportError:  # the shared harness is not merged yet: the same dataclass

    @dataclass(frozen=True)
    class OracleCase:
        id: str
        kernels: tuple[str, ...]
        tv_fn: Callable
        ag_fn: Callable
        args: tuple
        argnums: tuple[int, ...] = (0,)
        hvp: bool = True
        float32: bool = True
        note: str = ""
        expect: Callable | None = None


_rng = np.random.default_rng(13)


def rand(*shape, lo=-1.5, hi=1.5):
    return _rng.uniform(lo, hi, shape)


def spd(n):
    a = rand(n, n)
    return a @ a.T + n * np.eye(n)


CASES: list[OracleCase] = []


def make_case(cases: list):
    """``case(id, kernels, tv_fn, ag_fn, *args, **options)`` appending to ``cases``."""

    def case(id, kernels, tv_fn, ag_fn, *args, **kw):
        kernels = (kernels,) if isinstance(kernels, str) else tuple(kernels)
        if kw.get("expect") is not None:  # the case's own gradient: no oracle Hessian to compare
            kw.setdefault("hvp", False)
        cases.append(OracleCase(id, kernels, tv_fn, ag_fn, tuple(args), **kw))

    return case


case = make_case(CASES)


# --- elementwise, unary: random points in the domain, then edges ---------------------------
for name, kernel, lo, hi in [
    ("sinh", K.SINH, -3, 3), ("cosh", K.COSH, -3, 3), ("arcsin", K.ASIN, -0.95, 0.95),
    ("arccos", K.ACOS, -0.95, 0.95), ("arctan", K.ATAN, -4, 4), ("arcsinh", K.ASINH, -4, 4),
    ("arccosh", K.ACOSH, 1.1, 4), ("arctanh", K.ATANH, -0.9, 0.9), ("expm1", K.EXPM1, -3, 3),
    ("log2", K.LOG2, 0.1, 5), ("log10", K.LOG10, 0.1, 5), ("sinc", K.SINC, -2.5, 2.5),
]:  # fmt: skip
    case(f"{name}[2,3]", kernel, getattr(tv, name), getattr(anp, name), rand(2, 3, lo=lo, hi=hi))
    case(f"{name}[]", kernel, getattr(tv, name), getattr(anp, name), rand(lo=lo, hi=hi))
case("sinh[large]", K.SINH, tv.sinh, anp.sinh, np.array([-700.0, 30.0, 700.0]), float32=False)
case("expm1[tiny]", K.EXPM1, tv.expm1, anp.expm1, np.array([1e-12, -1e-9, 0.0, -800.0]))
case("arcsin[edge]", K.ASIN, tv.arcsin, anp.arcsin, np.array([-1.0, 0.0, 1.0]), hvp=False,
     float32=False, note="inf gradient at +-1, as autograd")  # fmt: skip
case("log2[edge]", K.LOG2, tv.log2, anp.log2, np.array([0.0, 1.0, np.inf, 8.0]), hvp=False)
case("sinc[0]", K.SINC, tv.sinc, anp.sinc, np.array([0.0, 0.5, -1.0]), hvp=False,
     note="sinc'(0) = 0: tapeviz returns it; autograd's formula gives 0/0 = nan there",
     expect=lambda w, x: (w * np.where(x == 0, 0.0, (np.cos(np.pi * x) - np.sinc(x))
                                           / np.where(x == 0, 1.0, x)),))  # fmt: skip
for name, kernel in [("floor", K.FLOOR), ("ceil", K.CEIL), ("round", K.ROUND)]:
    case(f"{name}[2,3]", kernel, getattr(tv, name), getattr(anp, name), rand(2, 3) * 3,
         note="piecewise constant: gradient 0 (autograd: no gradient, i.e. 0)")  # fmt: skip
case("round[decimals]", K.ROUND, lambda x: tv.round(x, 2), lambda x: anp.round(x, 2), rand(4))
case("exp2", K.POW, tv.exp2, anp.exp2, rand(2, 3) * 4)
case("fabs", K.ABS, tv.fabs, anp.fabs, rand(5))
case("deg2rad", K.MUL, tv.deg2rad, anp.deg2rad, rand(3) * 90)
case("rad2deg", K.MUL, tv.rad2deg, anp.rad2deg, rand(3))
case("nan_to_num", K.SELECT, tv.nan_to_num, anp.nan_to_num,
     np.array([1.0, np.nan, np.inf, -np.inf, -2.0]), hvp=False, float32=False,
     note="float32 is left out: infinities become the run dtype's largest value, and the "
     "oracle runs in float64")  # fmt: skip
case("nan_to_num[values]", K.SELECT, lambda x: tv.nan_to_num(x, nan=1.5, posinf=9.0),
     lambda x: anp.where(anp.isnan(x), 1.5, anp.where(x == np.inf, 9.0, x)),
     np.array([np.nan, np.inf, 3.0]), note="autograd's nan_to_num takes no nan=/posinf=")  # fmt: skip

# --- elementwise, binary (broadcasting) ----------------------------------------------------
for name, kernel, (la, ha), (lb, hb) in [
    ("arctan2", K.ATAN2, (-2, 2), (-2, 2)), ("logaddexp", K.LOG_ADD_EXP, (-3, 3), (-3, 3)),
    ("logaddexp2", K.LOG_ADD_EXP2, (-3, 3), (-3, 3)), ("hypot", K.HYPOT, (-2, 2), (-2, 2)),
    ("mod", K.MOD, (-5, 5), (0.7, 2)), ("remainder", K.MOD, (-5, 5), (-2, -0.7)),
    ("fmax", K.SELECT, (-2, 2), (-2, 2)), ("fmin", K.SELECT, (-2, 2), (-2, 2)),
]:  # fmt: skip
    case(f"{name}[2,3][3]", kernel, getattr(tv, name), getattr(anp, name),
         rand(2, 3, lo=la, hi=ha), rand(3, lo=lb, hi=hb), argnums=(0, 1))  # fmt: skip
case("logaddexp[inf]", K.LOG_ADD_EXP, tv.logaddexp, anp.logaddexp,
     np.array([-np.inf, 800.0, 1.0]), np.array([0.5, 799.0, -np.inf]), argnums=(0, 1), hvp=False)  # fmt: skip
case("fmax[nan]", K.SELECT, tv.fmax, anp.fmax, np.array([np.nan, 1.0, 2.0]),
     np.array([0.5, np.nan, -1.0]), argnums=(0, 1), hvp=False)  # fmt: skip
case("floor_divide[2,3][3]", K.FLOOR_DIV, tv.floor_divide, anp.floor_divide, rand(2, 3) * 5,
     rand(3, lo=0.5, hi=2), argnums=(0, 1),
     note="piecewise constant: gradient 0 (autograd: no gradient, i.e. 0; PyTorch: none)")  # fmt: skip
case("floor_divide[op]", K.FLOOR_DIV, lambda a, b: a // b, anp.floor_divide, rand(4) * 5,
     rand(4, lo=-2, hi=-0.5), argnums=(0, 1))  # fmt: skip
case("mod[op]", K.MOD, lambda a, b: a % b, lambda a, b: a % b, rand(4) * 5, rand(4, lo=0.5, hi=2),
     argnums=(0, 1))  # fmt: skip

# --- shape and order ------------------------------------------------------------------------
x23, x234 = rand(2, 3), rand(2, 3, 4)
_I4 = np.arange(4)
for name, kernel in [
    ("ravel", K.RESHAPE), ("fliplr", K.SLICE), ("flipud", K.SLICE),
    ("rot90", K.TRANSPOSE), ("atleast_3d", K.RESHAPE), ("diff", K.SUB), ("cumsum", K.CUMSUM),
]:  # fmt: skip
    case(name, kernel, getattr(tv, name), getattr(anp, name), x23)
# autograd has no flip gradient, and sorts/partitions 1-D only: indexing and 1-D inputs
case("flip", K.SLICE, tv.flip, lambda x: x[::-1, ::-1], x23)
case("flip[axis]", K.SLICE, lambda x: tv.flip(x, 1), lambda x: x[:, ::-1], x23)
case("sort", K.SLICE, tv.sort, anp.sort, rand(7))
case("cumsum[axis]", K.CUMSUM, lambda x: tv.cumsum(x, 1), lambda x: anp.cumsum(x, 1), x234)
case("repeat", K.SLICE, lambda x: tv.repeat(x, 2, 1), lambda x: anp.repeat(x, 2, 1), x23)
case("roll", K.CONCAT, lambda x: tv.roll(x, 2, 2), lambda x: anp.roll(x, 2, 2), x234)
case("roll[flat]", K.CONCAT, lambda x: tv.roll(x, -4), lambda x: anp.roll(x, -4), x234)
case("rot90[k3]", K.TRANSPOSE, lambda x: tv.rot90(x, 3, (1, 2)),
     lambda x: anp.swapaxes(x, 1, 2)[:, :, ::-1], x234, note="autograd's rot90 has no axes")  # fmt: skip
case("swapaxes", K.TRANSPOSE, lambda x: tv.swapaxes(x, 0, 2), lambda x: anp.swapaxes(x, 0, 2), x234)
case(
    "moveaxis", K.TRANSPOSE, lambda x: tv.moveaxis(x, 0, -1), lambda x: anp.moveaxis(x, 0, -1), x234
)
case("sort[ties]", K.SLICE, lambda x: tv.sort(x, 0), lambda x: anp.sort(x, kind="stable"),
     np.array([1.0, 2.0, 1.0, 0.0, 1.0, 2.0]))  # fmt: skip
case("partition", K.SLICE, lambda x: tv.partition(x, 2), lambda x: anp.partition(x, 2), rand(6))
case("diff[n2]", K.SUB, lambda x: tv.diff(x, 2, 0), lambda x: anp.diff(x, 2, 0), rand(5, 3))
case("tile[short reps]", K.TILE, lambda x: tv.tile(x, 2), lambda x: anp.tile(x, 2), x23,
     note="autograd's tile gradient aligns short reps with the leading axes (numpy pads them "
     "in front): its gradient is wrong here; the exact one sums the two copies",
     expect=lambda w, x: (w.reshape(2, 2, 3).sum(1),))  # fmt: skip
case(
    "tile[long reps]",
    K.TILE,
    lambda x: tv.tile(x, (2, 1, 3)),
    lambda x: anp.tile(x, (2, 1, 3)),
    x23,
)
case("var[ddof]", K.SUM, lambda x: tv.var(x, 1, ddof=1), lambda x: anp.var(x, 1, ddof=1), x234)
case("std[ddof]", K.SUM, lambda x: tv.std(x, 0, ddof=1), lambda x: anp.std(x, 0, ddof=1), x234)
case("array_split", K.SPLIT,
     lambda x: tv.concat([p * (i + 1.0) for i, p in enumerate(tv.array_split(x, 3, 1))], 1),
     lambda x: anp.concatenate([p * (i + 1.0) for i, p in enumerate(anp.array_split(x, 3, 1))], 1),
     rand(2, 7))  # fmt: skip
case(
    "hsplit",
    K.SPLIT,
    lambda x: tv.hsplit(x, 2)[1] * 2.0,
    lambda x: anp.hsplit(x, 2)[1] * 2.0,
    rand(3, 4),
)
case("vsplit", K.SLICE, lambda x: tv.vsplit(x, [1])[1], lambda x: anp.vsplit(x, [1])[1], rand(3, 4))
case("dsplit", K.SPLIT, lambda x: tv.dsplit(x, 2)[0], lambda x: anp.dsplit(x, 2)[0], x234)


def _cumprod_grad(w, x):
    """d sum(w * cumprod(x)) / dx, exact by products (valid with zeros), last axis."""
    g = np.zeros_like(x)
    for i in range(x.shape[-1]):
        for j in range(i, x.shape[-1]):
            others = np.delete(x[..., : j + 1], i, axis=-1)
            g[..., i] += w[..., j] * np.prod(others, axis=-1)
    return (g,)


def _ag_cumprod(x):
    return anp.stack([anp.prod(x[..., : j + 1], -1) for j in range(x.shape[-1])], -1)


case("cumprod", K.CUMPROD, lambda x: tv.cumprod(x, -1), _ag_cumprod, rand(2, 4, lo=0.3, hi=2))
case("cumprod[zeros]", K.CUMPROD, lambda x: tv.cumprod(x, -1), _ag_cumprod,
     np.array([[0.5, 0.0, 2.0, 3.0], [0.0, 1.5, 0.0, 2.0]]), hvp=False,
     note="autograd's prod gradient divides by x (nan at zeros); exact products instead",
     expect=_cumprod_grad)  # fmt: skip

# --- edge shapes: empty, size 1 ------------------------------------------------------------
case("sinh[empty]", K.SINH, tv.sinh, anp.sinh, rand(0, 3))
case("arctan2[size1]", K.ATAN2, tv.arctan2, anp.arctan2, rand(1), rand(2, 1), argnums=(0, 1))
case("cumsum[empty]", K.CUMSUM, lambda x: tv.cumsum(x, 0), lambda x: anp.cumsum(x, 0), rand(0, 2))
case("cumprod[size1]", K.CUMPROD, tv.cumprod, _ag_cumprod, rand(1))
