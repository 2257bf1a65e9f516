"""Seeded generation of fuzz programs: ops, operands of every kind, dtypes, shapes and
special points. Each candidate statement is evaluated with its numpy mirror as it is drawn
(so shapes always fit and every intermediate value is known); one numpy refuses is redrawn.
"""

from __future__ import annotations

import warnings

import numpy as np
from fuzz_mirrors import COMMON, NUMPY
from fuzz_ops import Op
from fuzz_program import Const, Leaf, Program, Stmt, np_operand

NAN, INF = float("nan"), float("inf")
# value domains: (low, high) of random values, and the special points of the domain
DOMAINS = {
    "any": ((-2.0, 2.0), [0.0, -0.0, 1.0, -1.0, 0.5, INF, -INF, NAN]),
    "pos": ((0.2, 3.0), [0.0, 1.0, INF, NAN, 1e-300]),
    "unit": ((-0.9, 0.9), [-1.0, 1.0, 0.0, NAN]),
    "gt1": ((1.1, 3.0), [1.0, INF, NAN]),
    "gtm1": ((-0.9, 2.0), [-1.0, 0.0, INF]),
    "nonzero": ((0.3, 2.0), [1.0, -1.0, 0.0, INF]),
    "prob": ((0.05, 0.95), [0.0, 1.0, 0.5]),
}
SHAPES = [(), (1,), (3,), (2, 3), (1, 3), (3, 1), (0,), (0, 3), (2, 1, 3), (2, 2)]
SCALARS = [2.0, -1.5, 0.5, 1.0, 0.0, 3, -2, 1, True]
SPECIAL_SCALARS = [NAN, INF, -INF, -0.0]
FLOATS = ("float64", "float32", "float16")
TARGETS = ("labels", "probs")  # the rhs rules of a loss's targets
# The derivative of |x| is sign(x); at x = NaN numpy's sign (so HIPS autograd and JAX, and
# tapeviz) gives NaN, PyTorch's sgn gives 0 (its abs backward is grad * sgn(x)). Programs
# where abs sees a NaN are tagged; their NaN-against-a-number derivatives are that convention.
NAN_SIGN = ("abs", "fabs")
# Where tapeviz computes the exact derivative and PyTorch's formula gives 0 * inf = NaN, at a
# zero, an infinity or a NaN of the operand (each checked against the exact value in
# tests/core): prod and cumprod take the product of the others without dividing by x
# (PyTorch: prod / x = inf / inf); sinc's Taylor series at 0; logaddexp at -inf (the limit
# of the softmax weights); std at zero spread (PyTorch's own reverse-mode subgradient, 0,
# which its forward mode does not follow). Programs where such an op sees a non-finite value
# or a zero (std: gives a zero) are tagged: a tapeviz derivative (a number or inf) against the
# oracle's NaN is that rule.
EXACT_LIMIT = ("prod", "cumprod", "sinc", "logaddexp", "logaddexp2", "std")


def _at_a_limit(name: str, operands: list, result) -> bool:
    """Whether an ``EXACT_LIMIT`` op is at one of its special points here."""
    if name == "std":
        return bool((np.asarray(result) == 0).any())
    return any(((v == 0) | ~np.isfinite(v)).any() for v in map(np.asarray, operands)
               if v.dtype.kind in "fiub")  # fmt: skip


_NS: dict = {}
exec(COMMON + NUMPY, _NS)  # noqa: S102 - the numpy mirror's own prelude


class Refused(Exception):
    """numpy refuses the candidate statement (or it is not worth running): draw another."""


def values(rng, shape, dtype, domain, special) -> np.ndarray:
    """Random values of ``domain``; with ``special``, some become special points or ties."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-3, 4, shape).astype(dtype)
    (lo, hi), specials = DOMAINS[domain]
    x = rng.uniform(lo, hi, shape)
    if domain == "nonzero":
        x = x * np.where(rng.random(shape) < 0.5, -1, 1)
    if special and x.size:
        flat = x.reshape(-1)
        for i in range(flat.size):
            if rng.random() < 0.35:
                flat[i] = specials[int(rng.integers(len(specials)))]
        if flat.size > 1 and rng.random() < 0.5:  # a tie
            flat[int(rng.integers(flat.size))] = flat[int(rng.integers(flat.size))]
    return np.asarray(x.astype(dtype))


def first_shape(family: str, rng) -> tuple:
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if family == "any":
        return SHAPES[r(0, len(SHAPES) - 1)]
    if family == "nd1":
        return SHAPES[r(1, len(SHAPES) - 1)]
    if family == "matrix":
        return (r(1, 3), r(1, 3))
    if family == "square":
        n = r(1, 3)
        return (n, n) if rng.random() < 0.75 else (2, n, n)
    if family == "vec":
        return (r(1, 3),)
    if family == "vec3":
        return (3,) if rng.random() < 0.6 else (2, 3)
    if family == "nhwc":
        return (r(1, 2), r(3, 4), r(3, 4), r(1, 2))
    if family == "dense_in":
        return (r(1, 3), 4)
    raise ValueError(family)


def accepts(family: str, shape: tuple) -> bool:
    nd = len(shape)
    return {
        "any": True,
        "nd1": nd >= 1,
        "matrix": nd == 2 and 0 not in shape,
        "square": nd in (2, 3) and shape[-1] == shape[-2] > 0,
        "vec": nd == 1 and shape[0] > 0,
        "vec3": nd in (1, 2) and shape[-1] == 3,
        "nhwc": nd == 4 and shape[1] >= 2 and shape[2] >= 2,
        "dense_in": nd == 2 and shape[1] == 4,
    }[family]


def rhs_shape(rule: str, first: tuple, rng) -> tuple:
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    if rule in ("bcast", "where"):
        options = [first, first[1:], (), tuple(1 if rng.random() < 0.5 else d for d in first)]
        if first and first[-1] == 1:
            options.append((*first[:-1], 3))
        return options[r(0, len(options) - 1)]
    if rule in ("same", "probs", "labels"):
        return first
    if rule == "matmul":
        k = first[-1]
        return (k,) if rng.random() < 0.3 else (k, r(1, 3))
    if rule == "any":
        return SHAPES[r(1, 5)]
    if rule == "matrix":
        return (r(1, 2), r(1, 3))
    if rule == "solve":
        return first[:-1] if rng.random() < 0.4 else (*first[:-1], r(1, 2))
    if rule == "filters":
        return (r(1, min(first[1], 3)), r(1, min(first[2], 3)), first[3], r(1, 2))
    raise ValueError(rule)


def _weak(x, dtypes) -> np.dtype | None:
    """tapeviz's dtype when Python number ``x`` meets tensors of ``dtypes`` (core/ops/arguments.py
    ``_weak_dtype`` and ``binary_args``: a float with int/bool tensors gives float32, an int
    with bool tensors int32; JAX's weak typing). None where numpy's own NEP 50 rule agrees."""
    if any(d.kind == "f" for d in dtypes):
        return None
    if isinstance(x, float):
        return np.dtype(np.float32)
    if isinstance(x, int) and not isinstance(x, bool) and all(d.kind == "b" for d in dtypes):
        return np.dtype(np.int32)
    return None


def expected_dtype(op: Op, raw: np.dtype, operand_dtypes: list, scalars: list,
                   form: str = "") -> np.dtype:  # fmt: skip
    """The result dtype tapeviz documents: numpy's, except the rules cited here. A numpy
    function called on tensors (``np.multiply(x, 1.5)``) gives numpy's dtype: the weak
    Python-number rule is tapeviz's own ops' (core/ops/numpy_dispatch.py ``_integer_call``)."""
    if form.startswith("np."):
        return raw
    if op.group == "elementwise" and op.nargs >= 2 and raw.kind not in "b":
        for x in scalars:
            weak = _weak(x, operand_dtypes)
            if weak is not None:
                return weak if raw.kind == "f" or weak.kind != "f" else raw
        if op.name == "div" and all(d.kind != "f" for d in operand_dtypes):
            return np.dtype(np.float32)  # core/ops/elementwise.py div: "(float32)"
    return raw


class Generator:
    """Draws programs from an op list with a profile's probabilities (``fuzz_run.Profile``)."""

    def __init__(self, ops: list[Op], profile):
        self.ops, self.p = ops, profile

    def program(self, seed: int) -> Program:
        rng = np.random.default_rng(seed)
        prog = Program(seed)
        prog.values = {}
        self.rng, self.prog = rng, prog
        self.special = rng.random() < self.p.special
        for _ in range(int(rng.integers(1, self.p.max_stmts + 1))):
            for _attempt in range(40):
                op = self.ops[int(rng.integers(len(self.ops)))]
                try:
                    self._statement(op)
                    break
                except Refused:
                    continue
        return prog

    # --- operands ---------------------------------------------------------------------------
    def _new_leaf(self, shape, domain, float_only, diff_ok=True, special=None) -> str:
        rng, p = self.rng, self.p
        kinds = list(p.dtypes)
        dtype = kinds[int(rng.choice(len(kinds), p=list(p.dtypes.values())))]
        if float_only and dtype not in FLOATS:
            dtype = "float64"
        v = values(rng, shape, dtype, domain, self.special if special is None else special)
        name = f"x{len(self.prog.leaves)}"
        kind = "variable" if rng.random() < p.variables else "tensor"
        self.prog.leaves.append(Leaf(name, v, kind, diff_ok and v.dtype.kind == "f"))
        self.prog.values[name] = v
        return name

    def _pick_value(self, family, domain, float_only, shape=None) -> str:
        ok = [n for n, v in self.prog.values.items()
              if (accepts(family, v.shape) if shape is None else v.shape == shape)
              and (v.dtype.kind == "f" or not float_only)]  # fmt: skip
        if ok and self.rng.random() < self.p.chain:
            return ok[-1] if self.rng.random() < 0.7 else ok[int(self.rng.integers(len(ok)))]
        return self._new_leaf(first_shape(family, self.rng) if shape is None else shape, domain,
                              float_only)  # fmt: skip

    def _const(self, kind, shape, domain, op: Op) -> Const:
        rng = self.rng
        if kind == "scalar":
            pool = SCALARS + (SPECIAL_SCALARS if self.special else [])
            return Const("scalar", pool[int(rng.integers(len(pool)))])
        dtype = (
            "float64"
            if op.rhs in ("labels", "probs", "filters")
            else str(
                rng.choice(
                    ["float64", "float32", "int32", "bool"] if not op.float_only else ["float64"]
                )
            )
        )
        # labels are numbers in [0, 1] (bce checks) or a distribution (softmax_ce): finite
        v = values(rng, shape, dtype, domain, self.special and op.rhs not in TARGETS)
        if kind in ("list", "tuple") and v.ndim == 0:  # a 0-d list is a Python number
            return Const("scalar", v.item())
        if kind in ("list", "tuple"):
            v = v.astype({"f": np.float32, "i": np.int32, "b": np.bool_}[v.dtype.kind])
        return Const(kind, v)

    def _operand(self, op: Op, i: int, first_shape_: tuple):
        rng = self.rng
        domain = op.domains[i] if i < len(op.domains) else "any"
        if op.rhs == "where" and i == 2:
            return Const("array", rng.random(rhs_shape("where", first_shape_, rng)) < 0.5)
        shape = rhs_shape(op.rhs, first_shape_, rng)
        if op.rhs in TARGETS:
            domain = "prob"
        kind = str(rng.choice(op.consts))
        if kind == "list" and rng.random() < 0.3:
            kind = "tuple"
        if kind == "scalar" and op.rhs not in ("bcast", "where"):
            kind = "value"
        if kind == "value" and op.rhs in TARGETS:  # a fresh leaf of targets (see _const)
            return self._new_leaf(shape, "prob", True, special=False)
        if kind == "value":
            return self._pick_value("any", domain, op.float_only, shape)
        return self._const(kind, shape, domain, op)

    # --- one statement ------------------------------------------------------------------------
    def _statement(self, op: Op) -> None:
        rng = self.rng
        a = self._pick_value(op.shape, op.domains[0], op.float_only)
        first = self.prog.values[a].shape
        args = [a] + [self._operand(op, i, first) for i in range(1, op.nargs)]
        if op.nargs == 2 and op.swap and not isinstance(args[1], str) and rng.random() < 0.4:
            args.reverse()  # the constant first: `2.0 - x`, `np.add(arr, x)`
        if op.group == "linalg" and not all(np.isfinite(self._value(x)).all() for x in args):
            # LAPACK leaves its results on NaN/inf input unspecified (numpy and PyTorch differ
            # there, e.g. inv: 0 against NaN): no oracle exists, so none is drawn
            raise Refused("non-finite input to a linear-algebra op")
        if op.name in NAN_SIGN and any(np.isnan(self._value(x)).any() for x in args):
            self.prog.tags.add("nan-sign")
        if op.name == "pow" and isinstance(args[1], str) and (self._value(args[0]) == 0).any():
            # 0 ** y is 0 for every y > 0, so its derivatives in y are 0 (tapeviz), where
            # PyTorch's second order gives log(0)^2 * 0 = NaN, and the NaN spreads through
            # every HVP: no oracle; tests/core/oracle_cases_ops.py checks pow at base 0
            raise Refused("a zero base with a differentiable exponent")
        shapes = [self._shape(x) for x in args]
        params = op.params(rng, shapes) if op.params else {}
        form = int(rng.integers(len(op.forms)))
        out = f"v{len(self.prog.leaves) + len(self.prog.stmts)}"
        stmt = Stmt(out, op, form, args, params, np.dtype("float64"))
        raw = self._evaluate(stmt)
        if op.name in EXACT_LIMIT and _at_a_limit(op.name, [self._value(x) for x in args], raw):
            self.prog.tags.add("exact-limit")
        dtypes = [self._dtype(x) for x in args if not (isinstance(x, Const) and x.kind == "scalar")]
        scalars = [x.value for x in args if isinstance(x, Const) and x.kind == "scalar"]
        stmt.dtype = expected_dtype(op, raw.dtype, dtypes, scalars, op.forms[form])
        operands = dtypes[:2] if op.name == "where" else dtypes
        stmt.cdtype = str(np.result_type(*operands)) if operands else ""
        self.prog.stmts.append(stmt)
        self.prog.values[out] = raw.astype(stmt.dtype)

    def _value(self, x):
        return self.prog.values[x] if isinstance(x, str) else np.asarray(x.value)

    def _shape(self, x):
        return self.prog.values[x].shape if isinstance(x, str) else np.shape(x.value)

    def _dtype(self, x) -> np.dtype:
        return self.prog.values[x].dtype if isinstance(x, str) else np.asarray(x.value).dtype

    def _evaluate(self, stmt: Stmt) -> np.ndarray:
        names = dict(zip("abc", (np_operand(x) for x in stmt.args)))
        code = stmt.op.np.format(**names, **stmt.params)
        ns = {**_NS, **self.prog.values}
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                raw = np.asarray(eval(code, ns))  # noqa: S307 - our own template
            except Exception as e:
                raise Refused(str(e)) from None
        if raw.dtype.kind not in "fiub" or raw.size > self.p.max_size:
            raise Refused("not a real array, or too large")
        return raw
